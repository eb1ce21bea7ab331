"""ECC counts between runs, per GPU serial number (not index: indices move when a GPU drops out
or the node is re-cabled). Pure: the previous run's counts come in, the current ones go out;
the state file is rocmprov/collect/ras_state.py's.

A rising count is worse than a high one: a correctable count that stays where it was is the
`gpu.ecc.correctable` WARNING of checks/health.py; one that rose by `critical_rise` or more
since the last run is CRITICAL here, a smaller rise a WARNING; any rise of the uncorrectable or
deferred count is CRITICAL. A count lower than before means the driver reloaded (amdgpu counts
since it loaded): the new count is the new baseline, no finding. Rules and sources:
rocmprov/data/gpu_health.yaml `ecc.rising`.
"""

from __future__ import annotations

from collections.abc import Mapping

from rocmprov.checks.base import CRITICAL, OK, WARNING
from rocmprov.checks.health import _gpus, _totals, thresholds
from rocmprov.facts.host import HostFacts
from rocmprov.model import Finding

Counts = dict[str, int]  # {"ce": n, "ue": n, "de": n}, only the counts the tool printed


def ecc_counts(facts: HostFacts) -> dict[str, Counts]:
    """serial -> this run's ECC totals, for each GPU that reported a serial and a count."""
    out: dict[str, Counts] = {}
    for g in _gpus(facts):
        ue, ce, de = _totals(g)
        if g.serial and (ue is not None or ce is not None):
            # a count the tool did not print is unknown, not 0 (no rise, no reset, no baseline)
            out[g.serial] = {k: v for k, v in (("ce", ce), ("ue", ue), ("de", de)) if v is not None}
    return out


def check_ecc_trend(facts: HostFacts, before: Mapping[str, Mapping[str, int]]) -> list[Finding]:
    """gpu.ecc.rising, one per GPU seen in both runs; nothing when no GPU was seen before."""
    t = thresholds()["ecc"]["rising"]
    out = []
    index = {g.serial: g.index for g in _gpus(facts) if g.serial}
    for serial, now in sorted(ecc_counts(facts).items()):
        was = before.get(serial)
        if not isinstance(was, Mapping):
            continue
        keys = [k for k in ("ce", "ue", "de") if k in now and isinstance(was.get(k), int)]
        if not keys:
            continue
        rise = {k: now[k] - int(was[k]) if k in keys else 0 for k in ("ce", "ue", "de")}
        subject = f"gpu{index[serial]} ({serial})"
        if any(v < 0 for v in rise.values()):
            out.append(Finding("gpu.ecc.rising", OK, f"GPU {index[serial]}: counts reset "
                               "(driver reloaded); new baseline", subject=subject))  # fmt: skip
            continue
        if rise["ue"] or rise["de"] or rise["ce"] >= int(t["critical_rise"]):
            sev = CRITICAL
        elif rise["ce"]:
            sev = WARNING
        else:
            sev = OK
        names = {"ce": "correctable", "ue": "uncorrectable", "de": "deferred"}
        actual = ", ".join(f"+{rise[k]} {names[k]}" for k in keys)
        out.append(
            Finding(
                "gpu.ecc.rising",
                sev,
                f"GPU {index[serial]}: ECC counts since the last run: {actual}",
                actual=actual,
                expected=f"no rise (correctable: fewer than {t['critical_rise']})",
                fix=t["fix"] if sev is not OK else "",
                ref=t["source"],
                subject=subject,
            )
        )
    return out
