"""A second reading of `rocmprov heal` as a cluster admin would: the caps over every node,
slurmctld restarts only with the site's consent, the slurm.conf/gres.conf edits never through a
link, the hook bounded, a damaged journal read without a crash. File forms as in Slurm's man
pages: slurm.conf(5) `NodeName=... Gres=gpu:4` (https://slurm.schedmd.com/slurm.conf.html),
gres.conf(5) `Name=gpu File=/dev/dri/renderD128` (https://slurm.schedmd.com/gres.conf.html)."""

from __future__ import annotations

import stat
import sys
from pathlib import Path

import pytest

from rocmprov.actions.repair import remedies
from rocmprov.commands._heal_gres import edit, read
from rocmprov.gate.gres import GresError, change_count
from rocmprov.gate.heal import (
    Event,
    HealPolicy,
    NodePlan,
    Step,
    isolated_now,
    plan_fleet,
    plan_node,
    remedy_table,
)
from rocmprov.gate.heal_io import StateDir, run_hook
from rocmprov.gate.policy import DrainPolicy
from rocmprov.gate.slurm import NodeState
from rocmprov.model import Finding, HostReport, Severity
from rocmprov.transport.local import LocalTransport

NOW = 1_800_000_000.0
GPUS = {f"0000:{b:02x}:00.0": f"/dev/dri/renderD{128 + i}" for i, b in enumerate((5, 6, 7, 8))}
RAS = Finding("dmesg.gpu.ras", Severity.CRITICAL, "RAS", actual="x", subject="0000:06:00.0")
CONF = "ClusterName=lab\nNodeName=gpu01 CPUs=1 Gres=gpu:4\nNodeName=gpu02 Gres=gpu:4\n"


def _plan(node: NodeState, *findings: Finding, policy: HealPolicy, isolated=()) -> NodePlan:
    return plan_node(
        node,
        HostReport("gpu01", findings),
        [],
        policy,
        remedy_table(remedies()),
        NOW,
        DrainPolicy(),
        ("main",),
        GPUS,
        isolated,
    )


def test_isolation_restarts_slurmctld_only_with_the_sites_consent() -> None:
    """Changing a GPU count restarts slurmctld (cluster-wide): by default the node is handed to
    a human instead; with the opt-in the GPU is isolated; a put-back without it waits."""
    drained = NodeState("gpu01", "IDLE+DRAIN", "rocmprov: dmesg.gpu.ras amdgpu 0000:06:00.0")
    p = _plan(drained, RAS, policy=HealPolicy())
    assert p.step is Step.ESCALATE and "restart" in p.reason, p
    p = _plan(drained, RAS, policy=HealPolicy(allow_ctld_restart=True))
    assert (p.step, p.gpus) == (Step.ISOLATE, ("0000:06:00.0",))
    idle = NodeState("gpu01", "IDLE", "")
    p = _plan(idle, policy=HealPolicy(), isolated=("0000:06:00.0",))
    assert p.step is Step.WAIT and "slurmctld" in p.why
    p = _plan(idle, policy=HealPolicy(allow_ctld_restart=True), isolated=("0000:06:00.0",))
    assert p.step is Step.RESTORE


def test_nodes_in_no_partition_are_capped_too() -> None:
    fixes = [NodePlan(f"gpu{i:02d}", Step.FIX, "fix", tags=("users",)) for i in range(5)]
    out = plan_fleet(fixes, {}, HealPolicy(per_partition=1), NOW)
    assert [p.step for p in out].count(Step.FIX) == 1, out


def test_reboots_of_nodes_back_in_service_still_count(tmp_path: Path) -> None:
    """gpu01 and gpu02 were rebooted and resumed (no longer drained): gpu03's reboot waits."""
    state = StateDir(tmp_path / "heal")
    for n in ("gpu01", "gpu02"):
        state.append(Event(NOW - 60, n, "attempt", {"reboot": True, "tags": ["driver"]}))
        state.append(Event(NOW - 30, n, "resumed"))
    p = NodePlan("gpu03", Step.FIX, "fix", tags=("driver",), reboot=True, partitions=("b",))
    out = plan_fleet([p], state.journals(), HealPolicy(allow_reboot=True, max_reboots=2), NOW)
    assert out[0].step is Step.DEFER, out


