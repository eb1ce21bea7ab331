"""GPU health facts from amd-smi (JSON of both eras, or its human text) and amdgpu's RAS sysfs.

Pure. amd-smi's human text is indented `KEY: VALUE` lines under `GPU: N`; its JSON uses the same
names in lower case (`"ecc": {"total_correctable_count": 0}`), so both become one nested dict
with lower-case keys and one extractor reads them. Sources of every shape: the fixtures under
tests/fixtures/amd-smi-health (AMD's amd-smi README and changelog examples, public reports).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace
from typing import Any

from rocmprov.parse.ras_sysfs import BadPages, SysfsRas, parse_ras_sysfs
from rocmprov.parse.ras_views import parse_amd_smi_bad_pages, parse_rocm_smi_rasinfo
from rocmprov.parse.smi import amd_smi_gpus, load_json

__all__ = ["BadPages", "GpuHealth", "GpuHealthFacts", "build_health", "parse_amd_smi_bad_pages"]

NA = ("", "N/A", "NA", None)


@dataclass(frozen=True)
class EccBlock:
    name: str  # UMC, SDMA, GFX, XGMI_WAFL ...
    correctable: int | None = None
    uncorrectable: int | None = None
    deferred: int | None = None


@dataclass(frozen=True)
class XgmiLink:
    peer: str  # the peer's BDF or "gpuN"
    status: str = ""  # UP | DOWN | DISABLED | ENABLED | ""
    errors: int | None = None


@dataclass(frozen=True)
class GpuHealth:
    """One GPU's health readings; None/empty where the tool did not say."""

    index: int
    bdf: str = ""  # 0000:bb:dd.f where the tool named it (amd-smi xgmi), with the domain added
    serial: str = ""  # amd-smi static asic.asic_serial, else board.product_serial
    total_correctable: int | None = None
    total_uncorrectable: int | None = None
    total_deferred: int | None = None
    blocks: tuple[EccBlock, ...] = ()
    ras_block_state: tuple[tuple[str, str], ...] = ()  # (block, ENABLED|DISABLED)
    ras_schemas: tuple[tuple[str, str], ...] = ()  # (poison_schema, ENABLED) ...
    bad_page_threshold_exceeded: str = ""
    compute_partition: str = ""  # SPX DPX TPX QPX CPX
    memory_partition: str = ""  # NPS1 NPS2 NPS4 NPS8
    throttle_active: tuple[str, ...] = ()  # violation names whose status is ACTIVE
    throttle_seen: bool = False
    temp_limits: tuple[tuple[str, float], ...] = ()  # (slowdown_hotspot, 100.0) ...
    power_cap_watts: float | None = None  # amd-smi static --limit SOCKET_POWER / power_cap
    power_max_watts: float | None = None  # MAX_POWER (the board's top cap)
    xgmi_link_type: str = ""
    xgmi_bit_rate_gbps: float | None = None
    xgmi_max_bandwidth_gbps: float | None = None
    xgmi_links: tuple[XgmiLink, ...] = ()
    xgmi_error_status: str = ""  # amd-smi metric --xgmi-err: NO_ERROR | ERROR | MULTIPLE_ERRORS


# --- amd-smi: text or JSON -> per-GPU dicts ------------------------------------------------------

_GPU_LINE = re.compile(r"^GPU:\s*(\d+)\s*$")
_KV = re.compile(r"^(\s*)([A-Za-z0-9_ ./()-]+?):\s*(.*?)\s*$")


def amd_smi_docs(text: str) -> list[dict[str, Any]]:
    """Per-GPU dicts (lower-case keys, with "gpu": index) from amd-smi JSON or human text."""
    data = load_json(text)
    if data is not None:
        return [_lower(g) for g in amd_smi_gpus(data)]
    return _text_docs(text)


