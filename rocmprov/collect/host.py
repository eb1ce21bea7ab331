"""Collect one host, probe by probe, through any transport."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime

from rocmprov.collect.bundle import Bundle, ProbeOutput
from rocmprov.probes import Probe
from rocmprov.transport.base import CommandResult, Transport


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def collect_host(
    transport: Transport,
    probes: Iterable[Probe],
    *,
    extra: dict | None = None,
    native: Mapping[str, Callable[[], CommandResult]] | None = None,
) -> Bundle:
    """Run each probe with its own timeout; a missing tool is recorded, never raised.

    `native` gives in-process ways to run some probes (pyudev for pci-sysfs); when one fails,
    the probe's shell command runs instead.
    """
    outputs: dict[str, ProbeOutput] = {}
    for probe in probes:
        stamp = now_iso()
        way = (native or {}).get(probe.id)
        res = way() if way is not None else None
        if res is None or not res.ok:
            res = transport.run(probe.command, timeout=probe.timeout, sudo=probe.needs_root)
        outputs[probe.id] = ProbeOutput(
            probe.id, probe.command, res.rc, res.stdout, res.stderr, res.duration, stamp
        )
    return Bundle(host=transport.host, outputs=outputs, meta=dict(extra or {}))
