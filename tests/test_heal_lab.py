"""rocmprov heal against real Slurm (Debian 12's slurmctld + slurmd + munge in one lab host, as
in test_gate_slurm_lab.py): the gate drains the node from a real audit of it, then `rocmprov
heal` runs from this machine as from a controller (the audit and the fix over SSH, scontrol on
the Slurm host over SSH) and the node's state is read back from slurmctld."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.lab import Lab
from tests.test_gate_slurm_lab import GATE, PACKAGES, RAS_LINE, Node, slurm_conf

pytestmark = pytest.mark.lab

REPO = Path(__file__).resolve().parent.parent
USERS = ["-e", "rocmprov_gpu_users=admin"]
# the lab hosts have no GPU (gpu.amd.present is CRITICAL there): the kernel-GPU family drains,
# as in test_gate_slurm_lab.py's live test
LAB_DRAIN = ("dmesg.*",)
HEAL_DRAIN = ("--drain", "dmesg.*")
RESTORING = "rocmprov: gres.restore"  # the drain while GPUs are put back
CTLD = ("--allow-slurmctld-restart",)  # the site's consent to per-GPU isolation


@pytest.fixture(scope="module")
def node(lab: Lab) -> Iterator[Node]:
    """One lab host running slurmctld + slurmd for itself, IDLE, with rocmprov's source in it
    (for the gate) and the GPU user `admin` in render and video."""
    host = lab.reset(lab.hosts[-1])
    n = Node(lab, host)
    n.install(PACKAGES)
    n.configure_slurm(slurm_conf(n, [n]))
    n.sh("systemctl", "restart", "munge")
    n.sh("systemctl", "restart", "slurmctld", "slurmd")
    n.copy_rocmprov()
    n.gpu_user()
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


def _drain_by_the_gate(node: Node, *drain: str, state: str = "IDLE+DRAIN") -> str:
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
    now, reason = node.show()
    assert now == state and reason.startswith("rocmprov: "), (now, reason)
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


def test_a_node_still_running_a_job_waits_then_is_fixed_once_idle(
    node: Node, tmp_path: Path
) -> None:
    """The gate drained a node while a job still runs on it (Slurm's DRAINING, shown as
    ALLOCATED+DRAIN): heal touches nothing there and says `waiting` (exit 1); once the job has
    ended, the next run fixes the node and resumes it."""
    node.sh("gpasswd", "-d", "admin", "render")
    job = node.sh("sbatch", "--parsable", "-w", node.name, "--wrap", "sleep 900").strip()
    try:
        node.wait_state(lambda s: s[0].startswith("ALLOCATED"), "the job to start", timeout=60)
        _drain_by_the_gate(node, "user.groups", state="ALLOCATED+DRAIN")
        first = _heal(node, tmp_path, "--drain", "user.groups", "--format", "json")
        assert first.returncode == 1, first.stderr
        (result,) = json.loads(first.stdout)["nodes"]
        assert result["outcome"] == "waiting", result
        assert "jobs still run" in result["why"], result
        assert "render" not in node.sh("id", "-nG", "admin").split()  # nothing fixed
        state, reason = node.show()
        assert state == "ALLOCATED+DRAIN" and reason.startswith("rocmprov: user.groups"), state
    finally:
        node.sh("scancel", job, check=False)
    node.wait_state(lambda s: s[0] == "IDLE+DRAIN", "the job to end", timeout=60)
    second = _heal(node, tmp_path, "--drain", "user.groups", "--format", "json")
    assert second.returncode == 0, second.stderr
    assert json.loads(second.stdout)["nodes"][0]["outcome"] == "resumed"
    assert "render" in node.sh("id", "-nG", "admin").split()
    node.wait_state(lambda s: s == ("IDLE", ""), "resume by heal")


def test_a_fix_that_does_not_take_is_tried_max_attempts_times_then_escalated(
    node: Node, tmp_path: Path
) -> None:
    """A live process holds /etc/group's lock (shadow-utils' group.lock names a running pid:
    a stuck vipw or useradd), so usermod, and with it the users role, fails. With
    --max-attempts 2: the first run fails and waits, the second escalates; the lock is never
    broken by heal."""
    node.sh("gpasswd", "-d", "admin", "render")
    node.put("/etc/group.lock", "1")  # PID 1 (the host's systemd) is alive: the lock holds
    try:
        _drain_by_the_gate(node, "user.groups")
        heal = ("--drain", "user.groups", "--max-attempts", "2", "--format", "json")
        first = _heal(node, tmp_path, *heal)
        assert first.returncode == 1, first.stderr
        assert json.loads(first.stdout)["nodes"][0]["outcome"] == "failed"
        assert node.show()[1].startswith("rocmprov: user.groups")  # still the gate's
        second = _heal(node, tmp_path, *heal)
        assert second.returncode == 2, second.stderr
        state, reason = node.show()
        assert state == "IDLE+DRAIN", state
        assert reason == "rocmprov-heal: needs a human: user.groups 2 repair attempts failed"
        events = [e["event"] for e in _journal(tmp_path, node)]
        assert events == ["attempt", "failed", "attempt", "failed", "escalated"], events
        assert "render" not in node.sh("id", "-nG", "admin").split()
    finally:
        node.sh("rm", "-f", "/etc/group.lock")
        node.sh("usermod", "-aG", "render", "admin")
        node.sh("scontrol", "update", f"nodename={node.name}", "state=resume")
    node.wait_state(lambda s: s == ("IDLE", ""), "the human's resume")


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
        reason = _drain_by_the_gate(node, *LAB_DRAIN)
        assert reason.startswith("rocmprov: dmesg.gpu.ras"), reason
        cp = _heal(node, tmp_path, *HEAL_DRAIN, "--hook", str(hook), "--hook-arg=--ticket")
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
        again = _heal(node, tmp_path, *HEAL_DRAIN)
        assert again.returncode == 0 and node.show() == (state, reason), again.stderr
    finally:
        node.sh("rm", "-f", "/usr/local/bin/dmesg")
        node.sh("scontrol", "update", f"nodename={node.name}", "state=resume")
    node.wait_state(lambda s: s == ("IDLE", ""), "the human's resume")


# four device files stand in for a node's four GPUs (gres.conf(5): File= names the device
# file Slurm binds a job to; AMD's are /dev/dri/renderD128...); the PCI addresses are stand-ins
# too, one of them the address of the real captured RAS line
GPUS = {
    f"0000:{b}:00.0": f"/dev/dri/renderD{128 + i}" for i, b in enumerate(("db", "dc", "dd", "de"))
}
GRES_CONF = "".join(f"Name=gpu File={f}\n" for f in GPUS.values())
SLOW_SLURMD = "/etc/systemd/system/slurmd.service.d/rocmprov-test-slow.conf"


def test_one_bad_gpu_of_four_is_taken_out_and_put_back(node: Node, tmp_path: Path) -> None:
    """A RAS line names one GPU (0000:dd:00.0) of four: heal takes that one out of Slurm's gres
    (gres.conf line out, Gres=gpu:3, slurmd restarted, reconfigured), resumes the node with
    three, the gate no longer drains for it; once the GPU passes again, heal puts it back."""
    assert "0000:dd:00.0" in RAS_LINE
    conf = slurm_conf(node, [node]).replace(
        f"NodeName={node.name} CPUs=1", f"GresTypes=gpu\nNodeName={node.name} CPUs=1 Gres=gpu:4"
    )
    node.sh("mkdir", "-p", "/dev/dri")
    for i in range(4):
        node.sh("mknod", "-m", "0660", f"/dev/dri/renderD{128 + i}", "c", "226", str(128 + i))
    node.put("/etc/slurm/slurm.conf", conf)
    node.put("/etc/slurm/gres.conf", GRES_CONF)
    node.sh("systemctl", "restart", "slurmctld", "slurmd")
    # a slurmd that registers late, as on a loaded node: after heal's slurmctld restart the node
    # is UNKNOWN+DRAIN until slurmd answers, and heal must wait for it before resuming (a
    # resume judged on the count alone left the node drained)
    node.sh("mkdir", "-p", "/etc/systemd/system/slurmd.service.d")
    node.put(SLOW_SLURMD, "[Service]\nExecStartPre=/bin/sleep 6\n")
    node.sh("systemctl", "daemon-reload")
    gpu_vars = ["-e", json.dumps({"rocmprov_slurm_gpus": GPUS})]
    hook = tmp_path / "hook.sh"
    hook.write_text(f"#!/bin/sh\ncat >> {tmp_path / 'events'}\necho >> {tmp_path / 'events'}\n")
    hook.chmod(0o700)
    try:
        node.wait_state(lambda s: s[0] == "IDLE", "slurmd with 4 GPUs", timeout=60)
        assert "Gres=gpu:4" in node.sh("scontrol", "show", "node", node.name)
        node.put("/usr/local/bin/dmesg", "#!/bin/sh\ncat /root/kmsg\n", 0o755)
        node.put("/root/kmsg", f"[    1.000000] Linux version 6.1.0\n{RAS_LINE}\n")
        assert _drain_by_the_gate(node, *LAB_DRAIN).startswith("rocmprov: dmesg.gpu.ras")
        cp = _heal(
            node, tmp_path, *HEAL_DRAIN, *gpu_vars, *CTLD, "--hook", str(hook), "--format", "json"
        )
        assert cp.returncode == 0, cp.stderr
        assert [n["outcome"] for n in json.loads(cp.stdout)["nodes"]] == ["isolated"], cp.stdout
        _resumed_by_heal(node, "three GPUs")
        shown = node.sh("scontrol", "show", "node", node.name)
        assert "Gres=gpu:3" in shown, shown
        gres = (node.host.root / "etc/slurm/gres.conf").read_text()
        assert "#rocmprov-isolated 0000:dd:00.0 Name=gpu File=/dev/dri/renderD130" in gres
        assert "0000:dd:00.0" in (node.host.root / "etc/rocmprov/isolated-gpus").read_text()
        event = json.loads((tmp_path / "events").read_text().splitlines()[0])
        assert (event["event"], event["gpus"], event["count"]) == ("isolated", ["0000:dd:00.0"], 3)
        metrics = (tmp_path / "metrics" / "rocmprov_heal.prom").read_text()
        assert f'rocmprov_heal_isolated_gpus{{node="{node.name}"}} 1' in metrics
        # the gate, judging a fresh audit that still has the RAS line: no drain for that GPU
        _rocmprov_audit_into(node)
        gate = [*GATE, "--result", "/root/audit.json", "--drain", "dmesg.*"]
        line = node.lab.exec(node.host, gate, check=False)
        assert "action=none" in line.stderr and node.show() == ("IDLE", ""), line.stderr

        # slurmctld's scheduler: a job that needs all four GPUs no longer fits, three do
        # (sbatch --test-only: the allocation is judged, nothing runs)
        def fits(n: int) -> subprocess.CompletedProcess[str]:
            argv = ["sbatch", "--test-only", f"--gres=gpu:{n}", "--wrap", "true"]
            return node.lab.exec(node.host, argv, check=False, timeout=60)

        four, three = fits(4), fits(3)
        assert four.returncode != 0, four.stderr
        assert three.returncode == 0 and "to start at" in three.stderr, three.stderr
        # the GPU passes again (the line is gone, e.g. after the human's reboot): put back
        node.sh("rm", "/usr/local/bin/dmesg")
        cp = _heal(node, tmp_path, *HEAL_DRAIN, *gpu_vars, *CTLD, "--format", "json")
        assert cp.returncode == 0, cp.stderr
        assert [n["outcome"] for n in json.loads(cp.stdout)["nodes"]] == ["restored"], cp.stdout
        # drained (no job may start) while the count changes: slurmctld's update_node logs it
        log = (node.host.root / "var/log/slurm/slurmctld.log").read_text(errors="replace")
        assert f"update_node: node {node.name} reason set to: {RESTORING}" in log
        _resumed_by_heal(node, "four GPUs")
        assert "Gres=gpu:4" in node.sh("scontrol", "show", "node", node.name)
        assert (node.host.root / "etc/slurm/gres.conf").read_text() == GRES_CONF
    finally:
        node.sh("rm", "-f", "/usr/local/bin/dmesg", SLOW_SLURMD)
        node.sh("systemctl", "daemon-reload")
        node.put("/etc/slurm/slurm.conf", slurm_conf(node, [node]))
        node.sh("rm", "-f", "/etc/slurm/gres.conf", "/etc/rocmprov/isolated-gpus")
        node.sh("systemctl", "restart", "slurmctld", "slurmd")
        node.sh("scontrol", "update", f"nodename={node.name}", "state=resume", check=False)
    node.wait_state(lambda s: s[0] == "IDLE", "the plain node again", timeout=60)


def _resumed_by_heal(node: Node, what: str) -> None:
    """heal resumed the node before it returned (no DRAIN, no reason); slurmctld may still show
    NOT_RESPONDING for a moment, from a ping it sent while the restarted slurmd was down."""
    state, reason = node.show()
    assert "DRAIN" not in state and reason == "", (what, state, reason)
    node.wait_state(lambda s: s == ("IDLE", ""), f"IDLE with {what}", timeout=60)


def _rocmprov_audit_into(node: Node) -> None:
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