def test_a_damaged_journal_line_is_read_without_a_crash(tmp_path: Path) -> None:
    state = StateDir(tmp_path / "heal")
    path = tmp_path / "heal/journal/gpu01.jsonl"
    path.write_text(
        '{"ts": 1, "event": "isolated", "gpus": 5}\n'
        '{"ts": 2, "event": "isolated", "gpus": "0000:05:00.0"}\n'
        '{"ts": 3, "event": "isolated", "gpus": ["0000:06:00.0", 7]}\n'
    )
    assert isolated_now(state.journal("gpu01")) == ("0000:06:00.0",)


def test_a_slurm_conf_that_is_a_link_is_refused_and_left_as_it_is(tmp_path: Path) -> None:
    """A slurm.conf linked to a shared copy (NFS) is the site's: heal never replaces the link
    with a file of its own (the cluster would disagree on the config) nor edits the target."""
    shared = tmp_path / "shared.conf"
    shared.write_text(CONF)
    conf = tmp_path / "slurm.conf"
    conf.symlink_to(shared)
    t = LocalTransport()
    before = read(t, str(conf))
    after, _ = change_count(before, "gpu01", -1)
    with pytest.raises(GresError, match="link"):
        edit(t, str(conf), before, after)
    assert conf.is_symlink() and shared.read_text() == CONF


def test_an_edit_keeps_a_backup_and_is_idempotent(tmp_path: Path) -> None:
    """A file seen already edited (a shared copy edited through another host, a run that
    crashed after the edit) is left as it is; the original is kept beside it (0600)."""
    conf = tmp_path / "slurm.conf"
    conf.write_text(CONF)
    t = LocalTransport()
    after, _ = change_count(CONF, "gpu01", -1)
    edit(t, str(conf), CONF, after)
    backup = tmp_path / "slurm.conf.rocmprov-bak"
    assert backup.read_text() == CONF and stat.S_IMODE(backup.stat().st_mode) == 0o600
    edit(t, str(conf), CONF, after)
    assert conf.read_text() == after


def test_the_hook_is_killed_with_its_children_and_its_output_is_bounded(tmp_path: Path) -> None:
    pidfile = tmp_path / "child.pid"
    code = (
        "import subprocess, sys, time\n"
        "p = subprocess.Popen(['sleep', '300'])\n"
        f"open({str(pidfile)!r}, 'w').write(str(p.pid))\n"
        "sys.stderr.write('x' * 5_000_000); sys.stderr.flush()\n"
        "time.sleep(300)\n"
    )
    res = run_hook([sys.executable, "-c", code], {"node": "n"}, 2)
    assert res.rc is None and "timed out" in res.error
    assert _gone(int(pidfile.read_text()))
    loud = run_hook(
        [sys.executable, "-c", "import sys; sys.stderr.write('y' * 5_000_000); sys.exit(3)"],
        {"node": "n"},
        10,
    )
    assert loud.rc == 3 and len(loud.error) <= 160


def test_the_hook_gets_no_secret_from_our_environment(tmp_path: Path, monkeypatch) -> None:
    out = tmp_path / "env"
    monkeypatch.setenv("ANSIBLE_VAULT_PASSWORD", "s3cret")
    code = f"import os; open({str(out)!r}, 'w').write(repr(sorted(os.environ)))"
    assert run_hook([sys.executable, "-c", code], {"node": "gpu01"}, 10).rc == 0
    names = out.read_text()
    assert "ANSIBLE_VAULT_PASSWORD" not in names and "ROCMPROV_HEAL_NODE" in names
    assert "PATH" in names


