"""Collect one host, probe by probe, through any transport."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime

from rocmprov.collect.bundle import Bundle, ProbeOutput
from rocmprov.collect.probes import Probe
from rocmprov.transport.base import CommandResult, Transport

PARALLEL = 8  # probes at a time under a deadline


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def collect_host(
    transport: Transport,
    probes: Iterable[Probe],
    *,
    extra: dict | None = None,
    native: Mapping[str, Callable[[], CommandResult]] | None = None,
    deadline: float | None = None,
) -> Bundle:
    """Run each probe with its own timeout; a missing tool is recorded, never raised.

    `native` gives in-process ways to run some probes (pyudev for pci-sysfs); when one fails,
    the probe's shell command runs instead. `deadline` (seconds): the probes run in parallel
    (PARALLEL at a time) and each gets at most what is left of the deadline, so the whole
    collection ends within it (the transport must be safe to call from threads).
    """
    probes = tuple(probes)
    if deadline is None:
        outputs = [_run_probe(transport, p, native, p.timeout) for p in probes]
    else:
        end = time.monotonic() + deadline

        def one(probe: Probe) -> ProbeOutput:
            return _run_probe(transport, probe, native, min(probe.timeout, end - time.monotonic()))

        with ThreadPoolExecutor(max_workers=PARALLEL) as pool:
            outputs = list(pool.map(one, probes))
    return Bundle(host=transport.host, outputs={o.id: o for o in outputs}, meta=dict(extra or {}))


def _run_probe(
    transport: Transport,
    probe: Probe,
    native: Mapping[str, Callable[[], CommandResult]] | None,
    timeout: float,
) -> ProbeOutput:
    stamp = now_iso()
    if timeout <= 0:
        res = CommandResult(124, "", "rocmprov: not run, the deadline had passed", 0.0)
        return ProbeOutput(probe.id, probe.command, res.rc, res.stdout, res.stderr, 0.0, stamp)
    way = (native or {}).get(probe.id)
    res = way() if way is not None else None
    if res is None or not res.ok:
        res = transport.run(probe.command, timeout=timeout, sudo=probe.needs_root)
    return ProbeOutput(probe.id, probe.command, res.rc, res.stdout, res.stderr, res.duration, stamp)
