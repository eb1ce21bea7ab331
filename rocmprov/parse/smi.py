"""rocm-smi --json and amd-smi --json -> one SmiGpu per GPU. Pure; tolerant of every shape.

rocm-smi: {"card0": {...}, "system": {...}} with key spellings that changed across releases.
amd-smi: a bare list on ROCm 6.x, {"gpu_data": [...]} on 7.x; numbers as {"value","unit"}
or "N/A".
"""

from __future__ import annotations

import json
import math
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


_UNIT = {
    "B": 1,
    "KB": 1 << 10,
    "KIB": 1 << 10,
    "MB": 1 << 20,
    "MIB": 1 << 20,
    "GB": 1 << 30,
    "GIB": 1 << 30,
    "TB": 1 << 40,
}


_MAX_JSON_TRIES = 64


def load_json(text: str) -> Any:
    """The first JSON document in text; None if none. Tools print lines before it ("WARNING: No
    AMD GPUs specified", amd-smi's "'CTRL' + 'C' to stop watching output:"), so every line that
    starts with { or [ is tried in turn."""
    decoder = json.JSONDecoder()
    tries = 0
    for m in re.finditer(r"(?m)^[ \t]*([\[{])", text):
        tries += 1
        if tries > _MAX_JSON_TRIES:
            break
        try:
            value, _ = decoder.raw_decode(text, m.start(1))
        except (ValueError, RecursionError):
            continue
        if isinstance(value, (dict, list)):
            return value
    return None


def normalize_gfx(raw: str) -> str:
    """rocm-smi's 'GFX Version' spells gfx90a as 'gfx9010' (9.0.10); -> the LLVM target name."""
    m = re.fullmatch(r"gfx9(\d)(\d\d)", (raw or "").strip().lower())
    if m and int(m.group(2)) >= 10:
        return f"gfx9{m.group(1)}{int(m.group(2)):x}"
    return (raw or "").strip().lower()


def parse_rocm_smi(text: str) -> list[SmiGpu]:
    """--json (the probe's form); the CSV, concise-table and `-a` text forms give the count."""
    data = load_json(text)
    if not isinstance(data, dict):
        return _rocm_smi_text(text)
    gpus = []
    for key, card in data.items():
        m = re.fullmatch(r"card(\d+)", str(key))
        if not m or not isinstance(card, dict):
            continue
        gpus.append(_card_gpu(int(m.group(1)), card))
    return sorted(gpus, key=lambda g: g.index)


def _row(keys: list[str], row: str) -> dict[str, str]:
    values = row.split(",")[1:]
    return {k: values[i] for i, k in enumerate(keys) if i < len(values)}


def _card_gpu(index: int, card: dict) -> SmiGpu:
    # "Card Model" holds the PCI device id (0x7408); the product name is in "Card Series"
    name = _first(card, ("Card Series", "Card series", "Device Name", "Marketing Name"))
    vram = _first(card, ("VRAM Total Memory (B)", "vram Total Memory (B)"))
    gfx = _first(card, ("GFX Version", "gfx_version"))
    bus = _first(card, ("PCI Bus",))
    return SmiGpu(
        index,
        str(name or ""),
        str(bus or "").lower(),
        str(gfx or ""),
        _bytes(vram, "B"),
        tuple(card),
    )


_ANSI = re.compile(r"\x1b\[[0-9;]*m|\^\[\[?[0-9;]*m")


