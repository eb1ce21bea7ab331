"""Regressions of the health gate review (../shared/review r01-r03, r08, r11, r12, r14): sticky
kernel findings, one kernel-log state per consumer, kernel-only lines, the drain policy, the
admin's node states, probes under one deadline. The Slurm side is a fake scontrol that keeps
one node's State/Reason the way slurmctld does (tests/test_gate_slurm_lab.py: the real one)."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from rocmprov.collect.cursor import Cursor, advance, load_cursor
from rocmprov.collect.host import PARALLEL, collect_host
from rocmprov.collect.probes import Probe, build_probes
from rocmprov.gate.policy import DrainPolicy
from rocmprov.gate.slurm import Action, NodeState, decide
from rocmprov.model import Finding, HostReport, Severity
from rocmprov.parse.dmesg import parse_dmesg
from rocmprov.transport.local import LocalTransport
from tests.fixtureload import FIXTURES, load
from tests.helpers import rocmprov
from tests.timebounds import HANG_GUARD, processes_naming, within

CRIT, OK, UNK = Severity.CRITICAL, Severity.OK, Severity.UNKNOWN
# source: the fixture's header (github.com/ROCm/ROCm issue: 8x MI300X uncorrectable RAS error)
RAS = load(FIXTURES / "dmesg/mi300x-x8-uncorrectable-ras-error-aca-head.txt").text
RAS_LINE = next(ln for ln in RAS.splitlines() if "uncorrectable hardware error" in ln)
# Captured on this project's review machine (Linux 6.x x86, debug.exception-trace=1) by
# ../shared/review/r14: uid 65534 ran `ud2` from a file it named like a GPU RAS error.
USER_TRAP = (
    "[  713.190978] traps: python3[13038] trap invalid opcode ip:7fe649462000 sp:7ffd4dfbb278 "
    "error:0 in amdgpu uncorrectable hardware error detected[0,7fe649462000+1000]"
)

SCONTROL = """#!{python}
import json, os, sys
p = {state!r}
n = json.load(open(p)) if os.path.exists(p) else {{"state": "IDLE", "reason": ""}}
a = sys.argv[1:]
if a[:2] == ["show", "node"]:
    r = ("   Reason=" + n["reason"] + " [root@2026-12-03T10:00:00]") if n["reason"] else ""
    print("NodeName=gpu01 Arch=x86_64\\n   State=" + n["state"] + " ThreadsPerCore=1\\n" + r)
elif a[:1] == ["update"]:
    kv = dict(x.split("=", 1) for x in a[1:])
    base, *flags = n["state"].split("+")
    if kv["state"] == "drain":
        n = {{"state": "+".join([base] + sorted(set(flags) | {{"DRAIN"}})), "reason": kv["reason"]}}
    elif kv["state"] == "resume":  # Slurm: DRAIN and FAIL cleared, DOWN -> IDLE
        n = {{"state": "IDLE" if base == "DOWN" else base, "reason": ""}}
    json.dump(n, open(p, "w"))
    open(p + ".calls", "a").write(" ".join(a) + "\\n")
