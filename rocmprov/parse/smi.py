"""rocm-smi --json and amd-smi --json -> one SmiGpu per GPU. Pure; tolerant of every shape.

rocm-smi: {"card0": {...}, "system": {...}} with key spellings that changed across releases.
amd-smi: a bare list on ROCm 6.x, {"gpu_data": [...]} on 7.x; numbers as {"value","unit"}
or "N/A".
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class SmiGpu:
    index: int
    name: str = ""
    bdf: str = ""
    gfx: str = ""
    vram_total_bytes: int | None = None
    keys: tuple[str, ...] = ()


_UNIT = {"B": 1, "KB": 1 << 10, "KIB": 1 << 10, "MB": 1 << 20, "MIB": 1 << 20,
         "GB": 1 << 30, "GIB": 1 << 30, "TB": 1 << 40}


def load_json(text: str) -> Any:
    """The first JSON document in text (tools print warnings before it); None if none."""
    start = min((i for i in (text.find("{"), text.find("[")) if i >= 0), default=-1)
    if start < 0:
        return None
    try:
        value, _ = json.JSONDecoder().raw_decode(text[start:])
    except ValueError:
        return None
    return value


def parse_rocm_smi(text: str) -> list[SmiGpu]:
    data = load_json(text)
    if not isinstance(data, dict):
        return []
    gpus = []
    for key, card in data.items():
        m = re.fullmatch(r"card(\d+)", str(key))
        if not m or not isinstance(card, dict):
            continue
        name = _first(card, ("Card Series", "Card series", "Card model", "Card Model",
                             "Device Name", "Marketing Name"))
        vram = _first(card, ("VRAM Total Memory (B)", "vram Total Memory (B)"))
        gfx = _first(card, ("GFX Version", "gfx_version"))
        gpus.append(SmiGpu(int(m.group(1)), str(name or ""), "", str(gfx or ""),
                           _bytes(vram, "B"), tuple(card)))
    return sorted(gpus, key=lambda g: g.index)


def amd_smi_gpus(data: Any) -> list[dict]:
    """Both shapes -> the list of per-GPU dicts."""
    if isinstance(data, dict) and isinstance(data.get("gpu_data"), list):
        data = data["gpu_data"]
    if isinstance(data, dict) and "gpu" in data:
        data = [data]
    return [g for g in data if isinstance(g, dict)] if isinstance(data, list) else []


def amd_smi_shape(text: str) -> str:
    data = load_json(text)
    if isinstance(data, dict) and "gpu_data" in data:
        return "gpu_data"
    return "list" if isinstance(data, list) else ""


def parse_amd_smi(text: str) -> list[SmiGpu]:
    gpus = []
    for pos, g in enumerate(amd_smi_gpus(load_json(text))):
        asic = g.get("asic") if isinstance(g.get("asic"), dict) else {}
        bus = g.get("bus") if isinstance(g.get("bus"), dict) else {}
        vram = g.get("vram") if isinstance(g.get("vram"), dict) else {}
        usage = g.get("mem_usage") if isinstance(g.get("mem_usage"), dict) else {}
        index = g.get("gpu") if isinstance(g.get("gpu"), int) else pos
        size = vram.get("size", usage.get("total_vram"))
        gpus.append(
            SmiGpu(
                index=index,
                name=_str(asic.get("market_name")),
                bdf=_str(bus.get("bdf")).lower(),
                gfx=_str(asic.get("target_graphics_version")),
                vram_total_bytes=_bytes(size, "MB"),
                keys=tuple(g),
            )
        )
    return gpus


def _first(d: dict, keys: tuple[str, ...]) -> Any:
    for k in keys:
        if k in d and d[k] not in (None, "", "N/A"):
            return d[k]
    return None


def _str(v: Any) -> str:
    return "" if v is None or v == "N/A" else str(v)


def _bytes(v: Any, default_unit: str) -> int | None:
    """12345, "12345", {"value": 64, "unit": "GB"}, "N/A" -> bytes or None."""
    unit = default_unit
    if isinstance(v, dict):
        unit = str(v.get("unit") or default_unit)
        v = v.get("value")
    if isinstance(v, bool) or v is None:
        return None
    try:
        number = float(v)
    except (TypeError, ValueError):
        return None
    factor = _UNIT.get(unit.strip().upper())
    if factor is None or number < 0:
        return None
    return int(number * factor)
