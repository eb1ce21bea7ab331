"""The Slurm health gate's decision table and reason, on real `scontrol show node` text, and the
`rocmprov health` command's usage errors (exit 64) and scontrol failures (exit 3, one line)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rocmprov.gate.slurm import (
    REASON_MAX,
    Action,
    NodeState,
    SlurmError,
    clean,
    decide,
    drain_reason,
    parse_show_node,
    report_from_document,
    update_argv,
)
from rocmprov.model import Finding, HostReport, Severity
from tests.helpers import assert_one_line_error, rocmprov

OK, WARN, UNK, CRIT = Severity.OK, Severity.WARNING, Severity.UNKNOWN, Severity.CRITICAL

# Slurm 22.05 (Debian 12 slurm-wlm), captured from the lab after `rocmprov health` drained it.
SHOW_DRAINED = """\
NodeName=rpv0-h01 Arch=x86_64 CoresPerSocket=1
   CPUAlloc=0 CPUEfctv=1 CPUTot=1 CPULoad=0.55
   AvailableFeatures=(null)
   ActiveFeatures=(null)
   Gres=(null)
   NodeAddr=rpv0-h01 NodeHostName=rpv0-h01 Version=22.05.8
   OS=Linux 6.1.0-27-amd64 #1 SMP PREEMPT_DYNAMIC Debian 6.1.115-1 (2024-11-01)
   RealMemory=1 AllocMem=0 FreeMem=20000 Sockets=1 Boards=1
   State=IDLE+DRAIN ThreadsPerCore=1 TmpDisk=0 Weight=1 Owner=N/A MCS_label=N/A
   Partitions=main
   BootTime=2026-12-01T14:44:00 SlurmdStartTime=2026-12-01T15:47:40
   LastBusyTime=2026-12-01T15:47:41
   CfgTRES=cpu=1,mem=1M,billing=1
   AllocTRES=
   CapWatts=n/a
   CurrentWatts=0 AveWatts=0
   ExtSensorsJoules=n/s ExtSensorsWatts=0 ExtSensorsTemp=n/s
   Reason=rocmprov: pcie.link.width x1<x16 [root@2026-12-01T15:48:14]
