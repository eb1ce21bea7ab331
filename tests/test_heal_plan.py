"""The heal planner (gate/heal.py, pure), the journal/lock/hook (gate/heal_io.py) and the
metrics text. Findings here are built like the audit's own (check ids from the checks, the
remedy table the packaged remedies.yaml)."""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rocmprov.actions.repair import remedies
from rocmprov.gate.heal import (
    ESCALATED_PREFIX,
    Event,
    HealPolicy,
    NodePlan,
    Step,
    plan_fleet,
    plan_node,
    reason_check,
    remedy_table,
)
from rocmprov.gate.heal_io import HealStateError, StateDir, parse_partitions, run_hook
from rocmprov.gate.heal_metrics import render
from rocmprov.gate.policy import DrainPolicy
from rocmprov.gate.slurm import NodeState
from rocmprov.model import Finding, HostReport, Severity

TABLE = remedy_table(remedies())
SITE = DrainPolicy.from_patterns(["gpu.*", "pcie.*", "driver.*", "dmesg.*", "user.groups"])
NOW = 1_800_000_000.0
GROUPS = Finding(
    "user.groups",
    Severity.CRITICAL,
    "admin not in render",
    subject="admin",
    actual="admin,video",
    expected="render,video",
)
RAS = Finding("dmesg.gpu.ras", Severity.CRITICAL, "uncorrectable RAS error", actual="1 line")
DRIVER = Finding("driver.amdgpu", Severity.CRITICAL, "amdgpu not loaded", actual="not loaded")


def drained(reason: str, name: str = "gpu01", state: str = "IDLE+DRAIN") -> NodeState:
    return NodeState(name, state, reason)


def report(*findings: Finding, failure: str = "") -> HostReport:
    return HostReport("gpu01", tuple(findings), failure=failure)


def plan(node: NodeState, rep: HostReport | None, journal=(), policy=None) -> NodePlan:
    return plan_node(node, rep, list(journal), policy or HealPolicy(), TABLE, NOW, SITE, ("main",))


def test_a_software_finding_with_a_remedy_is_fixed_by_its_tags() -> None:
    p = plan(drained("rocmprov: user.groups admin,video!=render,video"), report(GROUPS))
    assert (p.step, p.tags, p.reboot, p.verify) == (Step.FIX, ("users",), False, "audit")


def test_the_gates_hardware_reason_escalates_even_when_the_audit_is_clean() -> None:
    """The gate keeps kernel lines for the boot; heal's own audit may not see them again."""
    p = plan(drained("rocmprov: dmesg.gpu.ras amdgpu 0000:05:00.0: uncorrectable"), report())
    assert p.step is Step.ESCALATE
    assert p.reason.startswith(f"{ESCALATED_PREFIX} needs a human: dmesg.gpu.ras")
    assert not p.reason.startswith("rocmprov:")  # the gate treats it as not its own


def test_a_hardware_finding_beside_a_software_one_escalates() -> None:
    p = plan(drained("rocmprov: user.groups x"), report(GROUPS, RAS))
    assert p.step is Step.ESCALATE and "dmesg.gpu.ras" in p.reason and "hardware" in p.reason


def test_a_finding_without_a_remedy_escalates() -> None:
    site = DrainPolicy.from_patterns(["kernel.*"])
    odd = Finding("kernel.version", Severity.CRITICAL, "kernel too old", actual="4.15")
    p = plan_node(
        drained("rocmprov: kernel.version 4.15"), report(odd), [], HealPolicy(), TABLE, NOW, site
    )
    assert p.step is Step.ESCALATE and "no automatic remedy" in p.reason


def test_attempts_in_the_window_are_capped_and_old_ones_expire() -> None:
    node = drained("rocmprov: user.groups x")
    tries = [Event(NOW - 60 * i, "gpu01", "attempt") for i in range(1, 4)]
    assert plan(node, report(GROUPS), tries).step is Step.ESCALATE
    assert "3 repair attempts failed" in plan(node, report(GROUPS), tries).reason
    old = [Event(NOW - 2 * 86400, "gpu01", "attempt") for _ in range(5)]
    assert plan(node, report(GROUPS), old).step is Step.FIX
    flapping = [
        *tries[:2],
        Event(NOW - 30, "gpu01", "resumed"),
        Event(NOW - 20, "gpu01", "attempt"),
    ]
    assert plan(node, report(GROUPS), flapping).step is Step.ESCALATE  # a held fix still counts
    human = [*tries, Event(NOW - 10, "gpu01", "escalated")]  # then a human resumed it
    assert plan(node, report(GROUPS), human).step is Step.FIX


