"""The troubleshooting table inside the audit: findings on real logs name their cause (kb)."""

from __future__ import annotations

from rocmprov.audit.host import audit_bundle
from rocmprov.checks.logs import merge_dmesg
from rocmprov.collect.bundle import Bundle, ProbeOutput
from rocmprov.model import Finding, Severity
from tests.fixtureload import FIXTURES, load


def _bundle(probe: str, text: str) -> Bundle:
    return Bundle("h", {probe: ProbeOutput(probe, probe, 0, text)})


def test_probe_failure_in_real_dmesg_names_its_table_entry() -> None:
    text = load(FIXTURES / "dmesg" / "mi210-fatal-gpu-init-probe-failed-12.txt").text
    report = audit_bundle(_bundle("dmesg", text))
    enomem = [f for f in report.findings if f.check == "dmesg.amdgpu.probe_enomem"]
    assert enomem and enomem[0].severity is Severity.CRITICAL
    kbs = {f.kb for f in report.findings if f.kb}
    assert "kernel.probe-failed-enomem-bar" in kbs


def test_rocminfo_permission_error_becomes_a_log_cause() -> None:
    text = "Unable to open /dev/kfd read-write: Permission denied\nroot is member of render group\n"
    report = audit_bundle(_bundle("rocminfo", text))
    causes = [f for f in report.findings if f.check == "log.cause"]
    assert any(f.kb == "kfd.permission-denied" for f in causes), causes


def test_clean_logs_say_so() -> None:
    report = audit_bundle(_bundle("dmesg", "[    0.000000] Linux version 6.8.0\n"))
    (cause,) = [f for f in report.findings if f.check == "log.cause"]
    assert cause.severity is Severity.OK


def test_merge_keeps_one_finding_per_line() -> None:
    line = "amdgpu 0000:03:00.0: probe of 0000:03:00.0 failed with error -12"
    findings = [
        Finding("dmesg.amdgpu.probe_enomem", Severity.CRITICAL, "probe -12", actual=line),
        Finding("log.cause", Severity.CRITICAL, "BAR", actual=f"[  4.1] {line}", kb="k.bar"),
        Finding("log.cause", Severity.WARNING, "other", actual="ring gfx timeout", kb="k.ring"),
    ]
    merged = merge_dmesg(findings)
    assert [f.check for f in merged] == ["dmesg.amdgpu.probe_enomem", "log.cause"]
    assert merged[0].kb == "k.bar"
    assert merged[1].kb == "k.ring"