"""
# this machine has no AMD GPU: only the kernel-GPU family may drain in these runs
ONLY_KERNEL = ["--no-drain", "gpu.*", "--no-drain", "pcie.*", "--no-drain", "driver.*"]


class Gate:
    """`rocmprov health --slurm` on this machine, its kernel log a file, its node a JSON file."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.bin = tmp / "bin"
        self.bin.mkdir()
        self.kmsg = tmp / "kmsg"
        self.kmsg.write_text("[    1.000000] Linux version 6.8.0\n")
        self.node = tmp / "node.json"
        dmesg = self.bin / "dmesg"
        dmesg.write_text(f"#!/bin/sh\ncat {self.kmsg}\n")
        scontrol = self.bin / "scontrol"
        scontrol.write_text(SCONTROL.format(python=sys.executable, state=str(self.node)))
        for f in (dmesg, scontrol):
            f.chmod(0o755)
        self.env = {
            "PATH": f"{self.bin}:{os.environ['PATH']}",
            "ROCMPROV_STATE_DIR": str(tmp / "state"),
        }

    def set_node(self, state: str, reason: str = "") -> None:
        self.node.write_text(json.dumps({"state": state, "reason": reason}))

    def state(self) -> tuple[str, str]:
        n = json.loads(self.node.read_text()) if self.node.exists() else {"state": "IDLE"}
        return n["state"], n.get("reason", "")

    def run(self, *args: str) -> str:
        r = rocmprov(
            "health", "--slurm", "--node", "gpu01", "--scontrol", str(self.bin / "scontrol"),
            "--bundle-dir", str(self.tmp / "bundles"), *ONLY_KERNEL, *args, env=self.env,
        )  # fmt: skip
        assert r.rc == 0, r.stderr
        return r.stderr

    def metrics(self) -> str:
        out = self.tmp / "rocmprov.prom"
        r = rocmprov(
            "audit", "--local", "--profile", "quick", "--state", "metrics",
            "--format", "prometheus", "--output", str(out), env=self.env,
        )  # fmt: skip
        assert r.rc in (0, 1, 2, 3), r.stderr
        return out.read_text()


@pytest.fixture
def gate(tmp_path: Path) -> Gate:
    return Gate(tmp_path)


# ---- r01: a RAS line keeps the node drained; a dry run moves nothing; a documented clear


def test_ras_line_keeps_the_node_drained_until_cleared(gate: Gate) -> None:
    gate.run()
    assert gate.state() == ("IDLE", "")
    gate.kmsg.write_text(gate.kmsg.read_text() + RAS_LINE + "\n")
    dry = gate.run("--dry-run")
    assert "action=drain (dry run)" in dry and gate.state() == ("IDLE", "")
    gate.run()  # the dry run left the cursor: this run sees the line too
    assert gate.state()[0] == "IDLE+DRAIN"
    assert gate.state()[1].startswith("rocmprov: dmesg.gpu.ras ")
    for _ in range(2):  # later runs: the line is behind the cursor, the finding stays
        assert "action=none" in gate.run() and gate.state()[0] == "IDLE+DRAIN"
    gate.kmsg.write_text("[    9.000000] the ring buffer rotated\n")  # gone from the log
    assert "action=none" in gate.run() and gate.state()[0] == "IDLE+DRAIN"
    cleared = rocmprov("health", "--clear-kernel-findings", env=gate.env)
    assert cleared.rc == 0 and "kernel findings cleared" in cleared.stderr, cleared.stderr
    assert "action=resume" in gate.run()
    assert gate.state() == ("IDLE", "")


def test_a_gpu_hang_line_drains_and_stays(gate: Gate) -> None:
    # source: the fixture's header (github.com/ROCm/ROCm issue: 8x MI300X hang, MODE1 reset)
    tail = load(FIXTURES / "dmesg/mi300x-x8-mode1-reset-vram-lost-tail.txt").text
    lost = next(ln for ln in tail.splitlines() if "VRAM is lost" in ln)
    gate.run()
    gate.kmsg.write_text(gate.kmsg.read_text() + lost + "\n")
    gate.run()
    assert gate.state()[0] == "IDLE+DRAIN" and "dmesg.gpu.hang" in gate.state()[1]
    gate.kmsg.write_text("[    9.000000] later\n")
    assert "action=none" in gate.run() and gate.state()[0] == "IDLE+DRAIN"


def test_a_new_boot_forgets_the_kept_lines() -> None:
    def events(text: str) -> list[tuple[str, str]]:
        return [(e.tag, e.line) for e in parse_dmesg(text).events]

    shown, cur, carried = advance(RAS, None, "boot1", events)
    assert shown == RAS and carried == 0
    assert any("uncorrectable hardware error" in ln for ln in cur.kept)
    shown, again, carried = advance("[ 1.0] x\n", cur, "boot1", events)  # rotated out
    assert "uncorrectable hardware error" in shown and carried == len(cur.kept)
    assert again.kept == cur.kept
    shown, other, _ = advance("[ 1.0] x\n", cur, "boot2", events)
    assert shown == "[ 1.0] x\n" and other.kept == ()
    # bounded: a flood of one kind of event keeps only its first lines
    flood = "".join(f"[ {i}.0] {RAS_LINE.split('] ', 1)[1]} {i}\n" for i in range(500))
    _, big, _ = advance(flood, None, "b", events)
    assert 0 < len(big.kept) <= 8