def _lower(v: Any) -> Any:
    if isinstance(v, dict):
        return {str(k).lower(): _lower(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_lower(x) for x in v]
    return v


def _text_docs(text: str) -> list[dict[str, Any]]:
    docs: list[dict[str, Any]] = []
    current: dict[str, Any] | None = None
    stack: list[tuple[int, dict[str, Any]]] = []
    for raw in text.splitlines():
        line = raw.rstrip()
        if m := _GPU_LINE.match(line.strip() if not line.startswith(" ") else ""):
            current = {"gpu": int(m.group(1))}
            docs.append(current)
            stack = [(-1, current)]
            continue
        m = _KV.match(line)
        if not m or line.lstrip().startswith(("$", "#", "[")):
            continue
        if current is None:  # a grep'd or headerless excerpt: one GPU, index 0
            current = {"gpu": 0}
            docs.append(current)
            stack = [(-1, current)]
        indent, key, value = len(m.group(1)), m.group(2).strip().lower(), m.group(3)
        while stack and stack[-1][0] >= indent:
            stack.pop()
        parent = stack[-1][1] if stack else current
        if value == "":
            child: dict[str, Any] = {}
            parent[key] = child
            stack.append((indent, child))
        else:
            parent.setdefault(key, value)
    return docs


# --- extraction ----------------------------------------------------------------------------------


def _count(v: Any) -> int | None:
    if isinstance(v, dict):
        v = v.get("value")
    if isinstance(v, bool) or v in NA:
        return None
    try:
        n = float(str(v).split()[0])
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    return int(n) if math.isfinite(n) and n >= 0 and n == int(n) else None


def _number(v: Any) -> float | None:
    if isinstance(v, dict):
        v = v.get("value")
    if isinstance(v, bool) or v in NA:
        return None
    m = re.match(r"^\s*(-?\d{1,40}(?:\.\d{1,40})?)", str(v))
    return float(m.group(1)) if m else None


def _word(v: Any) -> str:
    return "" if v in NA or isinstance(v, dict | list) else str(v).strip().upper()


def _plain(v: Any) -> str:
    return "" if v in NA or isinstance(v, dict | list) else str(v).strip()


def _blocks(node: Any, out: dict[str, EccBlock]) -> None:
    """Every dict holding correctable_count/uncorrectable_count is one block, keyed by name."""
    if not isinstance(node, dict):
        return
    for key, v in node.items():
        if isinstance(v, dict) and ("correctable_count" in v or "uncorrectable_count" in v):
            out.setdefault(
                key.upper(),
                EccBlock(
                    key.upper(),
                    _count(v.get("correctable_count")),
                    _count(v.get("uncorrectable_count")),
                    _count(v.get("deferred_count")),
                ),
            )
        elif isinstance(v, dict):
            _blocks(v, out)


def _section(doc: dict[str, Any], *names: str) -> dict[str, Any]:
    for n in names:
        v = doc.get(n)
        if isinstance(v, dict):
            return v
    return {}


def _partition(doc: dict[str, Any]) -> tuple[str, str]:
    part = _section(doc, "partition")
    compute = _word(part.get("compute_partition"))
    memory = _word(part.get("memory_partition"))
    # `amd-smi partition`: MEMORY_PARTITION: {CURRENT: NPS1}, ACCELERATOR_PARTITION: {CURRENT: ..}
    mem = _section(doc, "memory_partition")
    acc = _section(doc, "accelerator_partition", "compute_partition")
    memory = memory or _word(mem.get("current"))
    compute = compute or _word(acc.get("current"))
    if isinstance(doc.get("compute_partition"), str):
        compute = compute or _word(doc.get("compute_partition"))
    if isinstance(doc.get("memory_partition"), str):
        memory = memory or _word(doc.get("memory_partition"))
    return compute, memory


_TEMP_LIMIT = re.compile(r"^(slowdown|shutdown)_(edge|hotspot|vram|mem)_temperature$")


def health_from_doc(doc: dict[str, Any], pos: int = 0) -> GpuHealth:
    index = doc.get("gpu") if isinstance(doc.get("gpu"), int) else pos
    ecc = _section(doc, "ecc")
    blocks: dict[str, EccBlock] = {}
    _blocks({k: v for k, v in doc.items() if k != "ras"}, blocks)
    ras = _section(doc, "ras")
    state = _section(ras, "ecc_block_state", "block_state")
    schemas = tuple((k, _word(v)) for k, v in ras.items() if k.endswith("_schema") and _word(v))
    throttle = _section(doc, "throttle", "violation")
    active = tuple(
        k.removesuffix("_violation_status").upper()
        for k, v in throttle.items()
        if k.endswith("_violation_status") and _word(v) == "ACTIVE"
    )
    # amd-smi of ROCm 6.0-6.2: one POWER.THROTTLE_STATUS, THROTTLED | UNTHROTTLED (| N/A)
    status = _word(_section(doc, "power").get("throttle_status"))
    if status == "THROTTLED":
        active += ("THROTTLE_STATUS",)
    limit = _section(doc, "limit")
    temps = tuple(
        (f"{m.group(1)}_{m.group(2)}", n)
        for k, v in limit.items()
        if (m := _TEMP_LIMIT.match(k)) and (n := _number(v)) is not None
    )
    xgmi_err = doc.get("xgmi_err")
    xgmi_err = (
        xgmi_err.get("status", xgmi_err.get("error_status"))
        if isinstance(xgmi_err, dict)
        else xgmi_err
    )
    compute, memory = _partition(doc)
    serial = _plain(_section(doc, "asic").get("asic_serial")) or _plain(
        _section(doc, "board").get("product_serial")
    )
    return GpuHealth(
        index=index,
        serial=serial[:64],
        total_correctable=_count(ecc.get("total_correctable_count", ecc.get("correctable"))),
        total_uncorrectable=_count(ecc.get("total_uncorrectable_count", ecc.get("uncorrectable"))),
        total_deferred=_count(ecc.get("total_deferred_count")),
        blocks=tuple(blocks.values()),
        ras_block_state=tuple((k.upper(), _word(v)) for k, v in state.items() if _word(v)),
        ras_schemas=schemas,
        bad_page_threshold_exceeded=_word(ras.get("bad_page_threshold_exceeded")),
        compute_partition=compute,
        memory_partition=memory,
        throttle_active=active,
        throttle_seen=any(k.endswith("_violation_status") for k in throttle)
        or status in ("THROTTLED", "UNTHROTTLED"),
        temp_limits=temps,
        power_cap_watts=_number(limit.get("socket_power", limit.get("power_cap"))),
        power_max_watts=_number(limit.get("max_power", limit.get("max_power_cap"))),
        xgmi_error_status=_word(xgmi_err),
    )


def parse_health(*texts: str) -> list[GpuHealth]:
    """amd-smi static + metric (any order, either form) -> one GpuHealth per GPU index, the
    first non-empty value of each field winning."""
    merged: dict[int, dict[str, Any]] = {}
    for text in texts:
        for pos, doc in enumerate(amd_smi_docs(text or "")):
            index = doc.get("gpu") if isinstance(doc.get("gpu"), int) else pos
            target = merged.setdefault(index, {"gpu": index})
            for k, v in doc.items():
                target.setdefault(k, v)
    return [health_from_doc(d) for _, d in sorted(merged.items())]


# --- amd-smi xgmi --------------------------------------------------------------------------------

# the GPU's address with its PCI domain (changelog, 6.1-era) or without it ("05:00.0", AMD's
# amd-smi blog of 2024-09); a bit rate / bandwidth of "N/A" on boards without XGMI links
_XGMI_ROW = re.compile(
    r"^GPU(\d+)\s+((?:[0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.\d)\s+"
    r"(\S+ \S+|N/A)\s+(\S+ \S+|N/A)\s+(\S+)"
)


_SHORT_BDF = re.compile(r"^[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$")
_LONG_BDF = re.compile(r"^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$")


def full_bdf(text: str) -> str:
    """ "05:00.0" or "0000:05:00.0" (any case) -> "0000:05:00.0"; "" for anything else."""
    t = text.strip().lower()
    if _SHORT_BDF.match(t):
        return f"0000:{t}"
    return t if _LONG_BDF.match(t) else ""


def parse_xgmi(text: str) -> list[GpuHealth]:
    """`amd-smi xgmi`: the text LINK METRIC TABLE (bit rate, max bandwidth, link type per GPU)
    or its JSON (per GPU: link_metrics {bit_rate, max_bandwidth, link_type, links: [...]})."""
    data = load_json(text)
    if data is None:
        out = []
        for line in text.splitlines():
            if m := _XGMI_ROW.match(line.strip()):
                out.append(
                    GpuHealth(
                        index=int(m.group(1)),
                        bdf=full_bdf(m.group(2)),
                        xgmi_link_type=_word(m.group(5)),
                        xgmi_bit_rate_gbps=_number(m.group(3)),
                        xgmi_max_bandwidth_gbps=_number(m.group(4)),
                    )
                )
        return out
    out = []
    for pos, g in enumerate(amd_smi_gpus(_lower(data) if not isinstance(data, list) else data)):
        g = _lower(g)
        metric = _section(g, "link_metrics", "xgmi_metric", "metric")
        links = metric.get("links") if isinstance(metric.get("links"), list) else []
        out.append(
            GpuHealth(
                index=g.get("gpu") if isinstance(g.get("gpu"), int) else pos,
                bdf=full_bdf(str(g.get("bdf") or "")),
                xgmi_link_type=_word(metric.get("link_type")),
                xgmi_bit_rate_gbps=_number(metric.get("bit_rate")),
                xgmi_max_bandwidth_gbps=_number(metric.get("max_bandwidth")),
                xgmi_links=tuple(
                    XgmiLink(
                        full_bdf(str(ln.get("bdf") or "")) or f"gpu{ln.get('gpu', '?')}",
                        _word(ln.get("link_status") or ln.get("status")),
                        _count(ln.get("error_count") or ln.get("errors")),
                    )
                    for ln in links
                    if isinstance(ln, dict)
                ),
            )
        )
    return out


# --- one host's health facts ---------------------------------------------------------------------

HEALTH_PROBES = (
    "amd-smi-static",
    "amd-smi-metric",
    "amd-smi-xgmi",
    "amd-smi-bad-pages",
    "amdgpu-ras",
    "rocm-smi-ras",
)


@dataclass(frozen=True)
class GpuHealthFacts:
    """What the health checks read. A field is None when its probe gave nothing (absent,
    missing tool, failed); an empty tuple when it ran and listed no GPU."""

    gpus: tuple[GpuHealth, ...] | None = None  # amd-smi static + metric, else rocm-smi RAS
    xgmi: tuple[GpuHealth, ...] | None = None  # amd-smi xgmi
    bad_pages: tuple[BadPages, ...] | None = None  # amd-smi bad-pages
    sysfs: tuple[SysfsRas, ...] | None = None  # amdgpu-ras

    @property
    def collected(self) -> bool:
        return any(v is not None for v in (self.gpus, self.xgmi, self.bad_pages, self.sysfs))


def build_health(texts: dict[str, str | None]) -> GpuHealthFacts | None:
    """Probe id -> stdout (None when the probe did not run or its tool is missing)."""
    static, metric = texts.get("amd-smi-static"), texts.get("amd-smi-metric")
    xgmi, bad, ras = (texts.get(k) for k in ("amd-smi-xgmi", "amd-smi-bad-pages", "amdgpu-ras"))
    gpus = parse_health(static or "", metric or "") if static or metric else []
    rocm_smi = texts.get("rocm-smi-ras")
    if rocm_smi and not any(g.blocks or g.ras_block_state for g in gpus):
        older = [health_from_doc(d, i) for i, d in enumerate(parse_rocm_smi_rasinfo(rocm_smi))]
        by_index = {g.index: g for g in older}
        gpus = [_merge(g, by_index.pop(g.index, None)) for g in gpus] + list(by_index.values())
    seen = static is not None or metric is not None or rocm_smi is not None
    facts = GpuHealthFacts(
        gpus=tuple(gpus) if seen else None,
        xgmi=tuple(parse_xgmi(xgmi)) if xgmi is not None else None,
        bad_pages=tuple(parse_amd_smi_bad_pages(bad)) if bad is not None else None,
        sysfs=tuple(parse_ras_sysfs(ras)) if ras is not None else None,
    )
    return facts if facts.collected else None


def _merge(g: GpuHealth, ras: GpuHealth | None) -> GpuHealth:
    """amd-smi's reading of a GPU, with rocm-smi's RAS blocks where amd-smi had none."""
    if ras is None:
        return g
    return replace(g, blocks=ras.blocks, ras_block_state=ras.ras_block_state)
