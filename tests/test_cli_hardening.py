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


def test_hostile_proxyjump_in_ssh_config_is_refused_before_its_lookup(tmp_path: Path) -> None:
    cfg = match_exec_config(tmp_path)
    injected = tmp_path / "injected"
    cfg.write_text(
        f"Host gpu-behind\n  HostName 127.0.0.1\n  ProxyJump 127.0.0.1;touch${{IFS}}{injected};\n"
        + cfg.read_text()
    )
    inv = inventory(tmp_path, "gpu-behind")
    run = rocmprov("audit", str(inv), "--ssh-config", str(cfg), "--known-hosts", "/dev/null")
    assert run.rc == Exit.USAGE, run
    assert_one_line_error(run)
    assert "host 'gpu-behind': ssh_config ProxyJump host " in run.stderr
    assert not injected.exists()
    assert pwned(tmp_path) == ["pwned-127.0.0.1"]  # the valid name was looked up; the hop not


def test_hostile_hostname_in_ssh_config_is_never_connected_to(tmp_path: Path) -> None:
    cfg = tmp_path / "ssh_config"
    cfg.write_text("Host gpu9\n  HostName -oProxyCommand=sh\n")
    run = rocmprov(
        "audit",
        str(inventory(tmp_path, "gpu9")),
        "--ssh-config",
        str(cfg),
        "--known-hosts",
        "/dev/null",
    )
    assert run.rc == Exit.USAGE, run
    assert "host 'gpu9': ssh_config HostName '-oProxyCommand=sh' starts with '-'" in run.stderr


# --- --forks: one check for every command -------------------------------------------------------


@pytest.mark.parametrize("command", ["audit", "collect", "verify", "repair", "apply"])
@pytest.mark.parametrize("value", ["0", "-5", "many", "2.5"])
def test_forks_out_of_range_is_64_for_every_command(
    tmp_path: Path, command: str, value: str
) -> None:
    inv = inventory(tmp_path, "gpu1", ansible_host="127.0.0.1")
    extra = ["-o", str(tmp_path / "out")] if command == "collect" else []
    run = rocmprov(command, str(inv), f"--forks={value}", *extra)
    assert run.rc == Exit.USAGE, run
    assert_one_line_error(run)
    assert "--forks" in run.stderr and "1 or more" in run.stderr


def test_check_forks_is_the_one_rule() -> None:
    from rocmprov.commands._options import check_forks
    from rocmprov.exitcodes import UsageError

    assert check_forks("3") == 3 and check_forks(1) == 1 and check_forks(" 64 ") == 64
    for bad in (0, -5, "0", "", "x", True, 2.5, "\uff11"):
        with pytest.raises(UsageError, match="--forks must be a whole number, 1 or more"):
            check_forks(bad)


def test_apply_options_use_the_same_forks_check() -> None:
    """apply's own check (forks set through a Namespace, not argparse) says the same."""
    import argparse

    from rocmprov.commands import apply
    from rocmprov.exitcodes import UsageError

    parser = argparse.ArgumentParser()
    apply.add_arguments(parser)
    args = parser.parse_args(["h1,"])
    args.forks = 0
    with pytest.raises(UsageError, match="--forks must be a whole number, 1 or more"):
        apply._options(args)


# --- Ctrl-C: the JSON envelope still comes --------------------------------------------------------


def test_ctrl_c_during_a_json_audit_prints_the_envelope(tmp_path: Path) -> None:
    import os
    import signal
    import subprocess
    import sys

    with socket.socket() as listener:  # accepts TCP, never speaks SSH: the audit waits
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        listener.settimeout(60)
        port = listener.getsockname()[1]
        inv = inventory(tmp_path, "hung", ansible_host="127.0.0.1", ansible_port=port)
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "rocmprov",
                "audit",
                str(inv),
                "--format",
                "json",
                "--ssh-config",
                "/dev/null",
                "--known-hosts",
                str(tmp_path / "kh"),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            # as from a terminal: a test run started in the background (`cmd &` without job
            # control) ignores SIGINT, and a child would inherit that and never see Ctrl-C
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )
        try:
            conn, _ = listener.accept()  # the audit is now waiting on this host
            os.kill(proc.pid, signal.SIGINT)
            out, err = proc.communicate(timeout=60)
            conn.close()
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    assert proc.returncode == Exit.INTERRUPTED, (out, err)
    doc = json.loads(out)
    assert doc["schema"] == "rocmprov.audit/1"
    assert doc["exit_code"] == Exit.INTERRUPTED and doc["error"] == "interrupted"
    assert "Traceback" not in err and "interrupted" in err


# --- ssh.hostkey: the fix names the known_hosts entry -------------------------------------------


def test_hostkey_fix_falls_back_to_the_inventory_address() -> None:
    from rocmprov.fleet.fanout import host_report
    from rocmprov.transport.base import FailureClass, HostUnreachable

    changed = HostUnreachable("gpu-alias", FailureClass.HOSTKEY_CHANGED, "key changed")
    for hostvars, name in [
        ({"ansible_host": "10.0.0.9"}, "ssh-keygen -R 10.0.0.9"),
        ({"ansible_host": "10.0.0.9", "ansible_port": 2222}, "ssh-keygen -R '[10.0.0.9]:2222'"),
        ({"ansible_host": "[2001:db8::1]", "ansible_port": "22"}, "ssh-keygen -R 2001:db8::1"),
        ({}, "ssh-keygen -R gpu-alias"),
    ]:
        (finding,) = host_report("gpu-alias", changed, hostvars).findings
        assert finding.check == "ssh.hostkey"
        assert finding.fix.endswith(name), finding.fix
