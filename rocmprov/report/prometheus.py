"""Prometheus textfile-collector format (node_exporter --collector.textfile).

Names and labels are stable (docs/prometheus/README.md): per check and per host status, and per
AMD GPU the readings the probes had (amd-smi metric: temperature, power, VRAM, ECC; the PCI
probes: the slot's PCIe link). A reading the host did not give is left out, never written as 0.

prometheus_client does the format: one collector yields the metric families of an audit into a
CollectorRegistry, generate_latest writes the text (escaping, number format, counters' _total)
and write_to_textfile the file (write_textfile says what it is wrapped in, and why).
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from prometheus_client.core import CollectorRegistry, CounterMetricFamily, GaugeMetricFamily
from prometheus_client.exposition import generate_latest, write_to_textfile
from prometheus_client.metrics_core import Metric

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


_FAMILY = {"gauge": GaugeMetricFamily, "counter": CounterMetricFamily}
GPU_LABELS = ["host", "gpu", "bdf"]


class AuditCollector:
    """The metric families of one audit (a prometheus_client collector)."""

    def __init__(self, result: AuditResult, timestamp: float | None = None) -> None:
        self.result = result
        self.timestamp = timestamp

    def collect(self) -> Iterator[Metric]:
        hosts = self.result.hosts
        checks = GaugeMetricFamily(
            "rocmprov_check_status",
            "Check state: 0 ok/skipped, 1 warning, 2 critical, 3 unknown.",
            labels=["host", "check", "subject", "severity"],
        )
        for h in hosts:
            for f in h.findings:
                labels = [h.host, f.check, f.subject, f.severity.value]
                checks.add_metric(labels, int(f.severity.exit_code))
        yield checks
        status = GaugeMetricFamily(
            "rocmprov_host_status", "Worst state of the host (Nagios code).", labels=["host"]
        )
        for h in hosts:
            status.add_metric([h.host], int(h.severity.exit_code))
        yield status
        audited = GaugeMetricFamily(
            "rocmprov_host_audited",
            "1 when the host was reached and audited.",
            labels=["host", "status"],
        )
        for h in hosts:
            audited.add_metric([h.host, h.status], 0 if h.failure else 1)
        yield audited
        duration = GaugeMetricFamily(
            "rocmprov_audit_duration_seconds",
            "How long collecting and checking the host took.",
            labels=["host"],
        )
        for h in hosts:
            duration.add_metric([h.host], round(h.duration, 3))
        yield duration
        yield from _gpu_families(self.result)
        if self.timestamp is not None:
            yield GaugeMetricFamily(
                "rocmprov_audit_timestamp_seconds",
                "When the audit ran (Unix time).",
                value=round(self.timestamp),
            )


def registry(result: AuditResult, *, timestamp: float | None = None) -> CollectorRegistry:
    reg = CollectorRegistry(auto_describe=False)
    reg.register(AuditCollector(result, timestamp))
    return reg


def render(result: AuditResult, *, timestamp: float | None = None) -> str:
    return generate_latest(registry(result, timestamp=timestamp)).decode("utf-8")


def write_textfile(
    path: Path, result: AuditResult, *, timestamp: float | None = None, mode: int = 0o644
) -> None:
    """The textfile for node_exporter, written by prometheus_client's write_to_textfile and
    wrapped so that it keeps what rocmprov's other writers promise (report/output.py):
    write_to_textfile opens a predictable temp name (FILE.<pid>.<thread>) without O_EXCL or
    O_NOFOLLOW, with the umask's mode, and does not fsync; so it writes into a fresh 0700
    directory of ours beside FILE (no one else can plant a link there), the file gets `mode`
    and is fsynced there, then one rename puts it at FILE (a reader sees the old file or the
    new one; a symbolic link at FILE is replaced, never followed) and the directory is fsynced.
    No temp file or directory is left behind."""
    reg = registry(result, timestamp=timestamp)
    parent = path.parent if str(path.parent) else Path(".")
    private = Path(tempfile.mkdtemp(prefix=f".{path.name}.", suffix=".tmp", dir=parent))
    staged = private / path.name
    try:
        write_to_textfile(str(staged), reg)
        fd = os.open(staged, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        try:
            os.fchmod(fd, mode)  # whatever the umask
            os.fsync(fd)
        finally:
            os.close(fd)
        os.rename(staged, path)
    finally:
        for leftover in private.iterdir():  # only when something failed before the rename
            with contextlib.suppress(OSError):
                leftover.unlink()
        private.rmdir()
    dfd = os.open(parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        os.fsync(dfd)
    finally:
        os.close(dfd)


def _gpu_families(result: AuditResult) -> Iterator[Metric]:
    rows = [
        (h.host, row)
        for h in result.hosts
        for row in (h.facts or {}).get("gpu_metrics") or ()
        if isinstance(row, dict)
    ]
    temps = GaugeMetricFamily(
        TEMPERATURE,
        "GPU temperature per sensor: edge, hotspot (junction), mem.",
        labels=[*GPU_LABELS, "sensor"],
    )
    for host, row in rows:
        for sensor, v in sorted((row.get("temperature_celsius") or {}).items()):
            if _is_number(v):
                temps.add_metric([*_gpu_labels(host, row), str(sensor)], v)
    if temps.samples:
        yield temps
    for name, (kind, text, key, factor) in GPU_METRICS.items():
        family = _FAMILY[kind](name, text, labels=GPU_LABELS)
        for host, row in rows:
            if _is_number(row.get(key)):
                family.add_metric(_gpu_labels(host, row), row[key] * factor)
        if family.samples:
            yield family


def _gpu_labels(host: str, row: dict[str, Any]) -> list[str]:
    return [host, str(row.get("gpu", "")), str(row.get("bdf", ""))]


def _is_number(v: Any) -> bool:
    return (
        isinstance(v, (int, float))
        and not isinstance(v, bool)
        and v == v
        and abs(v) != float("inf")
    )
