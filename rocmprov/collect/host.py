"""Collect one host, probe by probe, through any transport."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime

from rocmprov.collect.bundle import Bundle, ProbeOutput
from rocmprov.probes import Probe
from rocmprov.transport.base import Transport


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def collect_host(
    transport: Transport, probes: Iterable[Probe], *, extra: dict | None = None
) -> Bundle:
    """Run each probe with its own timeout; a missing tool is recorded, never raised."""
    outputs: dict[str, ProbeOutput] = {}
    for probe in probes:
        stamp = now_iso()
        res = transport.run(probe.command, timeout=probe.timeout, sudo=probe.needs_root)
        outputs[probe.id] = ProbeOutput(
            probe.id, probe.command, res.rc, res.stdout, res.stderr, res.duration, stamp
        )
    return Bundle(host=transport.host, outputs=outputs, meta=dict(extra or {}))
