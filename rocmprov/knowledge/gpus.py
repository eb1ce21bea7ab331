"""Which GPUs a ROCm release supports (support_matrix.yaml): gfx targets -> products and their
lifecycle (maintenance, deprecated, unsupported), PCI IDs -> names and targets. Pure lookups."""

from __future__ import annotations

import re
from typing import Any

from packaging.version import Version

from rocmprov.knowledge.matrix import (
    CRITICAL,
    OK,
    UNKNOWN,
    WARNING,
    Verdict,
    _gfx,
    _release_entry,
    _unknown_release,
    load_matrix,
    parse_release,
)


def _gpu_entry(gfx: str) -> dict[str, Any] | None:
    for entry in load_matrix().get("gpus", []):
        if entry.get("gfx") == gfx:
            return entry
    return None


def products_for_gfx(gfx: str) -> tuple[str, ...]:
    """Product names AMD lists for a target, e.g. gfx90a -> MI250X, MI250, MI210."""
    entry = _gpu_entry(_gfx(gfx))
    return tuple(entry.get("products", [])) if entry else ()


def _lifecycle_stage(entry: dict[str, Any], v: Version | None) -> dict[str, Any] | None:
    stages = entry.get("lifecycle") or []
    if v is None:
        return stages[-1] if stages else None
    current = None
    for stage in stages:
        start = parse_release(str(stage.get("from", "")))
        if start is not None and start <= v:
            current = stage
    return current


_STAGE_STATUS = {"maintenance": WARNING, "deprecated": WARNING, "unsupported": CRITICAL}


def gpu_verdict(gfx: str, rocm: str | None) -> Verdict:
    """Is this GPU target supported, and by this ROCm release (None: by any release we know)?

    ok: listed; warning: maintenance or deprecated; critical: not enabled, or ROCm older than
    the first release that lists it; unknown: target or release not in the data.
    """
    target = _gfx(gfx)
    if not target:
        return Verdict(
            UNKNOWN, str(gfx), "an LLVM target like gfx942", "cannot parse the GPU target"
        )
    entry = _gpu_entry(target)
    names = ", ".join(products_for_gfx(target))
    label = f"{target} ({names})" if names else target
    if entry is None:
        return Verdict(
            UNKNOWN, target, "", f"{target} is not in rocmprov's GPU data; cannot judge it", ""
        )
    min_rocm = entry.get("min_rocm")
    min_text = f"ROCm >= {min_rocm}" if min_rocm else ""
    source = str(entry.get("source", ""))
    if rocm is None:
        stage = _lifecycle_stage(entry, None)
        if stage:
            return Verdict(
                _STAGE_STATUS.get(stage["status"], WARNING),
                label,
                min_text,
                f"{stage['status']} from ROCm {stage['from']}: {stage.get('why', '')}".strip(),
                str(stage.get("source", source)),
            )
        return Verdict(OK, label, min_text, f"AMD supports {label} from ROCm {min_rocm}", source)
    v = parse_release(rocm)
    if v is None:
        return Verdict(UNKNOWN, label, min_text, f"cannot parse the ROCm version {rocm!r}", source)
    min_v = parse_release(str(min_rocm)) if min_rocm else None
    if min_v is not None and v < min_v:
        if not entry.get("min_rocm_exact"):
            return Verdict(
                UNKNOWN,
                f"{label} on ROCm {rocm}",
                min_text,
                f"rocmprov's data for {target} starts at ROCm {min_rocm} (AMD's matrix begins "
                "there); support in older releases is not recorded",
                source,
            )
        return Verdict(
            CRITICAL,
            f"{label} on ROCm {rocm}",
            min_text,
            f"ROCm {rocm} is older than the first release that supports {target}: {min_rocm}",
            source,
        )
    stage = _lifecycle_stage(entry, v)
    if stage:
        return Verdict(
            _STAGE_STATUS.get(stage["status"], WARNING),
            f"{label} on ROCm {rocm}",
            "a target AMD fully supports",
            f"{target} is {stage['status']} from ROCm {stage['from']}: {stage.get('why', '')}",
            str(stage.get("source", source)),
        )
    _, release = _release_entry(rocm)
    if release is None or not release.get("gpus"):
        return _unknown_release(rocm, v, "GPU support")
    rel_source = str(release.get("source", source))
    listed = [str(g) for g in release.get("gpus", [])]
    if target in listed:
        return Verdict(
            OK,
            f"{label} on ROCm {rocm}",
            ", ".join(listed),
            f"{target} is listed for ROCm {release['rocm']} (as of {release.get('as_of')})",
            rel_source,
        )
    return Verdict(
        CRITICAL,
        f"{label} on ROCm {rocm}",
        ", ".join(listed),
        f"{target} is not among the targets AMD lists for ROCm {release['rocm']}",
        rel_source,
    )


def _pci_entry(device_id: object) -> dict[str, Any] | None:
    if not isinstance(device_id, str):
        return None
    text = device_id.strip().lower()
    if ":" in text:  # "1002:74a1" (lspci -n style)
        vendor, _, text = text.partition(":")
        if vendor.removeprefix("0x") != "1002":
            return None
    text = text.removeprefix("0x")
    if not re.fullmatch(r"[0-9a-f]{4}", text):
        return None
    for entry in load_matrix().get("pci_ids", []):
        if str(entry.get("id", "")).lower() == f"0x{text}":
            return entry
    return None


def gfx_for_pci(device_id: str) -> str | None:
    """AMD PCI device ID ("0x74a1", "74a1" or "1002:74a1") -> LLVM target, None if unknown."""
    entry = _pci_entry(device_id)
    return str(entry["gfx"]) if entry and entry.get("gfx") else None


def pci_name(device_id: str) -> str | None:
    """AMD PCI device ID -> its pci.ids name (e.g. "Aqua Vanjaram [Instinct MI300X]")."""
    entry = _pci_entry(device_id)
    return str(entry["name"]) if entry and entry.get("name") else None
