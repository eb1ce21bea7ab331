"""Prometheus textfile-collector format (node_exporter --collector.textfile).

Names and labels are stable (docs/prometheus/README.md): per check and per host status, and per
AMD GPU the readings the probes had (amd-smi metric: temperature, power, VRAM, ECC; the PCI
probes: the slot's PCIe link). A reading the host did not give is left out, never written as 0.
"""

from __future__ import annotations

from typing import Any

from rocmprov.model import AuditResult

# name -> (type, help, key in the facts' gpu_metrics rows, factor to the base unit)
GPU_METRICS: dict[str, tuple[str, str, str, float]] = {
    "rocmprov_gpu_power_watts": ("gauge", "GPU socket power (amd-smi metric).", "power_watts", 1),
    "rocmprov_gpu_vram_used_bytes": (
        "gauge",
        "VRAM in use (amd-smi metric).",
        "vram_used_bytes",
        1,
    ),
    "rocmprov_gpu_vram_total_bytes": (
        "gauge",
        "VRAM size (amd-smi metric).",
        "vram_total_bytes",
        1,
    ),
    "rocmprov_gpu_ecc_correctable_errors_total": (
        "counter",
        "Correctable ECC errors since the driver loaded (amd-smi metric).",
        "ecc_correctable",
        1,
    ),
    "rocmprov_gpu_ecc_uncorrectable_errors_total": (
        "counter",
        "Uncorrectable ECC errors since the driver loaded (amd-smi metric).",
        "ecc_uncorrectable",
        1,
    ),
    "rocmprov_gpu_pcie_link_speed_transfers_per_second": (
        "gauge",
        "Current PCIe link speed of the GPU's slot (transfers/s; GPUs slow it down at idle).",
        "pcie_link_speed_gts",
        1e9,
    ),
    "rocmprov_gpu_pcie_link_width": (
        "gauge",
        "Current PCIe link width of the GPU's slot (lanes).",
        "pcie_link_width",
        1,
    ),
    "rocmprov_gpu_pcie_link_max_speed_transfers_per_second": (
        "gauge",
        "Maximum PCIe link speed of the GPU's slot (transfers/s).",
        "pcie_link_max_speed_gts",
        1e9,
    ),
    "rocmprov_gpu_pcie_link_max_width": (
        "gauge",
        "Maximum PCIe link width of the GPU's slot (lanes).",
        "pcie_link_max_width",
        1,
    ),
}
TEMPERATURE = "rocmprov_gpu_temperature_celsius"

# Every metric name the renderer can write (the dashboard and the rules may use only these).
METRIC_NAMES: tuple[str, ...] = (
    "rocmprov_check_status",
    "rocmprov_host_status",
    "rocmprov_host_audited",
    "rocmprov_audit_duration_seconds",
    "rocmprov_audit_timestamp_seconds",
    TEMPERATURE,
    *GPU_METRICS,
)


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
    lines += [
        "# HELP rocmprov_audit_duration_seconds How long collecting and checking the host took.",
        "# TYPE rocmprov_audit_duration_seconds gauge",
    ]
    lines += [
        f'rocmprov_audit_duration_seconds{{host="{_label(h.host)}"}} {_num(round(h.duration, 3))}'
        for h in result.hosts
    ]
    lines += _gpu_lines(result)
    if timestamp is not None:
        lines += [
            "# HELP rocmprov_audit_timestamp_seconds When the audit ran (Unix time).",
            "# TYPE rocmprov_audit_timestamp_seconds gauge",
            f"rocmprov_audit_timestamp_seconds {timestamp:.0f}",
        ]
    return "\n".join(lines) + "\n"


def _gpu_lines(result: AuditResult) -> list[str]:
    rows = [
        (h.host, row)
        for h in result.hosts
        for row in (h.facts or {}).get("gpu_metrics") or ()
        if isinstance(row, dict)
    ]
    lines: list[str] = []
    temps = [
        f'{TEMPERATURE}{{{_gpu_labels(host, row)},sensor="{_label(str(sensor))}"}} {_num(v)}'
        for host, row in rows
        for sensor, v in sorted((row.get("temperature_celsius") or {}).items())
        if _is_number(v)
    ]
    if temps:
        lines += [
            f"# HELP {TEMPERATURE} GPU temperature per sensor: edge, hotspot (junction), mem.",
            f"# TYPE {TEMPERATURE} gauge",
            *temps,
        ]
    for name, (kind, text, key, factor) in GPU_METRICS.items():
        samples = [
            f"{name}{{{_gpu_labels(host, row)}}} {_num(row[key] * factor)}"
            for host, row in rows
            if _is_number(row.get(key))
        ]
        if samples:
            lines += [f"# HELP {name} {text}", f"# TYPE {name} {kind}", *samples]
    return lines


def _gpu_labels(host: str, row: dict[str, Any]) -> str:
    return (
        f'host="{_label(host)}",gpu="{_label(str(row.get("gpu", "")))}",'
        f'bdf="{_label(str(row.get("bdf", "")))}"'
    )


def _is_number(v: Any) -> bool:
    return (
        isinstance(v, (int, float))
        and not isinstance(v, bool)
        and v == v
        and abs(v) != float("inf")
    )


def _num(v: float) -> str:
    """Integers as integers (exact, also for byte counts), other values as Python floats."""
    if float(v).is_integer() and abs(v) < 2**53:
        return str(int(v))
    return repr(float(v))
