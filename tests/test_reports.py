"""Every output format, parsed back by a real parser of that format."""

from __future__ import annotations

import json

from junitparser import JUnitXml
from prometheus_client.parser import text_string_to_metric_families

from rocmprov.exitcodes import Exit
from rocmprov.model import AuditResult, Finding, HostReport, Severity
from rocmprov.report import Format
from tests.helpers import rocmprov

RESULT = AuditResult(
    (
        HostReport(
            "gpu01",
            (
                Finding(
                    "pcie.link.width",
                    Severity.CRITICAL,
                    "PCIe x8 on a x16 link",
                    "x8",
                    "x16",
                    subject="0000:03:00.0",
                ),
                Finding("pcie.bar", Severity.OK, "VRAM BAR 64G", subject="0000:03:00.0"),
                Finding("kernel.iommu", Severity.WARNING, 'iommu "pt" [drm] not set'),
                Finding("driver.dkms", Severity.SKIPPED, "no AMD GPU"),
            ),
        ),
        HostReport("gpu02", failure="hostkey-changed", message="host key changed"),
        HostReport(
            "gpu03",
            (
                Finding(
                    "pcie.link.width",
                    Severity.CRITICAL,
                    "PCIe x8 on a x16 link",
                    "x8",
                    "x16",
                    subject="0000:03:00.0",
                ),
            ),
        ),
    )
)


def test_severity_order_and_exit_codes() -> None:
    assert RESULT.exit_code == Exit.CRITICAL
    assert AuditResult((HostReport("a", failure="timeout"),)).exit_code == Exit.UNKNOWN
    warn = HostReport("b", (Finding("x", Severity.WARNING, "w"),), failure="timeout")
    assert AuditResult((warn,)).exit_code == Exit.WARNING
    assert AuditResult((HostReport("c", (Finding("x", Severity.SKIPPED, "s"),)),)).exit_code == 0


def test_fleet_groups_count_hosts_per_problem() -> None:
    groups = RESULT.groups()
    top = groups[0]
    assert top.check == "pcie.link.width" and top.hosts == ("gpu01", "gpu03")
    assert any(g.check == "host.hostkey-changed" and g.hosts == ("gpu02",) for g in groups)


def test_junit_parses_with_a_junit_parser(tmp_path) -> None:
    from rocmprov.report import junit

    path = tmp_path / "a.xml"
    path.write_text(junit.render(RESULT))
    xml = JUnitXml.fromfile(str(path))
    suites = {s.name: s for s in xml}
    assert set(suites) == {"gpu01", "gpu02", "gpu03"}
    assert suites["gpu01"].tests == 4 and suites["gpu01"].failures == 2
    assert suites["gpu01"].skipped == 1
    assert suites["gpu02"].errors == 1
    case = next(c for c in suites["gpu01"] if c.name.startswith("pcie.link.width"))
    assert case.result[0].message == "PCIe x8 on a x16 link"


def test_prometheus_parses_with_prometheus_client() -> None:
    from rocmprov.report import prometheus

    families = {
        f.name: f
        for f in text_string_to_metric_families(prometheus.render(RESULT, timestamp=1700000000))
    }
    checks = families["rocmprov_check_status"].samples
    width = [s for s in checks if s.labels["check"] == "pcie.link.width"]
    assert {s.labels["host"] for s in width} == {"gpu01", "gpu03"}
    assert all(s.value == 2 for s in width)
    iommu = next(s for s in checks if s.labels["check"] == "kernel.iommu")
    assert iommu.value == 1
    hosts = {s.labels["host"]: s.value for s in families["rocmprov_host_audited"].samples}
    assert hosts == {"gpu01": 1, "gpu02": 0, "gpu03": 1}
    assert families["rocmprov_audit_timestamp_seconds"].samples[0].value == 1700000000


def test_table_keeps_brackets_and_shows_fleet_summary() -> None:
    import io

    from rocmprov.report import table

    buf = io.StringIO()
    table.render(RESULT, buf)
    out = buf.getvalue()
    assert "[drm]" in out  # rich markup would have eaten it
    assert "Fleet: 3 hosts" in out
    assert "hostkey-changed" in out
    assert "overall: CRITICAL (exit 2)" in out


def test_every_format_renders_through_the_cli() -> None:
    for fmt in Format:
        run = rocmprov("audit", "--format", fmt.value)
        assert run.rc in (0, 1, 2, 3), (fmt, run.stderr)
        assert run.stdout.strip(), fmt
        if fmt is Format.JSON:
            assert json.loads(run.stdout)["schema"] == "rocmprov.audit/1"
        if fmt is Format.PROMETHEUS:
            names = {f.name for f in text_string_to_metric_families(run.stdout)}
            assert "rocmprov_host_status" in names
        if fmt is Format.JUNIT:
            assert run.stdout.startswith("<?xml")


def test_no_color_and_pipe_have_no_escape_codes() -> None:
    run = rocmprov("audit")
    assert "\x1b[" not in run.stdout


def test_json_is_one_document_with_a_line_per_host() -> None:
    from rocmprov.report import json_report

    text = json_report.render(RESULT)
    doc = json.loads(text)
    assert doc == json_report.audit_document(RESULT)  # nothing lost or reordered by the layout
    lines = text.splitlines()
    host_lines = [ln for ln in lines if ln.startswith('    {"host": ')]
    assert [json.loads(ln.rstrip(","))["host"] for ln in host_lines] == ["gpu01", "gpu02", "gpu03"]
    assert lines[0] == "{" and lines[-1] == "}" and lines[1] == '  "schema": "rocmprov.audit/1",'
    assert '  "hosts": [' in lines and '  "error": null' in lines