def test_a_fix_that_needs_a_reboot_needs_the_sites_consent() -> None:
    node = drained("rocmprov: driver.amdgpu not loaded")
    p = plan(node, report(DRIVER))
    assert p.step is Step.ESCALATE and "reboot" in p.reason
    p = plan(node, report(DRIVER), policy=HealPolicy(allow_reboot=True))
    assert (p.step, p.reboot, p.verify, p.tags) == (Step.FIX, True, "smoke", ("driver",))


@pytest.mark.parametrize(
    "node",
    [
        NodeState("gpu01", "IDLE", ""),
        NodeState("gpu01", "IDLE+DRAIN", "admin: bad fan"),
        NodeState("gpu01", "IDLE+DRAIN", "rocmprov-heal: needs a human: dmesg.gpu.ras x"),
        NodeState("gpu01", "DOWN+DRAIN", "rocmprov: user.groups x"),
        NodeState("gpu01", "IDLE+DRAIN+MAINTENANCE", "rocmprov: user.groups x"),
    ],
)
def test_nodes_not_drained_by_the_gate_are_left_alone(node: NodeState) -> None:
    assert plan(node, report(GROUPS)).step is Step.LEAVE


def test_unreachable_waits_and_clean_resumes() -> None:
    node = drained("rocmprov: user.groups x")
    assert plan(node, report(failure="timeout")).step is Step.WAIT
    assert plan(node, None).step is Step.WAIT
    assert plan(node, report(Finding("user.groups", Severity.OK, "ok"))).step is Step.RESUME


def fixes(n: int, partitions=("main",), reboot: bool = False) -> list[NodePlan]:
    return [
        NodePlan(f"gpu{i:02}", Step.FIX, "", ("users",), reboot, partitions=partitions)
        for i in range(n)
    ]


def test_per_partition_cap_defers_the_rest_and_escalations_take_no_slot() -> None:
    esc = NodePlan("gpu99", Step.ESCALATE, "hw", reason="x", partitions=("main",))
    out = plan_fleet([esc, *fixes(4)], {}, HealPolicy(per_partition=2), NOW)
    assert [p.step for p in out] == [Step.ESCALATE, Step.FIX, Step.FIX, Step.DEFER, Step.DEFER]


def test_reboot_cap_counts_the_window_of_every_node() -> None:
    journals = {"old": [Event(NOW - 100, "old", "attempt", {"reboot": True})]}
    out = plan_fleet(
        fixes(3, reboot=True),
        journals,
        HealPolicy(per_partition=10, max_reboots=2, allow_reboot=True),
        NOW,
    )
    assert [p.step for p in out] == [Step.FIX, Step.DEFER, Step.DEFER]


@settings(max_examples=200, deadline=None)
@given(
    nodes=st.lists(
        st.tuples(
            st.sampled_from([Step.FIX, Step.RESUME, Step.ESCALATE, Step.WAIT]),
            st.lists(st.sampled_from(["a", "b", "c"]), min_size=1, max_size=3, unique=True),
            st.booleans(),
        ),
        max_size=30,
    ),
    k=st.integers(1, 4),
    reboots=st.integers(0, 3),
)
def test_caps_hold_whatever_fails_at_once(nodes, k: int, reboots: int) -> None:
    plans = [
        NodePlan(f"n{i}", step, "", reboot=rb, partitions=tuple(parts))
        for i, (step, parts, rb) in enumerate(nodes)
    ]
    out = plan_fleet(plans, {}, HealPolicy(per_partition=k, max_reboots=reboots), NOW)
    assert [p.node for p in out] == [p.node for p in plans]
    taken = [p for p in out if p.step in (Step.FIX, Step.RESUME)]
    for part in "abc":
        assert sum(part in p.partitions for p in taken) <= k
    assert sum(p.reboot for p in taken if p.step is Step.FIX) <= reboots
    escalations = [p.node for p in plans if p.step is Step.ESCALATE]
    assert escalations == [p.node for p in out if p.step is Step.ESCALATE]


@given(st.text(max_size=80))
def test_reason_check_only_reads_the_gates_reasons(text: str) -> None:
    got = reason_check(text)
    assert got == "" or (text.startswith("rocmprov:") and got in text and " " not in got)