def _gone(pid: int) -> bool:
    """The process is gone (or a zombie waiting for init), polled a few seconds at most."""
    import time

    for _ in range(50):
        try:
            with open(f"/proc/{pid}/stat") as fh:
                if fh.read().rsplit(") ", 1)[1].startswith("Z"):
                    return True
        except FileNotFoundError:
            return True
        time.sleep(0.1)
    return False


def test_a_failed_step_puts_the_files_edited_before_it_back(tmp_path: Path) -> None:
    """The isolated-GPUs list cannot be written (its directory is a file): gres.conf and
    slurm.conf, edited before it, are as they were; no daemon is restarted."""
    from rocmprov.commands._heal_gres import GresPaths, change

    gres = "".join(f"Name=gpu File={f}\n" for f in GPUS.values())
    (tmp_path / "gres.conf").write_text(gres)
    (tmp_path / "slurm.conf").write_text(CONF)
    (tmp_path / "etc").write_text("not a directory")
    paths = GresPaths(
        str(tmp_path / "gres.conf"),
        str(tmp_path / "slurm.conf"),
        str(tmp_path / "etc/rocmprov/isolated-gpus"),
    )
    t = LocalTransport()
    with pytest.raises(GresError, match="cannot write"):
        change(t, t, True, "gpu01", GPUS, out=("0000:06:00.0",), paths=paths)
    assert (tmp_path / "gres.conf").read_text() == gres
    assert (tmp_path / "slurm.conf").read_text() == CONF


def test_a_node_deferred_run_after_run_is_journaled_once() -> None:
    """A node over a cap for days would grow its journal by a line every run, until the newest
    MiB read no longer holds its isolation or its attempts: a repeat is not written again."""
    from rocmprov.gate.heal import repeats

    journal = [
        Event(NOW - 9, "gpu01", "attempt"),
        Event(NOW - 5, "gpu01", "deferred", {"why": "cap"}),
    ]
    assert repeats(journal, "deferred", "cap")
    assert not repeats(journal, "deferred", "another cap")
    assert not repeats(journal[:1], "deferred", "cap") and not repeats([], "deferred", "cap")


# A stand-in scontrol keeping one node's State/Reason as slurmctld does (as in
# tests/test_review_gate.py; tests/test_heal_lab.py runs the real one): `update` calls logged.
SCONTROL = """#!{python}
import json, sys
p = {state!r}
n = json.load(open(p))
a = sys.argv[1:]
if a[:2] == ["show", "node"]:
    r = ("   Reason=" + n["reason"] + " [root@2026-12-03T10:00:00]") if n["reason"] else ""
    print("NodeName=gpu01 Arch=x86_64\\n   State=" + n["state"] + " ThreadsPerCore=1\\n" + r)
elif a[:1] == ["update"]:
    open(p + ".calls", "a").write(" ".join(a) + "\\n")
"""


def test_an_escalation_never_overwrites_an_admins_drain(tmp_path: Path) -> None:
    """Between the plan and the escalation the admin drained the node with a reason of their
    own: `state=drain` would replace it. Heal leaves the node (and the reason) alone."""
    import argparse
    import json

    from rocmprov.commands._heal_run import Healer
    from rocmprov.gate.heal_io import Slurm

    node = tmp_path / "node.json"
    node.write_text(json.dumps({"state": "IDLE+DRAIN", "reason": "admin: fan replaced Tue"}))
    scontrol = tmp_path / "scontrol"
    scontrol.write_text(SCONTROL.format(python=sys.executable, state=str(node)))
    scontrol.chmod(0o755)
    args = argparse.Namespace(dry_run=False, hook_timeout=5.0)
    healer = Healer(
        args,
        HealPolicy(),
        DrainPolicy(),
        [],
        {},
        StateDir(tmp_path / "heal"),
        None,  # type: ignore[arg-type]
    )
    healer.slurm = Slurm(LocalTransport(), str(scontrol))
    p = NodePlan("gpu01", Step.ESCALATE, "hardware", checks=("dmesg.gpu.ras",))
    healer._escalate(p, "rocmprov-heal: needs a human: dmesg.gpu.ras", "hardware", 0)
    assert not (tmp_path / "node.json.calls").exists()
    assert [r["outcome"] for r in healer.results] == ["left"], healer.results


