"""Prometheus textfile-collector format (node_exporter --collector.textfile)."""

from __future__ import annotations

from rocmprov.model import AuditResult


def _label(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def render(result: AuditResult, *, timestamp: float | None = None) -> str:
    lines = [
        "# HELP rocmprov_check_status Check state: 0 ok/skipped, 1 warning, 2 critical, 3 unknown.",
        "# TYPE rocmprov_check_status gauge",
    ]
    for h in result.hosts:
        for f in h.findings:
            labels = (
                f'host="{_label(h.host)}",check="{_label(f.check)}",'
                f'subject="{_label(f.subject)}",severity="{f.severity.value}"'
            )
            lines.append(f"rocmprov_check_status{{{labels}}} {int(f.severity.exit_code)}")
    lines += [
        "# HELP rocmprov_host_status Worst state of the host (Nagios code).",
        "# TYPE rocmprov_host_status gauge",
    ]
    lines += [
        f'rocmprov_host_status{{host="{_label(h.host)}"}} {int(h.severity.exit_code)}'
        for h in result.hosts
    ]
    lines += [
        "# HELP rocmprov_host_audited 1 when the host was reached and audited.",
        "# TYPE rocmprov_host_audited gauge",
    ]
    lines += [
        f'rocmprov_host_audited{{host="{_label(h.host)}",'
        f'status="{_label(h.status)}"}} {0 if h.failure else 1}'
        for h in result.hosts
    ]
    if timestamp is not None:
        lines += [
            "# HELP rocmprov_audit_timestamp_seconds When the audit ran (Unix time).",
            "# TYPE rocmprov_audit_timestamp_seconds gauge",
            f"rocmprov_audit_timestamp_seconds {timestamp:.0f}",
        ]
    return "\n".join(lines) + "\n"