# ---- r02: one state per consumer


def test_metrics_runs_never_hide_a_ras_line_from_the_gate(gate: Gate) -> None:
    gate.metrics()
    gate.run()
    gate.kmsg.write_text(gate.kmsg.read_text() + RAS_LINE + "\n")
    for _ in range(2):
        assert 'check="dmesg.gpu.ras"' in gate.metrics()  # and it stays in the metrics
    gate.run()
    assert gate.state()[1].startswith("rocmprov: dmesg.gpu.ras ")
    state = Path(gate.env["ROCMPROV_STATE_DIR"])
    assert {p.name for p in state.iterdir()} == {"dmesg-cursor.metrics", "dmesg-cursor.health"}
    for p in state.iterdir():
        assert stat.S_IMODE(p.stat().st_mode) == 0o600


# ---- r14: only the kernel's GPU code makes a kernel finding


def test_a_user_programs_fault_report_is_no_gpu_event() -> None:
    assert parse_dmesg(USER_TRAP).events == ()
    # a real capture (its URL in the header): the file name in "... in FILE[...]" is the user's
    real = load(FIXTURES / "dmesg/python3-segfault-in-libamdhip64-user-fault-excerpt.txt").text
    assert parse_dmesg(real).events == ()
    for name in ("amdgpu uncorrectable hardware error detected", "MODE1 reset", "VRAM is lost"):
        assert parse_dmesg(real.replace("libamdhip64.so", name)).events == (), name
    segv = "[ 5.0] amdgpu: x[4242]: segfault at 0 ip 0 sp 0 error 4 in uncorrectable error[55+1000]"
    assert parse_dmesg(segv).events == ()
    drm = "[ 5.0] [drm] x[7]: segfault at 0 in VRAM is lost due to GPU reset\n"
    assert parse_dmesg(drm).events == ()
    # a /dev/kmsg record of facility user (1 << 3 | 3) is not the kernel's
    assert parse_dmesg("<11>" + RAS_LINE.split("] ", 1)[1]).events == ()
    assert parse_dmesg("<3>" + RAS_LINE.split("] ", 1)[1]).tags == ("ras_uncorrectable",)
    assert "ras_uncorrectable" in parse_dmesg(RAS).tags  # the real line still counts
    dmesg = next(p for p in build_probes() if p.id == "dmesg")
    assert "--facility=kern" in dmesg.command


def test_a_user_trap_line_never_drains(gate: Gate) -> None:
    gate.run()
    gate.kmsg.write_text(gate.kmsg.read_text() + USER_TRAP + "\n")
    assert "action=none" in gate.run() and gate.state() == ("IDLE", "")


# ---- r12: the drain policy


def _doc(*findings: dict) -> dict:
    host = {"host": "gpu01", "status": "audited", "findings": list(findings)}
    return {"schema": "rocmprov.audit/1", "hosts": [host]}


def _report(*findings: Finding) -> HostReport:
    return HostReport("n1", findings=findings)


def _f(check: str, sev: Severity) -> Finding:
    return Finding(check, sev, f"{check} {sev.value}", actual="a", expected="b")


IDLE = NodeState("n1", "IDLE")
OURS = NodeState("n1", "IDLE+DRAIN", "rocmprov: dmesg.gpu.ras x")


