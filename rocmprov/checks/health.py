"""GPU health: ECC/RAS counts, retired pages, XGMI links, throttling, power cap, temperature and
MI300 partition modes, from amd-smi and amdgpu's RAS sysfs (rocmprov/parse/amdsmi_health.py).

Thresholds and sources: rocmprov/data/gpu_health.yaml. A host with no AMD GPU gets SKIPPED (not
applicable); a GPU host whose tools did not report a reading gets SKIPPED with the reason, never a
warning: the audit must not cry wolf on a host it cannot see into.
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from typing import Any

from rocmprov.checks.base import (
    CRITICAL,
    OK,
    PCI_PROBES,
    SKIPPED,
    WARNING,
    not_collected,
    skipped,
)
from rocmprov.checks.policy import Policy
from rocmprov.facts.host import HostFacts
from rocmprov.model import Finding, Severity
from rocmprov.parse.amdsmi_health import HEALTH_PROBES, BadPages, GpuHealth
from rocmprov.parse.datafile import load_yaml

NOT_REPORTED = "amd-smi/sysfs did not report it on this host"


@cache
def thresholds() -> dict[str, Any]:
    text = resources.files("rocmprov.data").joinpath("gpu_health.yaml").read_text("utf-8")
    return load_yaml(text)


def _sev(word: str) -> Severity:
    return {"critical": CRITICAL, "warning": WARNING}.get(word, WARNING)


def _gpus(facts: HostFacts) -> tuple[GpuHealth, ...]:
    return facts.gpu_health.gpus or () if facts.gpu_health else ()


def _na(check: str, facts: HostFacts) -> list[Finding] | None:
    """SKIPPED when there is no AMD GPU; None when the check should go on."""
    if facts.pci is None and facts.gpu_health is None:
        return not_collected(facts, (check,), PCI_PROBES + HEALTH_PROBES)
    if facts.pci is not None and not facts.amd_gpus:
        return [skipped(check)]
    if facts.gpu_health is None:
        why = facts.not_collected(*HEALTH_PROBES)
        return [skipped(check, f"no GPU health tool gave a reading: {why}")]
    return None


def check_ecc(facts: HostFacts, policy: Policy) -> list[Finding]:
    """gpu.ecc.uncorrectable and gpu.ecc.correctable, per GPU, from totals else block sums."""
    if (na := _na("gpu.ecc.uncorrectable", facts)) is not None:
        return [*na, skipped("gpu.ecc.correctable", na[0].summary)]
    t = thresholds()["ecc"]
    out: list[Finding] = []
    seen = False
    for g in _gpus(facts):
        ue, ce, de = _totals(g)
        if ue is None and ce is None:
            continue
        seen = True
        blocks = ", ".join(
            f"{b.name} ue={b.uncorrectable or 0} ce={b.correctable or 0}"
            for b in g.blocks
            if (b.uncorrectable or 0) + (b.correctable or 0) + (b.deferred or 0)
        )
        where = f" ({blocks})" if blocks else ""
        bad = (ue or 0) + (de or 0)
        u = t["uncorrectable"]
        out.append(
            Finding(
                "gpu.ecc.uncorrectable",
                _sev(u["severity"]) if bad else OK,
                f"GPU {g.index}: {ue or 0} uncorrectable, {de or 0} deferred ECC error(s){where}",
                actual=f"uncorrectable={ue or 0} deferred={de or 0}",
                expected="0",
                fix=u["fix"] if bad else "",
                ref=u["source"],
                subject=f"gpu{g.index}",
            )
        )
        c = t["correctable"]
        warn = (ce or 0) >= int(c["warn_at"])
        out.append(
            Finding(
                "gpu.ecc.correctable",
                _sev(c["severity"]) if warn else OK,
                f"GPU {g.index}: {ce or 0} correctable ECC error(s){where}",
                actual=str(ce or 0),
                expected=f"< {c['warn_at']} ({c['policy']})",
                fix=c["fix"] if warn else "",
                ref=c["source"],
                subject=f"gpu{g.index}",
            )
        )
    for card in facts.gpu_health.sysfs or ():  # type: ignore[union-attr]
        ue = sum(u for _, u, _ in card.counts)
        if card.counts and not seen:
            seen = True
            out.append(
                Finding(
                    "gpu.ecc.uncorrectable",
                    CRITICAL if ue else OK,
                    f"{card.card}: {ue} uncorrectable error(s) in ras/*_err_count",
                    actual=str(ue),
                    expected="0",
                    fix=t["uncorrectable"]["fix"] if ue else "",
                    ref=t["uncorrectable"]["source"],
                    subject=card.card,
                )
            )
    if not seen:
        return [
            skipped("gpu.ecc.uncorrectable", NOT_REPORTED),
            skipped("gpu.ecc.correctable", NOT_REPORTED),
        ]
    return out


def _totals(g: GpuHealth) -> tuple[int | None, int | None, int | None]:
    if g.total_uncorrectable is not None or g.total_correctable is not None:
        return g.total_uncorrectable, g.total_correctable, g.total_deferred
    if not g.blocks:
        return None, None, None
    return (
        sum(b.uncorrectable or 0 for b in g.blocks),
        sum(b.correctable or 0 for b in g.blocks),
        sum(b.deferred or 0 for b in g.blocks),
    )


def check_ras(facts: HostFacts, policy: Policy) -> list[Finding]:
    """gpu.ras.enabled: some RAS protection (an ECC block or the poison schema) is on."""
    if (na := _na("gpu.ras.enabled", facts)) is not None:
        return na
    t = thresholds()["ras"]
    out = []
    for g in _gpus(facts):
        if not g.ras_block_state and not g.ras_schemas:
            continue
        on = [b for b, s in g.ras_block_state if s == "ENABLED"]
        schemas = [k.removesuffix("_schema").upper() for k, s in g.ras_schemas if s == "ENABLED"]
        enabled = bool(on or schemas)
        out.append(
            Finding(
                "gpu.ras.enabled",
                OK if enabled else _sev(t["severity"]),
                f"GPU {g.index}: ECC on for {', '.join(on) or 'no block'}; "
                f"schemas on: {', '.join(schemas) or 'none'}",
                actual=", ".join(on + schemas) or "none",
                expected="RAS/ECC on for at least one block or the poison schema",
                fix="" if enabled else t["fix"],
                ref=t["source"],
                subject=f"gpu{g.index}",
            )
        )
    for card in facts.gpu_health.sysfs or ():  # type: ignore[union-attr]
        if card.features is not None and not out:
            out.append(
                Finding(
                    "gpu.ras.enabled",
                    OK if card.features else _sev(t["severity"]),
                    f"{card.card}: ras/features mask {card.features:#x}",
                    actual=f"{card.features:#x}",
                    expected="non-zero",
                    fix="" if card.features else t["fix"],
                    ref=t["source"],
                    subject=card.card,
                )
            )
    return out or [skipped("gpu.ras.enabled", NOT_REPORTED)]


def check_bad_pages(facts: HostFacts, policy: Policy) -> list[Finding]:
    """gpu.bad-pages.retired and gpu.bad-pages.pending, from amd-smi bad-pages, else sysfs."""
    if (na := _na("gpu.bad-pages.retired", facts)) is not None:
        return [*na, skipped("gpu.bad-pages.pending", na[0].summary)]
    health = facts.gpu_health
    pages: list[BadPages] = list(health.bad_pages or ()) if health else []
    if not pages and health:
        pages = [c.bad_pages for c in health.sysfs or () if c.bad_pages is not None]
    if not pages:
        return [
            skipped("gpu.bad-pages.retired", NOT_REPORTED),
            skipped("gpu.bad-pages.pending", NOT_REPORTED),
        ]
    exceeded = {g.index for g in _gpus(facts) if g.bad_page_threshold_exceeded == "TRUE"}
    t = thresholds()["bad_pages"]
    out = []
    for p in pages:
        r = t["retired"]
        sev = (
            _sev(r["severity_exceeded"])
            if p.index in exceeded
            else (_sev(r["severity_any"]) if p.retired else OK)
        )
        note = "; BAD_PAGE_THRESHOLD_EXCEEDED" if p.index in exceeded else ""
        out.append(
            Finding(
                "gpu.bad-pages.retired",
                sev,
                f"GPU {p.index}: {p.retired} retired VRAM page(s){note}",
                actual=str(p.retired),
                expected="0, and never past the driver's bad page threshold",
                fix=r["fix"] if sev != OK else "",
                ref=r["source"],
                subject=f"gpu{p.index}",
            )
        )
        q = t["pending"]
        waiting = p.pending + p.unreservable
        out.append(
            Finding(
                "gpu.bad-pages.pending",
                _sev(q["severity"]) if waiting else OK,
                f"GPU {p.index}: {p.pending} page(s) pending retirement, "
                f"{p.unreservable} that could not be reserved",
                actual=f"pending={p.pending} unreservable={p.unreservable}",
                expected="0",
                fix=q["fix"] if waiting else "",
                ref=q["source"],
                subject=f"gpu{p.index}",
            )
        )
    return out


def check_xgmi(facts: HostFacts, policy: Policy) -> list[Finding]:
    """gpu.xgmi.links (every GPU of an XGMI board has XGMI links, all up) and gpu.xgmi.errors."""
    if (na := _na("gpu.xgmi.links", facts)) is not None:
        return [*na, skipped("gpu.xgmi.errors", na[0].summary)]
    t = thresholds()["xgmi"]
    rows = list(facts.gpu_health.xgmi or ()) if facts.gpu_health else []
    out: list[Finding] = []
    types = {g.xgmi_link_type for g in rows if g.xgmi_link_type}
    if len(rows) > 1 and t["link_type"] in types:
        for g in rows:
            down = [ln.peer for ln in g.xgmi_links if ln.status in ("DOWN", "INACTIVE")]
            wrong = g.xgmi_link_type and g.xgmi_link_type != t["link_type"]
            bad = bool(down) or bool(wrong)
            out.append(
                Finding(
                    "gpu.xgmi.links",
                    _sev(t["severity_down"]) if bad else OK,
                    f"GPU {g.index}: link type {g.xgmi_link_type or '?'}"
                    + (f", {g.xgmi_bit_rate_gbps:g} Gb/s" if g.xgmi_bit_rate_gbps else "")
                    + (f"; links down to {', '.join(down)}" if down else ""),
                    actual=g.xgmi_link_type or "unknown",
                    expected=f"{t['link_type']} to every peer of the hive, all up",
                    fix=t["fix"] if bad else "",
                    ref=t["source"],
                    subject=f"gpu{g.index}",
                )
            )
    errs = [
        (g.index, g.xgmi_error_status)
        for g in _gpus(facts)
        if g.xgmi_error_status and g.xgmi_error_status != "NO_ERROR"
    ] + [(g.index, f"{ln.peer}: {ln.errors}") for g in rows for ln in g.xgmi_links if ln.errors]
    errs += [
        (int(c.card[4:]), f"xgmi_wafl ue={u} ce={ce}")
        for c in (facts.gpu_health.sysfs or () if facts.gpu_health else ())
        for b, u, ce in c.counts
        if b.startswith("xgmi") and (u or ce)
    ]
    if errs:
        out += [
            Finding(
                "gpu.xgmi.errors",
                _sev(t["severity_errors"]),
                f"GPU {i}: XGMI errors ({what})",
                actual=what,
                expected="no XGMI error",
                fix=t["fix"],
                ref=t["source"],
                subject=f"gpu{i}",
            )
            for i, what in errs
        ]
    elif out:
        out.append(Finding("gpu.xgmi.errors", OK, "no XGMI error reported"))
    if not out:
        why = "no XGMI hive reported (single GPU, PCIe-only board, or amd-smi xgmi absent)"
        return [Finding("gpu.xgmi.links", SKIPPED, why), Finding("gpu.xgmi.errors", SKIPPED, why)]
    return out
