"""The CLI against hostile or odd input: host names that would run commands through ssh_config's
`Match exec`, --forks out of range, Ctrl-C in JSON mode, and the fix text of a changed host key.

Real ssh_config files, real inventories through ansible-inventory, the real entry point.
"""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from rocmprov.exitcodes import Exit
from tests.helpers import assert_one_line_error, rocmprov


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def match_exec_config(tmp_path: Path) -> Path:
    """An ssh_config whose `Match exec` leaves a file behind for every host it is asked about."""
    cfg = tmp_path / "ssh_config"
    cfg.write_text(f'Match exec "touch {tmp_path}/pwned-%h"\n  ConnectTimeout 2\n')
    return cfg


def inventory(tmp_path: Path, host: str, **hostvars: object) -> Path:
    """A YAML inventory of one host with these variables (JSON strings are valid YAML)."""
    inv = tmp_path / "hosts.yml"
    lines = [f"      {key}: {json.dumps(value)}" for key, value in hostvars.items()]
    inv.write_text("\n".join(["all:", "  hosts:", f"    {host}:", *lines]) + "\n")
    return inv


def pwned(tmp_path: Path) -> list[str]:
    return sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("pwned"))


# --- host names never reach Match exec ---------------------------------------------------------


def test_match_exec_runs_for_a_valid_host(tmp_path: Path) -> None:
    """The control: the config below is live, so its absence later means something."""
    cfg = match_exec_config(tmp_path)
    inv = inventory(tmp_path, "good", ansible_host="127.0.0.1", ansible_port=free_port())
    kh = tmp_path / "known_hosts"
    run = rocmprov("audit", str(inv), "--ssh-config", str(cfg), "--known-hosts", str(kh))
    assert run.rc == Exit.UNKNOWN, run  # nothing listens: refused, UNKNOWN
    assert "pwned-127.0.0.1" in pwned(tmp_path)


HOSTILE = "127.0.0.1;touch {tmp}/injected;"


@pytest.mark.parametrize(
    "argv",
    [
        ["audit", "--format", "json"],
        ["audit"],
        ["collect", "-o", "{tmp}/out"],
        ["verify"],
        ["repair"],
        ["apply", "--check", "--no-audit"],
    ],
    ids=["audit-json", "audit", "collect", "verify", "repair", "apply"],
)
def test_hostile_ansible_host_never_reaches_match_exec(tmp_path: Path, argv: list[str]) -> None:
    cfg = match_exec_config(tmp_path)
    hostile = HOSTILE.format(tmp=tmp_path)
    inv = inventory(tmp_path, "evil", ansible_host=hostile)
    kh = tmp_path / "known_hosts"
    words = [w.format(tmp=tmp_path) for w in argv]
    extra = [] if words[0] == "apply" else ["--ssh-config", str(cfg), "--known-hosts", str(kh)]
    env = {"HOME": str(tmp_path)}  # apply: no ~/.ssh/config of the runner's
    (tmp_path / ".ssh").mkdir()
    (tmp_path / ".ssh" / "config").write_text(cfg.read_text())
    run = rocmprov(words[0], str(inv), *words[1:], *extra, env=env)
    assert run.rc == Exit.USAGE, run
    assert not (tmp_path / "injected").exists()
    assert pwned(tmp_path) == []
    assert not kh.exists()  # nothing contacted, nothing recorded
    assert "'evil'" in run.stderr and "ansible_host" in run.stderr
    assert "shell metacharacter ';'" in run.stderr
    if "--format" in words:
        doc = json.loads(run.stdout)
        assert doc["schema"] == "rocmprov.audit/1" and doc["exit_code"] == Exit.USAGE
        assert "ansible_host" in doc["error"]
    else:
        assert_one_line_error(run)


@pytest.mark.parametrize(
    ("hostvars", "field"),
    [
        ({"ansible_host": "-oProxyCommand=touch x"}, "ansible_host"),
        ({"ansible_host": "gpu01 -v"}, "ansible_host"),
        ({"ansible_user": "root;id"}, "ansible_user"),
        ({"ansible_port": "22;id"}, "ansible_port"),
        ({"ansible_become_user": "$(id)"}, "ansible_become_user"),
    ],
)
def test_other_bad_values_exit_64_naming_alias_and_field(
    tmp_path: Path, hostvars: dict[str, str], field: str
) -> None:
    cfg = match_exec_config(tmp_path)
    inv = inventory(tmp_path, "gpu7", **hostvars)
    run = rocmprov("audit", str(inv), "--ssh-config", str(cfg), "--known-hosts", "/dev/null")
    assert run.rc == Exit.USAGE, run
    assert_one_line_error(run)
    assert "host 'gpu7': " + field in run.stderr
    assert pwned(tmp_path) == []
