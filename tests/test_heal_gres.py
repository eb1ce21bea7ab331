"""Per-GPU isolation: the gres.conf/slurm.conf edits (gate/gres.py) and the planner's isolate
and restore rows. The file forms follow Slurm's own man pages: gres.conf(5) `Name=gpu
File=/dev/dri/renderD128` lines (one device each; https://slurm.schedmd.com/gres.conf.html) and
slurm.conf(5) `NodeName=... Gres=gpu:4` (https://slurm.schedmd.com/slurm.conf.html)."""

from __future__ import annotations

from pathlib import Path

import pytest

from rocmprov.actions.repair import remedies
from rocmprov.commands._heal_gres import _await, shown_count, slurmd_started
from rocmprov.gate.gres import (
    GresError,
    bdfs,
    change_count,
    isolate_files,
    isolated_list,
    restore_files,
)
from rocmprov.gate.heal import (
    Event,
    HealPolicy,
    Step,
    drop_isolated,
    isolated_now,
    plan_node,
    remedy_table,
)
from rocmprov.gate.policy import DrainPolicy
from rocmprov.gate.slurm import NodeState
from rocmprov.model import Finding, HostReport, Severity
from rocmprov.transport.local import LocalTransport
from tests.test_gate_slurm import SHOW_DRAINED

GPUS = {f"0000:{b:02x}:00.0": f"/dev/dri/renderD{128 + i}" for i, b in enumerate((5, 6, 7, 8))}
GRES = "".join(f"NodeName=gpu01 Name=gpu File={f}\n" for f in GPUS.values())
CONF = (
    "ClusterName=lab\nNodeName=gpu01 CPUs=1 Gres=gpu:4 State=UNKNOWN\nNodeName=gpu02 Gres=gpu:4\n"
)
RAS = Finding("dmesg.gpu.ras", Severity.CRITICAL, "RAS", actual="x", subject="0000:06:00.0")


def test_isolate_then_restore_round_trips() -> None:
    out = isolate_files(
        GRES, "gpu01", ["/dev/dri/renderD129"], {"/dev/dri/renderD129": "0000:06:00.0"}
    )
    live = [ln for ln in out.splitlines() if not ln.startswith("#")]
    assert len(live) == 3 and "renderD129" not in "".join(live)
    assert restore_files(out, ["0000:06:00.0"]) == GRES
    assert restore_files(out, ["0000:07:00.0"]) == out


def test_ranges_and_missing_files_are_refused() -> None:
    ranged = "Name=gpu File=/dev/dri/renderD[128-131]\n"
    with pytest.raises(GresError, match="one File= per line"):
        isolate_files(ranged, "gpu01", ["/dev/dri/renderD129"], {})
    with pytest.raises(GresError, match="no File= line"):
        isolate_files(GRES, "gpu01", ["/dev/dri/renderD140"], {})


def test_slurm_conf_count_moves_only_on_the_nodes_own_line() -> None:
    text, n = change_count(CONF, "gpu01", -1)
    assert n == 3 and "NodeName=gpu01 CPUs=1 Gres=gpu:3 State=UNKNOWN" in text
    assert "NodeName=gpu02 Gres=gpu:4" in text
    typed, n = change_count("NodeName=gpu01 Gres=gpu:mi300x:8,nic:1\n", "gpu01", -2)
    assert n == 6 and "Gres=gpu:mi300x:6,nic:1" in typed
    with pytest.raises(GresError, match="line of its own"):
        change_count("NodeName=gpu[01-16] Gres=gpu:8\n", "gpu03", -1)


def test_scontrol_gres_count_and_lists() -> None:
    # scontrol(1): "Gres=gpu:4(S:0)" is how a node's GRES is shown with sockets
    assert shown_count("   Gres=gpu:4(S:0)\n   NodeAddr=x") == 4
    assert shown_count("Gres=gpu:mi300x:3") == 3 and shown_count("Gres=(null)") is None
    assert bdfs("0000:05:00.0, 0000:06:00.0") == ("0000:05:00.0", "0000:06:00.0")
    # heal waits for a SlurmdStartTime other than the one before its restarts (slurmd 22.05's
    # own output, captured in the lab: tests/test_gate_slurm.py SHOW_DRAINED)
    assert slurmd_started(SHOW_DRAINED) == "2026-12-01T15:47:40"
    assert slurmd_started(SHOW_DRAINED.replace("=2026-12-01T15:47:40", "=None")) is None
    assert slurmd_started("NodeName=x State=UNKNOWN") is None
    assert isolated_list("# comment\n0000:06:00.0\n") == ("0000:06:00.0",)


def plan(node: NodeState, *findings: Finding, isolated=()):
    return plan_node(
        node,
        HostReport("gpu01", findings),
        [],
        HealPolicy(allow_ctld_restart=True),  # the site's consent (test_heal_safety: without)
        remedy_table(remedies()),
        0.0,
        DrainPolicy(),
        ("main",),
        GPUS,
        isolated,
    )


