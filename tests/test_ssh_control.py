"""Where apply's ssh connection sockets go (provision/sshcontrol.py), proven with real OpenSSH.

Under a long home directory Ansible's default ~/.ansible/cp leaves no room for the socket's
name: a real ssh client refuses to start its master there, and connects with the directory
rocmprov picks.
"""

# The loopback sshd fixtures come from test_ssh.py; their names reappear as test arguments.
# ruff: noqa: F811
from __future__ import annotations

import os
import shutil
import stat
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_ssh import (  # the loopback sshd fixtures (real OpenSSH servers)
    Keys,
    LoopbackSshd,
    keys,  # noqa: F401  (fixture)
    known,  # noqa: F401  (fixture)
    pytestmark,  # noqa: F401  (skip without root and sshd)
    ssh_base,  # noqa: F401  (fixture)
    sshd,  # noqa: F401  (fixture)
)

from rocmprov.exitcodes import UsageError
from rocmprov.provision import sshcontrol
from rocmprov.provision.sshcontrol import SUN_PATH_MAX, control_dir, control_path, fits


@pytest.fixture
def short() -> Iterator[Path]:
    """A folder with a short path (pytest's tmp_path is itself too long for these sockets)."""
    folder = Path(tempfile.mkdtemp(prefix="r", dir="/tmp"))
    yield folder
    shutil.rmtree(folder)


def long_home(tmp_path: Path) -> Path:
    """A home directory as deep as a cluster's shared one (/gpfs/home/<dept>/<user>)."""
    home = tmp_path / "gpfs-home" / "computational-chemistry-department" / "a-long-user-name"
    home.mkdir(parents=True)
    return home


def socket_path(directory: Path, inventory: Path) -> str:
    """The ControlPath as ansible hands it to ssh (%(directory)s filled, %C left for ssh)."""
    return control_path(inventory) % {"directory": str(directory)}


def ssh_master(path: str, sshd: LoopbackSshd, keys: Keys, known: Path) -> subprocess.Popen[str]:
    argv = [
        "ssh", "-F", "/dev/null", "-p", str(sshd.port), "-i", str(keys.good),
        "-o", f"UserKnownHostsFile={known}", "-o", "StrictHostKeyChecking=yes",
        "-o", "BatchMode=yes", "-o", "ControlMaster=auto", "-o", "ControlPersist=no",
        "-o", f"ControlPath={path}", "root@127.0.0.1", "echo connected; sleep 30",
    ]  # fmt: skip
    return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_the_default_directory_under_a_long_home_breaks_real_ssh(
    tmp_path: Path, sshd: LoopbackSshd, keys: Keys, known: Path
) -> None:
    default = long_home(tmp_path) / ".ansible" / "cp"
    default.mkdir(parents=True, mode=0o700)
    assert not fits(default)
    proc = ssh_master(socket_path(default, tmp_path / "inventory.ini"), sshd, keys, known)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode != 0 and "connected" not in out
    assert "too long" in err


def test_a_long_home_gets_a_directory_where_real_ssh_shares_connections(
    tmp_path: Path, short: Path, sshd: LoopbackSshd, keys: Keys, known: Path
) -> None:
    runtime = short / "run-user"
    runtime.mkdir(mode=0o700)
    chosen = control_dir(long_home(tmp_path), {"XDG_RUNTIME_DIR": str(runtime)}, os.geteuid())
    assert chosen == runtime / "rocmprov-ssh"
    assert stat.S_IMODE(chosen.stat().st_mode) == 0o700
    path = socket_path(chosen, tmp_path / "inventory.ini")
    proc = ssh_master(path, sshd, keys, known)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "connected"
        sockets = [p for p in chosen.iterdir() if stat.S_ISSOCK(p.lstat().st_mode)]
        assert len(sockets) == 1 and len(os.fsencode(str(sockets[0]))) <= SUN_PATH_MAX
        check = subprocess.run(
            ["ssh", "-F", "/dev/null", "-o", f"ControlPath={path}", "-p", str(sshd.port),
             "-O", "check", "root@127.0.0.1"],
            capture_output=True, text=True, timeout=30, check=False,
        )  # fmt: skip
        assert check.returncode == 0, check.stderr  # the master answers on that socket
    finally:
        proc.kill()
        proc.wait(timeout=30)


def test_order_of_preference(tmp_path: Path, short: Path) -> None:
    home = short / "h"
    uid = os.geteuid()
    assert control_dir(home, {}, uid) == home / ".ansible" / "cp"  # short home: Ansible's own
    own = short / "mine"
    assert control_dir(home, {"ANSIBLE_SSH_CONTROL_PATH_DIR": str(own)}, uid) == own
    # no runtime directory and a long home: a private directory of this user in /tmp
    in_tmp = Path("/tmp") / f"rocmprov-ssh-{uid}"
    existed = in_tmp.exists()
    try:
        chosen = control_dir(long_home(tmp_path), {"XDG_RUNTIME_DIR": "relative"}, uid)
        assert chosen == in_tmp and stat.S_IMODE(in_tmp.stat().st_mode) == 0o700
    finally:
        if not existed:
            shutil.rmtree(in_tmp, ignore_errors=True)


def test_a_directory_planted_by_someone_else_is_refused_not_used(
    tmp_path: Path, short: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    trap = tmp_path / "elsewhere"
    trap.mkdir()
    planted = short / "tmp"
    planted.mkdir()
    (planted / "rocmprov-ssh-4242").symlink_to(trap)  # a link another user left in /tmp
    monkeypatch.setattr(sshcontrol, "Path", _tmp_is(planted))
    with pytest.raises(UsageError) as caught:
        control_dir(long_home(tmp_path), {}, 4242)
    message = str(caught.value)
    assert "\n" not in message and "rocmprov-ssh-4242" in message
    assert "ANSIBLE_SSH_CONTROL_PATH_DIR" in message
    assert list(trap.iterdir()) == []  # nothing made through the link


def test_a_path_too_long_everywhere_is_one_clear_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    deep = tmp_path / ("d" * 90)
    monkeypatch.setattr(sshcontrol, "Path", _tmp_is(deep))
    with pytest.raises(UsageError) as caught:
        control_dir(deep, {"XDG_RUNTIME_DIR": str(deep)}, os.geteuid())
    assert str(caught.value).startswith("no directory for ssh's connection sockets: every")
    assert not deep.exists()  # nothing created


def _tmp_is(folder: Path) -> type:
    """Path, except that Path("/tmp") is `folder` (where the test plants its link)."""

    class Planted(type(Path())):  # type: ignore[misc]
        def __new__(cls, *parts: object) -> Path:
            if parts == ("/tmp",):
                return Path(folder)
            return Path(*parts)  # type: ignore[arg-type]

    return Planted