def test_only_gpu_driver_and_kernel_gpu_findings_drain_by_default() -> None:
    for check in ("gpu.count", "pcie.link.width", "driver.kfd", "dmesg.gpu.ras"):
        assert decide(_report(_f(check, CRIT)), IDLE).action is Action.DRAIN, check
    for check in ("repo.key", "repo.sources", "rocm.packages", "os.supported", "torch.rocm"):
        d = decide(_report(_f(check, CRIT)), IDLE)
        assert d.action is Action.NONE, check
    # a non-drain CRITICAL neither drains nor blocks the resume of our own drain
    assert decide(_report(_f("repo.key", CRIT), _f("gpu.count", OK)), OURS).action is (
        Action.RESUME
    )
    assert decide(_report(_f("gpu.count", UNK)), OURS).action is Action.NONE
    # "dmesg" UNKNOWN (the kernel log not read) is of the kernel-GPU family: no resume blind
    assert decide(_report(_f("dmesg", UNK), _f("gpu.count", OK)), OURS).action is Action.NONE


def test_a_site_sets_its_own_families_but_repo_never_drains() -> None:
    site = DrainPolicy.from_patterns(["*"], ["gpu.temperature"])
    assert site.drains("os.supported") and site.drains("gpu.count")
    assert not site.drains("gpu.temperature") and not site.drains("repo.key")
    assert decide(_report(_f("repo.key", CRIT)), IDLE, site).action is Action.NONE
    for bad in ("gpu count", "x;rm", "", "a" * 65):
        with pytest.raises(ValueError):
            DrainPolicy.from_patterns([bad])


def test_expired_repo_key_does_not_drain_end_to_end(tmp_path: Path, gate: Gate) -> None:
    doc = _doc({"check": "repo.key", "severity": "critical", "actual": "expired"})
    (tmp_path / "r.json").write_text(json.dumps(doc))
    out = gate.run("--result", str(tmp_path / "r.json"))
    assert "action=none" in out and gate.state() == ("IDLE", "")
    usage = rocmprov(
        "health", "--slurm", "--drain", "gpu count", "--result", str(tmp_path / "r.json")
    )
    assert usage.rc == 64


# ---- r03: the admin's states are left alone


@pytest.mark.parametrize(
    "state",
    ["DOWN", "DOWN+DRAIN", "IDLE+FAIL", "IDLE+DRAIN+FAIL", "IDLE+MAINT", "MIXED+MAINT+RESERVED",
     "IDLE+REBOOT_REQUESTED", "IDLE+POWERED_DOWN", "FUTURE", "UNKNOWN", "IDLE*+DRAIN"],
)  # fmt: skip
def test_the_admins_states_are_never_drained_nor_resumed(state: str) -> None:
    for reason in ("admin: RMA 4711", "rocmprov: dmesg.gpu.ras x"):
        node = NodeState("n1", state, reason)
        assert not node.touchable
        assert decide(_report(_f("gpu.count", CRIT)), node).action is Action.NONE
        assert decide(_report(_f("gpu.count", OK)), node).action is Action.NONE


def test_in_service_states_are_touched() -> None:
    for state in ("IDLE", "ALLOCATED", "MIXED", "MIXED+COMPLETING", "IDLE+RESERVED"):
        assert NodeState("n1", state).touchable, state
        assert decide(_report(_f("gpu.count", CRIT)), NodeState("n1", state)).action is (
            Action.DRAIN
        )


@pytest.mark.parametrize(
    ("state", "reason"),
    [("DOWN", "admin: RMA ticket 4711"), ("IDLE+FAIL", "admin: DIMM failing")],
)
def test_down_and_fail_survive_critical_then_clean(
    gate: Gate, tmp_path: Path, state: str, reason: str
) -> None:
    doc = _doc({"check": "gpu.count", "severity": "SEV", "actual": "7", "expected": "8"})
    for sev in ("critical", "ok"):
        (tmp_path / f"{sev}.json").write_text(json.dumps(doc).replace("SEV", sev))
    gate.set_node(state, reason)
    for sev in ("critical", "ok"):
        assert "not a state the gate touches" in gate.run("--result", str(tmp_path / f"{sev}.json"))
    assert gate.state() == (state, reason)


# ---- r11: a timed-out probe goes with its children; all probes under one deadline


