"""rocmprov heal against real Slurm (Debian 12's slurmctld + slurmd + munge in one lab host, as
in test_gate_slurm_lab.py): the gate drains the node from a real audit of it, then `rocmprov
heal` runs from this machine as from a controller (the audit and the fix over SSH, scontrol on
the Slurm host over SSH) and the node's state is read back from slurmctld."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.lab import Lab
from tests.test_gate_slurm_lab import GATE, PACKAGES, RAS_LINE, SLURM_CONF, Node

pytestmark = pytest.mark.lab

REPO = Path(__file__).resolve().parent.parent
USERS = ["-e", "rocmprov_gpu_users=admin"]


@pytest.fixture(scope="module")
def node(lab: Lab) -> Iterator[Node]:
    """One lab host running slurmctld + slurmd for itself, IDLE, with rocmprov's source in it
    (for the gate) and the GPU user `admin` in render and video."""
    host = lab.reset(lab.hosts[-1])
    n = Node(lab, host)
    install = [
        "env",
        "DEBIAN_FRONTEND=noninteractive",
        "apt-get",
        "install",
        "-y",
        "-q",
        "--no-install-recommends",
        *PACKAGES,
    ]
    if lab.exec(host, install, check=False, timeout=300).returncode != 0:
        n.sh("apt-get", "update", "-q", timeout=120)
        n.sh(*install, timeout=300)
    n.put("/etc/slurm/slurm.conf", SLURM_CONF.format(node=n.name))
    n.sh(
        "install", "-d", "-o", "slurm", "-g", "slurm", "/var/lib/slurm/slurmctld", "/var/log/slurm"
    )
    n.sh("install", "-d", "/var/lib/slurm/slurmd")
    n.sh("systemctl", "restart", "munge")
    n.sh("systemctl", "restart", "slurmctld", "slurmd")
    shutil.copytree(
        REPO / "rocmprov",
        host.root / "opt/rocmprov-src/rocmprov",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    n.sh("groupadd", "-f", "-r", "render")
    n.sh("usermod", "-aG", "render,video", "admin")
    n.wait_state(lambda s: s[0] == "IDLE", "slurmd to register", timeout=60)
    yield n
    lab.reset(host)


def _rocmprov(*args: str, timeout: float = 400) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PATH": f"{REPO / '.venv/bin'}:{os.environ['PATH']}"}
    return subprocess.run(
        [str(REPO / ".venv/bin/python"), "-m", "rocmprov", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        env=env,
    )


def _drain_by_the_gate(node: Node, *drain: str) -> str:
    """A real audit of the node (over SSH) judged by the gate in the node: it drains."""
    audit = _rocmprov(
        "audit",
        str(node.lab.inventory),
        "--limit",
        node.name,
        "--gpu-user",
        "admin",
        "--format",
        "json",
        timeout=120,
    )
    assert audit.stdout.strip().startswith("{"), audit.stderr
    node.put("/root/audit.json", audit.stdout)
    flags = [w for p in drain for w in ("--drain", p)]
    cp = node.lab.exec(node.host, [*GATE, "--result", "/root/audit.json", *flags], check=False)
    assert cp.returncode == 0 and "action=drain" in cp.stderr, cp.stderr
    state, reason = node.show()
    assert state == "IDLE+DRAIN" and reason.startswith("rocmprov: "), (state, reason)
    return reason


def _heal(node: Node, tmp: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return _rocmprov(
        "heal",
        str(node.lab.inventory),
        "--limit",
        node.name,
        "--slurm-host",
        node.name,
        "--state-dir",
        str(tmp / "state"),
        "--metrics-dir",
        str(tmp / "metrics"),
        *USERS,
        *extra,
    )


def _journal(tmp: Path, node: Node) -> list[dict]:
    path = tmp / "state" / "journal" / f"{node.name}.jsonl"
    assert path.stat().st_mode & 0o777 == 0o600
    assert (tmp / "state").stat().st_mode & 0o777 == 0o700
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_a_dropped_group_is_fixed_and_the_node_resumed_without_a_human(
    node: Node, tmp_path: Path
) -> None:
    node.sh("gpasswd", "-d", "admin", "render")
    reason = _drain_by_the_gate(node, "user.groups")
    assert reason.startswith("rocmprov: user.groups"), reason
    cp = _heal(node, tmp_path, "--drain", "user.groups", "--format", "json")
    assert cp.returncode == 0, cp.stderr
    doc = json.loads(cp.stdout)
    assert [(n["node"], n["outcome"]) for n in doc["nodes"]] == [(node.name, "resumed")]
    assert "render" in node.sh("id", "-nG", "admin").split()
    node.wait_state(lambda s: s == ("IDLE", ""), "resume by heal")
    events = [e["event"] for e in _journal(tmp_path, node)]
    assert events == ["attempt", "fixed", "resumed"], events
    metrics = (tmp_path / "metrics" / "rocmprov_heal.prom").read_text()
    assert f'rocmprov_heal_events{{node="{node.name}",event="resumed"}} 1' in metrics
    assert f'rocmprov_heal_escalated{{node="{node.name}"}} 0' in metrics
    again = _heal(node, tmp_path, "--drain", "user.groups")  # a node in service: nothing
    assert again.returncode == 0 and node.show() == ("IDLE", ""), again.stderr


def test_a_hardware_finding_stays_drained_and_escalates(node: Node, tmp_path: Path) -> None:
    """The node's kernel log holds a real MI300X uncorrectable RAS line: no software fixes
    that. Heal hands the node to a human: the reason says so, the hook fires with the event on
    stdin, the metric shows it, and the gate no longer relabels or resumes the node."""
    node.put("/usr/local/bin/dmesg", "#!/bin/sh\ncat /root/kmsg\n", 0o755)
    node.put("/root/kmsg", f"[    1.000000] Linux version 6.1.0\n{RAS_LINE}\n")
    hook_out = tmp_path / "hook.json"
    hook = tmp_path / "hook.sh"
    hook.write_text(f'#!/bin/sh\ncat > {hook_out}\necho "$ROCMPROV_HEAL_NODE" >> {hook_out}.node\n')
    hook.chmod(0o700)
    try:
        reason = _drain_by_the_gate(node)
        assert reason.startswith("rocmprov: dmesg.gpu.ras"), reason
        cp = _heal(node, tmp_path, "--hook", str(hook), "--hook-arg=--ticket")
        assert cp.returncode == 2, cp.stderr
        state, reason = node.show()
        assert state == "IDLE+DRAIN", state
        assert reason.startswith("rocmprov-heal: needs a human: dmesg.gpu.ras"), reason
        event = json.loads(hook_out.read_text())
        assert event["node"] == node.name and event["event"] == "escalated"
        assert event["checks"] == ["dmesg.gpu.ras"]
        assert (tmp_path / "hook.json.node").read_text().strip() == node.name
        metrics = (tmp_path / "metrics" / "rocmprov_heal.prom").read_text()
        assert f'rocmprov_heal_escalated{{node="{node.name}"}} 1' in metrics
        assert [e["event"] for e in _journal(tmp_path, node)] == ["escalated"]
        # the gate leaves a human's node alone, clean or not; heal too
        node.sh("rm", "/usr/local/bin/dmesg")
        line = node.lab.exec(node.host, [*GATE, "--result", "/root/audit.json"], check=False)
        assert "action=none" in line.stderr and node.show() == (state, reason), line.stderr
        again = _heal(node, tmp_path)
        assert again.returncode == 0 and node.show() == (state, reason), again.stderr
    finally:
        node.sh("rm", "-f", "/usr/local/bin/dmesg")
        node.sh("scontrol", "update", f"nodename={node.name}", "state=resume")
    node.wait_state(lambda s: s == ("IDLE", ""), "the human's resume")