def test_partitions_from_real_scontrol_output() -> None:
    # Slurm 22.05's `scontrol show node` layout (doc/man/man1/scontrol.1, "show node")
    text = "NodeName=gpu01 Arch=x86_64 CoresPerSocket=1\n   Partitions=main,gpu \n   State=IDLE"
    assert parse_partitions(text) == ("main", "gpu")
    assert parse_partitions("NodeName=x State=IDLE") == ()


def test_journal_is_private_jsonl_and_the_lock_is_exclusive(tmp_path: Path) -> None:
    state = StateDir(tmp_path / "heal")
    state.append(Event(NOW, "gpu01", "attempt", {"tags": ["users"]}))
    state.append(Event(NOW + 1, "gpu01", "resumed"))
    path = tmp_path / "heal/journal/gpu01.jsonl"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE((tmp_path / "heal").stat().st_mode) == 0o700
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    assert [x["event"] for x in lines] == ["attempt", "resumed"] and lines[0]["ts"] == NOW
    assert [e.event for e in state.journal("gpu01")] == ["attempt", "resumed"]
    with pytest.raises(ValueError):
        state.append(Event(NOW, "../etc", "attempt"))
    other = StateDir(tmp_path / "heal")
    with state.locked(), pytest.raises(HealStateError, match="another rocmprov heal"):
        other.locked().__enter__()


def test_journal_is_never_followed_through_a_link(tmp_path: Path) -> None:
    state = StateDir(tmp_path / "heal")
    target = tmp_path / "elsewhere"
    target.write_text("")
    os.symlink(target, tmp_path / "heal/journal/gpu02.jsonl")
    with pytest.raises(OSError):
        state.append(Event(NOW, "gpu02", "attempt"))
    assert target.read_text() == ""


def test_hook_gets_the_event_on_stdin_and_is_bounded(tmp_path: Path) -> None:
    out = tmp_path / "event.json"
    script = tmp_path / "hook.py"
    script.write_text(
        "import os, sys\n"
        f"open({str(out)!r}, 'w').write(os.environ['ROCMPROV_HEAL_NODE'] + sys.stdin.read())\n"
    )
    res = run_hook([sys.executable, str(script)], {"node": "gpu01", "event": "escalated"}, 10)
    assert res.rc == 0 and out.read_text().startswith('gpu01{"event": "escalated"')
    slow = run_hook([sys.executable, "-c", "import time; time.sleep(30)"], {"node": "n"}, 1)
    assert slow.rc is None and "timed out" in slow.error
    missing = run_hook([str(tmp_path / "nope")], {"node": "n"}, 1)
    assert missing.rc is None and "nope" in missing.error


def test_metrics_show_attempts_outcomes_and_escalations() -> None:
    journals = {
        "gpu01": [Event(NOW - 5, "gpu01", "attempt"), Event(NOW - 4, "gpu01", "resumed")],
        "gpu02": [Event(NOW - 3, "gpu02", "escalated")],
    }
    text = render(journals, NOW, 3600)
    assert 'rocmprov_heal_events{node="gpu01",event="attempt"} 1' in text
    assert 'rocmprov_heal_events{node="gpu01",event="resumed"} 1' in text
    assert 'rocmprov_heal_escalated{node="gpu02"} 1' in text
    assert 'rocmprov_heal_escalated{node="gpu01"} 0' in text


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--max-attempts", "0"], "max attempts"),
        (["--window", "5"], "window"),
        (["--per-partition", "0"], "per partition"),
        (["--hook", "relative/hook"], "--hook must be an absolute path"),
        (["--hook-arg=x"], "--hook-arg without --hook"),
        (["--format", "xml"], "unknown format"),
        (["--drain", "GPU; rm"], "not a check id pattern"),
    ],
)
def test_heal_usage_errors_are_one_line_and_exit_64(argv, message, capsys) -> None:
    from rocmprov.cli import main

    assert main(["heal", "inventory.ini", *argv]) == 64
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1, err


def test_a_state_dir_of_another_user_or_others_writable_is_refused(tmp_path, capsys) -> None:
    from rocmprov.cli import main

    shared = tmp_path / "shared"
    shared.mkdir(mode=0o777)
    shared.chmod(0o777)
    code = main(["heal", "inventory.ini", "--state-dir", str(shared)])
    assert code == 3 and "not a private directory" in capsys.readouterr().err