def test_one_bad_gpu_of_four_is_isolated_when_the_node_is_idle() -> None:
    drained = NodeState("gpu01", "IDLE+DRAIN", "rocmprov: dmesg.gpu.ras amdgpu 0000:06:00.0")
    p = plan(drained, RAS)
    assert (p.step, p.gpus) == (Step.ISOLATE, ("0000:06:00.0",))
    busy = NodeState("gpu01", "MIXED+DRAIN", drained.reason)
    assert plan(busy, RAS).step is Step.WAIT
    every = [Finding("dmesg.gpu.ras", Severity.CRITICAL, "RAS", subject=", ".join(GPUS))]
    assert plan(drained, *every).step is Step.ESCALATE
    unknown = Finding("dmesg.gpu.ras", Severity.CRITICAL, "RAS", subject="0000:99:00.0")
    assert plan(drained, unknown).step is Step.ESCALATE


def test_an_isolated_gpu_that_passes_is_put_back_and_still_bad_stays_out() -> None:
    idle = NodeState("gpu01", "IDLE", "")
    p = plan(idle, isolated=("0000:06:00.0",))
    assert (p.step, p.gpus) == (Step.RESTORE, ("0000:06:00.0",))
    assert plan(idle, RAS, isolated=("0000:06:00.0",)).step is Step.LEAVE
    assert plan(NodeState("gpu01", "MIXED", ""), isolated=("0000:06:00.0",)).step is Step.WAIT


def test_isolated_gpus_from_the_journal_and_dropped_findings() -> None:
    journal = [
        Event(1, "gpu01", "isolated", {"gpus": ["0000:06:00.0", "0000:07:00.0"]}),
        Event(2, "gpu01", "restored", {"gpus": ["0000:07:00.0"]}),
    ]
    assert isolated_now(journal) == ("0000:06:00.0",)
    both = Finding("dmesg.gpu.ras", Severity.CRITICAL, "x", subject="0000:06:00.0, 0000:07:00.0")
    assert drop_isolated([RAS, both], ["0000:06:00.0"]) == (both,)


def test_remote_edit_changes_only_the_lines_and_keeps_the_mode(tmp_path) -> None:
    """The edit runs as on a node (through a transport, here this machine's): only the changed
    line travels, the mode stays, a file changed meanwhile is refused."""
    from rocmprov.commands._heal_gres import edit, read
    from rocmprov.transport.local import LocalTransport

    conf = tmp_path / "slurm.conf"
    conf.write_text("AccountingStoragePass=s3cret\n" + CONF)
    conf.chmod(0o640)
    t = LocalTransport()
    before = read(t, str(conf))
    after, n = change_count(before, "gpu01", -1)
    edit(t, str(conf), before, after)
    assert conf.read_text() == after and n == 3 and conf.stat().st_mode & 0o777 == 0o640
    edit(t, str(conf), before, after)  # done already: left as it is
    assert conf.read_text() == after
    conf.write_text(before.replace("gpu01 CPUs=1 Gres=gpu:4", "gpu01 CPUs=1 Gres=gpu:2"))
    with pytest.raises(GresError, match="0 lines match"):
        edit(t, str(conf), before, after)


def test_the_count_alone_is_not_the_end_of_a_gres_change(tmp_path: Path) -> None:
    """heal resumes only after the restarted slurmd registered: slurmctld shows the new count at
    its own restart, while the node is UNKNOWN+DRAIN (Slurm 22.05 in the lab, a slurmd started
    late) or IDLE+DRAIN from the old slurmd. scontrol's text: SHOW_DRAINED, captured in the lab."""
    shown = tmp_path / "show"
    t, cmd, before = LocalTransport(), f"cat {shown}", "2026-12-01T15:47:40"
    three = SHOW_DRAINED.replace("Gres=(null)", "Gres=gpu:3")
    shown.write_text(three.replace("State=IDLE+DRAIN", "State=UNKNOWN+DRAIN"))
    assert _await(t, cmd, "rpv0-h01", 3, None, timeout=1) is False
    shown.write_text(three)  # registered, but by the slurmd that ran before the restart
    assert _await(t, cmd, "rpv0-h01", 3, before, timeout=1) is False
    shown.write_text(
        three.replace(f"SlurmdStartTime={before}", "SlurmdStartTime=2026-12-01T16:00:02")
    )
    assert _await(t, cmd, "rpv0-h01", 3, before, timeout=1) is True
    assert _await(t, cmd, "rpv0-h01", 3, None, timeout=1) is True  # no start time shown before
    with pytest.raises(GresError, match="not gpu:4"):  # the count itself never changed
        _await(t, cmd, "rpv0-h01", 4, None, timeout=1)