def test_a_timed_out_command_is_killed_with_its_children(tmp_path: Path) -> None:
    marker = f"rocmprov-orphan-{os.getpid()}"
    tool = tmp_path / marker
    tool.write_text("#!/bin/sh\nwhile :; do sleep 1; done\n")
    tool.chmod(0o755)
    start = time.monotonic()
    res = LocalTransport().run(f"{tool}; echo never", timeout=0.5)
    took = time.monotonic() - start
    # the 0.5 s timeout fired (the tool never ends): 124, after it, soon after it
    assert res.rc == 124 and 0.45 <= took < 0.5 + HANG_GUARD, (res.rc, took)
    gone = within(lambda: not processes_naming(marker), HANG_GUARD)  # killed: at once
    left = processes_naming(marker)
    for pid in left:  # clean up (by id) before the assertion can fail
        subprocess.run(["kill", "-9", str(pid)], check=False)
    assert gone and left == [], f"the tool's processes outlived its timeout: {left}"


def test_probes_run_in_parallel_under_one_deadline(tmp_path: Path) -> None:
    """12 probes of 20 s (each allowed 30 s) under one 5 s deadline: PARALLEL of them start at
    once (one after another: only the first starts before the deadline), every one ends 124
    (none waits out its own timeout), and the whole ends at the deadline (~5 s, < 20 s). The
    deadline leaves a loaded machine time to start PARALLEL shells (2 s did not always)."""
    started = tmp_path / "started"
    probes = tuple(
        Probe(f"p{i}", "slow", f"echo p{i} >> {started}; sleep 20", timeout=30) for i in range(12)
    )
    start = time.monotonic()
    bundle = collect_host(LocalTransport(), probes, deadline=5.0)
    took = time.monotonic() - start
    assert all(o.rc == 124 for o in bundle.outputs.values())
    # more than one at a time (PARALLEL = 1 is one after another: this test read it back)
    assert 1 < len(started.read_text().split()) == min(PARALLEL, len(probes)), started.read_text()
    assert 4.9 <= took < 5.0 + HANG_GUARD, f"{took:.1f} s"


# ---- r08: a state that cannot be saved is a finding, the report is still written


def test_unsaved_state_is_a_finding_and_the_metrics_are_written(gate: Gate) -> None:
    blocker = gate.tmp / "file"
    blocker.write_text("")  # a state directory under a file: it cannot be made
    gate.env["ROCMPROV_STATE_DIR"] = str(blocker / "state")
    text = gate.metrics()
    states = {
        (s.labels["check"], s.labels["subject"], s.labels["severity"]): s.value
        for family in text_string_to_metric_families(text)
        if family.name == "rocmprov_check_status"
        for s in family.samples
    }
    assert states.get(("rocmprov.state", "", "unknown")) == 3, text[:2000]


def test_metrics_unit_has_its_own_state() -> None:
    import jinja2

    path = Path(__file__).resolve().parent.parent / "playbooks/roles/rocmprov_metrics/templates"
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(path), keep_trailing_newline=True)
    common = {
        "rocmprov_metrics_command": "/usr/local/bin/rocmprov",
        "rocmprov_metrics_profile": "quick",
        "rocmprov_metrics_textfile_dir": "/x",
    }
    unit = env.get_template("rocmprov-metrics.service.j2")
    as_user = unit.render(rocmprov_metrics_user="prometheus", **common)
    assert "--state metrics" in as_user and "StateDirectory=rocmprov-metrics\n" in as_user
    assert "Environment=ROCMPROV_STATE_DIR=/var/lib/rocmprov-metrics\n" in as_user
    assert "StateDirectory" not in unit.render(rocmprov_metrics_user="root", **common)


def test_cursor_roundtrip_keeps_lines(tmp_path: Path) -> None:
    from rocmprov.collect.cursor import save_cursor

    save_cursor("health", Cursor("b", "l", (RAS_LINE,)), tmp_path / "s")
    assert load_cursor("health", tmp_path / "s") == Cursor("b", "l", (RAS_LINE,))