def test_a_gres_conf_on_a_shared_file_system_is_refused(tmp_path: Path) -> None:
    """A gres.conf line without NodeName= applies to every node reading the file: on a network
    file system it may be every node's, so heal refuses it (here the types this machine's own
    file systems have stand in for NFS: the mount lookup is the same)."""
    gres = tmp_path / "gres.conf"
    gres.write_text("Name=gpu File=/dev/dri/renderD128\nName=gpu File=/dev/dri/renderD129\n")
    before = gres.read_text()
    after = before.replace(
        "Name=gpu File=/dev/dri/renderD129", "#Name=gpu File=/dev/dri/renderD129"
    )
    mine = tuple(
        row.partition(" - ")[2].split()[0]
        for row in Path("/proc/self/mountinfo").read_text().splitlines()
    )
    with pytest.raises(GresError, match="shared with other nodes"):
        edit(LocalTransport(), str(gres), before, after, refuse_fs=mine)
    assert gres.read_text() == before
    edit(LocalTransport(), str(gres), before, after, refuse_fs=("nfs", "nfs4"))
    assert gres.read_text() == after


def test_a_line_cut_by_a_crash_does_not_swallow_the_next_event(tmp_path: Path) -> None:
    """A run killed mid-write leaves half a line; the next attempt must still be counted (else
    the attempts cap could be passed), the half line alone is lost."""
    state = StateDir(tmp_path / "heal")
    (tmp_path / "heal/journal/gpu01.jsonl").write_text('{"ts": 1, "node": "gpu01", "ev')
    state.append(Event(NOW, "gpu01", "attempt", {"tags": ["users"]}))
    assert [e.event for e in state.journal("gpu01")] == ["attempt"]


@pytest.mark.parametrize("state", ["MIXED+DRAIN", "ALLOCATED+DRAIN", "ALLOCATED+DRAIN+COMPLETING"])
def test_a_node_still_draining_its_jobs_is_not_fixed_nor_rebooted_under_them(state: str) -> None:
    """The gate drains: running jobs go on until they end (DRAINING). A fix (a package, a
    module, a reboot) waits until the node is idle, as a cordon-drain-fix workflow does."""
    groups = Finding("user.groups", Severity.CRITICAL, "x", subject="admin", actual="video")
    driver = Finding("driver.amdgpu", Severity.CRITICAL, "x", actual="not loaded")
    site = DrainPolicy.from_patterns(["driver.*", "user.groups"])
    policy = HealPolicy(allow_reboot=True)
    for f in (groups, driver):
        node = NodeState("gpu01", state, f"rocmprov: {f.check} {f.actual}")
        p = plan_node(
            node, HostReport("gpu01", (f,)), [], policy, remedy_table(remedies()), NOW, site
        )
        assert p.step is Step.WAIT and "jobs" in p.why, p
        idle = NodeState("gpu01", "IDLE+DRAIN", node.reason)
        p = plan_node(
            idle, HostReport("gpu01", (f,)), [], policy, remedy_table(remedies()), NOW, site
        )
        assert p.step is Step.FIX, p


def test_one_slurmctld_restart_per_run() -> None:
    """Each isolation or put-back restarts slurmctld (cluster-wide): nodes of different
    partitions would each restart it in one run; one per run, the others deferred."""
    plans = [
        NodePlan(f"gpu0{i}", step, "gpu", partitions=(f"p{i}",), gpus=("0000:06:00.0",))
        for i, step in enumerate((Step.ISOLATE, Step.RESTORE, Step.ISOLATE))
    ]
    out = plan_fleet(plans, {}, HealPolicy(allow_ctld_restart=True), NOW)
    assert [p.step for p in out] == [Step.ISOLATE, Step.DEFER, Step.DEFER], out
    assert "slurmctld" in out[1].why
