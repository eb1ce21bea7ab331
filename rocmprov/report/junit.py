"""JUnit XML: a testsuite per host, a testcase per finding (CI systems gate on it)."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from rocmprov.model import AuditResult, Finding, HostReport, Severity


def render(result: AuditResult) -> str:
    root = ET.Element("testsuites", name="rocmprov audit")
    totals = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    for host in result.hosts:
        suite = _suite(host)
        root.append(suite)
        for key in totals:
            totals[key] += int(suite.get(key, "0"))
    for key, value in totals.items():
        root.set(key, str(value))
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def _suite(host: HostReport) -> ET.Element:
    suite = ET.Element("testsuite", name=host.host, time=f"{host.duration:.3f}")
    counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    if host.failure:
        case = ET.SubElement(suite, "testcase", classname=host.host, name="host.reachable")
        ET.SubElement(case, "error", type=host.failure, message=host.message or host.failure)
        counts["tests"] += 1
        counts["errors"] += 1
    for f in host.findings:
        suite.append(_case(host.host, f, counts))
    for key, value in counts.items():
        suite.set(key, str(value))
    return suite


def _case(host: str, f: Finding, counts: dict[str, int]) -> ET.Element:
    name = f"{f.check} [{f.subject}]" if f.subject else f.check
    case = ET.Element("testcase", classname=host, name=name)
    counts["tests"] += 1
    text = "\n".join(
        x
        for x in (
            f"actual: {f.actual}" if f.actual else "",
            f"expected: {f.expected}" if f.expected else "",
            f"fix: {f.fix}" if f.fix else "",
            f.ref,
        )
        if x
    )
    if f.severity in (Severity.CRITICAL, Severity.WARNING):
        el = ET.SubElement(case, "failure", type=f.severity.value, message=f.summary)
        el.text = text
        counts["failures"] += 1
    elif f.severity is Severity.UNKNOWN:
        el = ET.SubElement(case, "error", type="unknown", message=f.summary)
        el.text = text
        counts["errors"] += 1
    elif f.severity is Severity.SKIPPED:
        ET.SubElement(case, "skipped", message=f.summary)
        counts["skipped"] += 1
    return case