def _rocm_smi_text(text: str) -> list[SmiGpu]:
    lines = [_ANSI.sub("", line) for line in text.splitlines()]
    # CSV: "device,GPU use (%),...", then "card0,..."
    for i, line in enumerate(lines):
        if line.startswith("device,"):
            keys = line.split(",")[1:]
            return [
                _card_gpu(int(r.split(",")[0][4:]), _row(keys, r))
                for r in lines[i + 1 :]
                if re.match(r"card\d+,", r)
            ]
    # `rocm-smi -a` text: "GPU[0]          : key: value"
    found = sorted({int(n) for n in re.findall(r"(?m)^\s*GPU\[(\d+)\]\s*:", "\n".join(lines))})
    if found:
        return [SmiGpu(n) for n in found]
    # concise table: rows under a "GPU Temp ..." / "Device Node ..." header, maybe prefixed
    gpus: list[SmiGpu] = []
    prefix: str | None = None
    for line in lines:
        if prefix is None:
            m = re.match(r"^(.*?)(?:GPU|Device)\s+(?:Node\s+)?(?:IDs\s+)?Temp\b", line)
            if m:
                prefix = m.group(1)
            continue
        body = line[len(prefix) :] if line.startswith(prefix) else line
        if "End of ROCm SMI Log" in body:
            break
        row = re.match(r"^(\d+)\s+\S", body)
        if row:
            gpus.append(SmiGpu(int(row.group(1))))
    return gpus


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
    number = _float(v)
    if number is None:
        return None
    factor = _UNIT.get(unit.strip().upper())
    if factor is None or number < 0 or not math.isfinite(number * factor):
        return None
    return int(number * factor)


@dataclass(frozen=True)
class GpuMetrics:
    """One GPU's live readings from `amd-smi metric --json`; None where the tool says N/A."""

    index: int
    temperatures_celsius: tuple[tuple[str, float], ...] = ()  # (sensor, value): edge, hotspot, mem
    power_watts: float | None = None
    vram_used_bytes: int | None = None
    vram_total_bytes: int | None = None
    ecc_correctable: int | None = None
    ecc_uncorrectable: int | None = None


# Spellings across amd-smi releases (6.0 .. 7.x), first present wins.
_POWER_KEYS = ("socket_power", "current_socket_power", "average_socket_power")
_ECC_CORRECTABLE = ("total_correctable_count", "correctable_count", "total_correctable")
_ECC_UNCORRECTABLE = ("total_uncorrectable_count", "uncorrectable_count", "total_uncorrectable")
_TEMP_SENSORS = ("edge", "hotspot", "junction", "mem", "hbm")


def parse_amd_smi_metric(text: str) -> list[GpuMetrics]:
    """`amd-smi metric --json` of both eras (bare list on 6.x, {"gpu_data": [...]} on 7.x; watch
    mode's per-sample "timestamp" key is ignored). Sections may be the string "N/A"."""
    out = []
    for pos, g in enumerate(amd_smi_gpus(load_json(text))):
        index = g.get("gpu") if isinstance(g.get("gpu"), int) else pos
        temp = _section(g, "temperature")
        power = _section(g, "power")
        mem = _section(g, "mem_usage")
        ecc = _section(g, "ecc")
        temps = tuple(
            (sensor, value)
            for sensor in _TEMP_SENSORS
            if (value := _number(temp.get(sensor), ("C", "°C", "CELSIUS"))) is not None
        )
        out.append(
            GpuMetrics(
                index=index,
                temperatures_celsius=temps,
                power_watts=_number(_first(power, _POWER_KEYS), ("W", "WATT", "WATTS")),
                vram_used_bytes=_bytes(mem.get("used_vram"), "MB"),
                vram_total_bytes=_bytes(mem.get("total_vram"), "MB"),
                ecc_correctable=_count(_first(ecc, _ECC_CORRECTABLE)),
                ecc_uncorrectable=_count(_first(ecc, _ECC_UNCORRECTABLE)),
            )
        )
    return out


def _section(g: dict, key: str) -> dict:
    v = g.get(key)
    return v if isinstance(v, dict) else {}


def _number(v: Any, units: tuple[str, ...]) -> float | None:
    """42, "42", {"value": 42, "unit": "C"} -> 42.0; "N/A", a foreign unit or NaN -> None."""
    if isinstance(v, dict):
        unit = str(v.get("unit") or "").strip().upper()
        if unit and unit not in units:
            return None
        v = v.get("value")
    return _float(v)


def _float(v: Any) -> float | None:
    """42, "42", 4.2 -> a float; a bool, None, "N/A", NaN, infinity (also a number too large
    for a float: "1e999", 10**400) or garbage -> None."""
    if isinstance(v, bool) or v is None:
        return None
    try:
        number = float(v)
    except (TypeError, ValueError, OverflowError):
        return None
    return number if math.isfinite(number) else None


def _count(v: Any) -> int | None:
    n = _number(v, ("",))
    return int(n) if n is not None and n >= 0 and n == int(n) else None
