"""GPU health against limits and the inventory: throttling, power cap, temperature, MI300
partition modes. Thresholds and sources: rocmprov/data/gpu_health.yaml (see checks/health.py)."""

from __future__ import annotations

from rocmprov.checks.base import CRITICAL, OK, SKIPPED, WARNING
from rocmprov.checks.health import NOT_REPORTED, _gpus, _na, _sev, thresholds
from rocmprov.checks.policy import Policy
from rocmprov.facts.host import HostFacts
from rocmprov.model import Finding


def check_throttle(facts: HostFacts, policy: Policy) -> list[Finding]:
    """gpu.throttle: a *_VIOLATION_STATUS of amd-smi metric --throttle is ACTIVE."""
    if (na := _na("gpu.throttle", facts)) is not None:
        return na
    t = thresholds()["throttle"]
    out = [
        Finding(
            "gpu.throttle",
            _sev(t["severity"]) if g.throttle_active else OK,
            f"GPU {g.index}: "
            + (
                f"throttled now by {', '.join(g.throttle_active)}"
                if g.throttle_active
                else "no active violation"
            ),
            actual=", ".join(g.throttle_active) or "none",
            expected="no active thermal/power violation",
            fix=t["fix"] if g.throttle_active else "",
            ref=t["source"],
            subject=f"gpu{g.index}",
        )
        for g in _gpus(facts)
        if g.throttle_seen
    ]
    return out or [Finding("gpu.throttle", SKIPPED, NOT_REPORTED)]


def check_power_cap(facts: HostFacts, policy: Policy) -> list[Finding]:
    """gpu.power-cap: the socket power cap is not far below the board's maximum."""
    if (na := _na("gpu.power-cap", facts)) is not None:
        return na
    t = thresholds()["power_cap"]
    out = []
    for g in _gpus(facts):
        cap, top = g.power_cap_watts, g.power_max_watts
        if cap is None or not top:
            continue
        low = cap < top * float(t["warn_below_fraction"]) and not policy.power_cap_ok
        out.append(
            Finding(
                "gpu.power-cap",
                WARNING if low else OK,
                f"GPU {g.index}: power cap {cap:g} W of a {top:g} W maximum",
                actual=f"{cap:g} W",
                expected=f">= {float(t['warn_below_fraction']) * top:g} W ({t['policy']})",
                fix=t["fix"] if low else "",
                ref=t["source"],
                subject=f"gpu{g.index}",
            )
        )
    return out or [Finding("gpu.power-cap", SKIPPED, NOT_REPORTED)]


_SENSOR = {
    "edge": "edge",
    "hotspot": "hotspot",
    "junction": "hotspot",
    "mem": "vram",
    "hbm": "vram",
}


def check_temperature(facts: HostFacts, policy: Policy) -> list[Finding]:
    """gpu.temperature: each sensor against the card's own slowdown/shutdown limits."""
    if (na := _na("gpu.temperature", facts)) is not None:
        return na
    t = thresholds()["temperature"]
    limits = {g.index: dict(g.temp_limits) for g in _gpus(facts)}
    out = []
    for m in facts.smi_metrics or ():
        lim = limits.get(m.index, {})
        for sensor, value in m.temperatures_celsius:
            kind = _SENSOR.get(sensor, sensor)
            slow, stop = lim.get(f"slowdown_{kind}"), lim.get(f"shutdown_{kind}")
            if slow is None and stop is None:
                continue
            sev = (
                CRITICAL
                if stop is not None and value >= stop
                else WARNING
                if slow is not None and value >= slow
                else OK
            )
            out.append(
                Finding(
                    "gpu.temperature",
                    sev,
                    f"GPU {m.index} {sensor}: {value:g} °C "
                    f"(slowdown {slow or '-'}, shutdown {stop or '-'})",
                    actual=f"{value:g} °C",
                    expected=f"< {slow if slow is not None else stop} °C (the card's own limit)",
                    fix=t["fix"] if sev != OK else "",
                    ref=t["source"],
                    subject=f"gpu{m.index}",
                )
            )
    return out or [Finding("gpu.temperature", SKIPPED, "no temperature with a card limit reported")]


def check_partition(facts: HostFacts, policy: Policy) -> list[Finding]:
    """gpu.partition: the compute (SPX..CPX) and memory (NPS1..NPS8) partition modes of MI300
    GPUs against rocmprov_compute_partition / rocmprov_memory_partition."""
    if (na := _na("gpu.partition", facts)) is not None:
        return na
    t = thresholds()["partition"]
    modes = [(g.index, g.compute_partition, g.memory_partition) for g in _gpus(facts)]
    modes = [m for m in modes if m[1] or m[2]]
    if not modes:
        return [
            Finding(
                "gpu.partition",
                SKIPPED,
                "no partition mode reported (not an MI300-class GPU, or amd-smi absent)",
            )
        ]
    out = []
    for index, compute, memory in modes:
        wrong = []
        if policy.compute_partition and compute and compute != policy.compute_partition:
            wrong.append(f"compute {compute} != {policy.compute_partition}")
        if policy.memory_partition and memory and memory != policy.memory_partition:
            wrong.append(f"memory {memory} != {policy.memory_partition}")
        per = t["partitions_per_gpu"].get(compute)
        logical = f"; {per} logical GPU(s)" if per else ""
        expected = (
            "/".join(x for x in (policy.compute_partition, policy.memory_partition) if x)
            or "any (set rocmprov_compute_partition / rocmprov_memory_partition to judge)"
        )
        out.append(
            Finding(
                "gpu.partition",
                _sev(t["severity"]) if wrong else OK,
                f"GPU {index}: {compute or '?'}/{memory or '?'}{logical}"
                + (f" ({'; '.join(wrong)})" if wrong else ""),
                actual=f"{compute or '?'}/{memory or '?'}",
                expected=expected,
                fix=t["fix"] if wrong else "",
                ref=t["source"],
                subject=f"gpu{index}",
            )
        )
    return out