"""
SHOW_IDLE = "\n".join(
    line for line in SHOW_DRAINED.splitlines() if not line.strip().startswith("Reason=")
).replace("IDLE+DRAIN", "IDLE")


def report(*findings: Finding, failure: str = "") -> HostReport:
    return HostReport("n1", findings=findings, failure=failure)


def f(check: str, sev: Severity, actual: str = "", expected: str = "") -> Finding:
    return Finding(check, sev, f"{check} is {sev.value}", actual=actual, expected=expected)


IDLE = NodeState("n1", "IDLE")
OURS = NodeState("n1", "IDLE+DRAIN", "rocmprov: pcie.link.width x8<x16")
ADMIN = NodeState("n1", "IDLE+DRAIN", "admin: bad fan")
ALLOC_OURS = NodeState("n1", "MIXED+DRAIN", "rocmprov: gpu.count 7<8")
CRIT_WIDTH = f("pcie.link.width", CRIT, "x8", "x16")


@pytest.mark.parametrize(
    ("findings", "node", "action"),
    [
        ((f("gpu.a", OK),), IDLE, Action.NONE),
        ((f("gpu.a", WARN),), IDLE, Action.NONE),  # a warning never drains
        ((f("gpu.a", UNK),), IDLE, Action.NONE),  # UNKNOWN never drains
        ((CRIT_WIDTH,), IDLE, Action.DRAIN),
        ((CRIT_WIDTH, f("gpu.b", UNK)), IDLE, Action.DRAIN),  # critical outranks unknown
        ((CRIT_WIDTH,), OURS, Action.NONE),  # same reason: nothing to do
        ((f("gpu.count", CRIT, "6", "8"),), OURS, Action.DRAIN),  # new reason: drain again
        ((CRIT_WIDTH,), ADMIN, Action.NONE),  # an admin's drain keeps its reason
        ((f("gpu.a", OK),), OURS, Action.RESUME),
        ((f("gpu.a", WARN),), OURS, Action.RESUME),
        ((f("gpu.a", OK),), ALLOC_OURS, Action.RESUME),
        ((f("gpu.a", UNK),), OURS, Action.NONE),  # cannot see: does not resume either
        ((f("gpu.a", OK),), ADMIN, Action.NONE),  # never resumes a node someone else drained
        ((f("gpu.a", OK),), NodeState("n1", "DOWN", "rocmprov: x"), Action.NONE),  # not drained
        ((f("gpu.a", OK),), NodeState("n1", "IDLE+DRAIN", "Rocmprov: look-alike"), Action.NONE),
        ((f("gpu.a", OK),), NodeState("n1", "IDLE+DRAIN", " rocmprov: spaced"), Action.NONE),
    ],
)
def test_decision_table(findings: tuple[Finding, ...], node: NodeState, action: Action) -> None:
    assert decide(report(*findings), node).action is action


def test_no_audit_and_failed_audit_never_drain_or_resume() -> None:
    assert decide(None, IDLE).action is Action.NONE
    assert decide(None, OURS).action is Action.NONE
    unreachable = report(failure="unreachable")
    assert unreachable.severity is UNK
    assert decide(unreachable, IDLE).action is Action.NONE
    assert decide(unreachable, OURS).action is Action.NONE


def test_drain_reason_names_the_check_actual_and_expected() -> None:
    d = decide(report(CRIT_WIDTH, f("x", OK)), IDLE)
    assert d.reason == "rocmprov: pcie.link.width x8<x16"
    assert drain_reason([f("gpu.count", CRIT, "9", "8")]) == "rocmprov: gpu.count 9>8"
    assert drain_reason([f("driver.kfd", CRIT, "absent", "present")]) == (
        "rocmprov: driver.kfd absent!=present"
    )
    assert drain_reason([f("a.b", CRIT)]) == "rocmprov: a.b a.b is critical"
    assert drain_reason([f("a", OK), f("b", WARN)]) == ""


def test_drain_reason_is_stable_and_counts_the_others() -> None:
    many = [f("z.last", CRIT, "1", "2"), CRIT_WIDTH, f("a.first", CRIT, "0", "1")]
    assert drain_reason(many) == "rocmprov: a.first 0<1 (+2 more)"
    assert drain_reason(list(reversed(many))) == drain_reason(many)


def test_drain_reason_is_one_bounded_line_without_control_characters() -> None:
    hostile = f("pcie.link.width", CRIT, "x8\n\x1b[31mred\r\x00" + "A" * 500, 'x16"\t;rm -rf /')
    reason = drain_reason([hostile] * 3)
    assert reason.startswith("rocmprov: pcie.link.width ")
    assert len(reason) <= REASON_MAX
    assert reason.endswith("(+2 more)")
    assert all(c.isprintable() for c in reason)
    assert '"' not in reason
    argv = update_argv("n1", decide(report(hostile), IDLE))
    assert argv is not None and argv[:4] == ["scontrol", "update", "nodename=n1", "state=drain"]
    assert argv[4].startswith("reason=rocmprov: ") and len(argv) == 5
    assert clean("a\u2028b\x85c") == "a b c"


def test_update_argv_for_resume_and_none() -> None:
    assert update_argv("n1", decide(report(f("gpu.a", OK)), OURS)) == [
        "scontrol",
        "update",
        "nodename=n1",
        "state=resume",
    ]
    assert update_argv("n1", decide(report(f("a", OK)), IDLE)) is None


def test_parse_show_node_real_output() -> None:
    node = parse_show_node(SHOW_DRAINED, "rpv0-h01")
    assert node.state == "IDLE+DRAIN" and node.drained and node.ours
    assert node.reason == "rocmprov: pcie.link.width x1<x16"  # "[root@time]" removed
    idle = parse_show_node(SHOW_IDLE, "rpv0-h01")
    assert (idle.state, idle.reason, idle.drained, idle.ours) == ("IDLE", "", False, False)
    admin = parse_show_node(
        SHOW_DRAINED.replace("rocmprov: pcie.link.width x1<x16", "admin: bad fan"), "rpv0-h01"
    )
    assert admin.drained and not admin.ours and admin.reason == "admin: bad fan"
    with pytest.raises(SlurmError):
        parse_show_node("Node rpv0-h09 not found\n", "rpv0-h09")


def _doc(*findings: dict, status: str = "audited") -> dict:
    return {
        "schema": "rocmprov.audit/1",
        "hosts": [{"host": "n1", "status": status, "findings": list(findings)}],
    }


def test_report_from_an_audit_document() -> None:
    crit = {"check": "pcie.link.width", "severity": "critical", "actual": "x8", "expected": "x16"}
    r = report_from_document(_doc(crit, {"check": "a", "severity": "ok"}))
    assert r.severity is CRIT and drain_reason(r.findings) == "rocmprov: pcie.link.width x8<x16"
    assert report_from_document(_doc(status="unreachable")).severity is UNK
    for bad in (
        [],
        {"schema": "other/1", "hosts": []},
        {"schema": "rocmprov.audit/1", "hosts": []},
        _doc({"check": "a", "severity": "fatal"}),
        _doc({"severity": "ok"}),
    ):
        with pytest.raises(ValueError):
            report_from_document(bad)


def test_health_usage_errors_exit_64_with_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    good = tmp_path / "good.json"
    good.write_text(json.dumps(_doc({"check": "a", "severity": "ok"})))
    for args in (
        ("health",),  # no --slurm
        ("health", "--slurm", "--node", "bad name"),
        ("health", "--slurm", "--node", "-x\n"),
        ("health", "--slurm", "--result", str(bad)),
        ("health", "--slurm", "--result", str(tmp_path / "missing.json")),
        ("health", "--slurm", "--result", str(good), "--bundle", str(tmp_path)),
        ("health", "--slurm", "--result", str(good), "--timeout", "0"),
        ("health", "--slurm", "--bundle", str(tmp_path / "nope")),
        ("health", "--slurm", "--bogus"),
    ):
        run = rocmprov(*args)
        assert run.rc == 64, (args, run.stderr)
        assert_one_line_error(run)


def test_health_without_scontrol_exits_3_with_one_line_and_changes_nothing(
    tmp_path: Path,
) -> None:
    result = tmp_path / "crit.json"
    result.write_text(json.dumps(_doc({"check": "gpu.b", "severity": "critical"})))
    log = tmp_path / "health.log"
    run = rocmprov(
        "health", "--slurm", "--node", "n1", "--result", str(result),
        "--scontrol", str(tmp_path / "no-scontrol"), "--log", str(log),
        "--bundle-dir", str(tmp_path / "bundles"),
    )  # fmt: skip
    assert run.rc == 3
    lines = run.stderr.splitlines()
    assert len(lines) == 1 and "no-scontrol not found" in lines[0], run.stderr
    assert log.read_text().count("\n") == 1
    assert not (tmp_path / "bundles").exists()


def test_a_dry_run_needs_no_scontrol(tmp_path: Path) -> None:
    """A dry run changes nothing, so a missing scontrol is said and the verdict still given."""
    result = tmp_path / "crit.json"
    result.write_text(json.dumps(_doc({"check": "gpu.b", "severity": "critical"})))
    run = rocmprov(
        "health", "--slurm", "--node", "n1", "--result", str(result), "--dry-run",
        "--scontrol", str(tmp_path / "no-scontrol"), "--log", str(tmp_path / "health.log"),
        "--bundle-dir", str(tmp_path / "bundles"),
    )  # fmt: skip
    assert run.rc == 0, run.stderr
    assert "no-scontrol not found" in run.stderr and "action=drain (dry run)" in run.stderr
    assert not (tmp_path / "bundles").exists()


def test_site_runs_the_health_role_only_with_tags_health() -> None:
    import os
    import subprocess
    import sys

    repo = Path(__file__).resolve().parent.parent
    bindir = str(Path(sys.executable).parent)

    def tasks(*tags: str) -> str:
        return subprocess.run(
            [f"{bindir}/ansible-playbook", "-i", "localhost,", "--list-tasks", *tags,
             str(repo / "playbooks/site.yml")],
            capture_output=True, text=True, timeout=120, check=True,
            env={**os.environ, "PATH": f"{bindir}:{os.environ['PATH']}"},
        ).stdout  # fmt: skip

    default = [line for line in tasks().splitlines() if "rocmprov_health :" in line]
    # only Ansible's own argument check of the role (tagged always), no task of it
    assert all("Validating arguments against arg spec" in line for line in default), default
    assert "rocmprov_health : Set the HealthCheck lines in slurm.conf" in tasks("--tags", "health")
