"""amdgpu's RAS sysfs (/sys/class/drm/cardN/device/ras) as the `amdgpu-ras` probe prints it. Pure.

Formats from the kernel's amdgpu RAS documentation (https://docs.kernel.org/gpu/amdgpu/ras.html):
`*_err_count` holds "ue: N" and "ce: N" lines; `gpu_vram_bad_pages` one page a line,
"gpu pfn : gpu page size : flags" with R (reserved, i.e. retired), P (pending), F (could not be
reserved); `features` a hexadecimal mask of the RAS features on.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class BadPages:
    index: int
    retired: int = 0
    pending: int = 0
    unreservable: int = 0


@dataclass(frozen=True)
class SysfsRas:
    """amdgpu's /sys/class/drm/cardN/device/ras: features mask, per-block counts, bad pages."""

    card: str
    features: int | None = None
    counts: tuple[tuple[str, int, int], ...] = ()  # (block, ue, ce)
    bad_pages: BadPages | None = None
    extra: dict[str, Any] = field(default_factory=dict)


# amdgpu_ras.c "AMDGPU RAS sysfs gpu_vram_bad_pages Interface": one page a line,
# "gpu pfn : gpu page size : flags"; R reserved (retired), P pending, F unable to reserve.
_BAD_PAGE = re.compile(r"^\s*(0x[0-9a-fA-F]+)\s*:\s*(0x[0-9a-fA-F]+)\s*:\s*([RPF])\s*$")


def parse_vram_bad_pages(text: str, index: int = 0) -> BadPages:
    flags = [m.group(3) for line in text.splitlines() if (m := _BAD_PAGE.match(line))]
    return BadPages(index, flags.count("R"), flags.count("P"), flags.count("F"))


_CARD = re.compile(r"^== (card\d+) (\S+)$")
_ERR = re.compile(r"^\s*(ue|ce|de):\s*(\d+)\s*$")


def parse_ras_sysfs(text: str) -> list[SysfsRas]:
    """The `amdgpu-ras` probe: '== cardN FILE' then the file's text, for ras/features,
    ras/*_err_count ('ue: N' / 'ce: N') and ras/gpu_vram_bad_pages."""
    cards: dict[str, dict[str, Any]] = {}
    card, name = "", ""
    body: list[str] = []

    def flush() -> None:
        if not card:
            return
        entry = cards.setdefault(card, {"counts": [], "bad": None, "features": None})
        text_ = "\n".join(body)
        if name == "features":
            m = re.search(r"0x[0-9a-fA-F]+", text_)
            entry["features"] = int(m.group(0), 16) if m else None
        elif name.endswith("_err_count"):
            vals = {m.group(1): int(m.group(2)) for ln in body if (m := _ERR.match(ln))}
            if vals:
                entry["counts"].append(
                    (name.removesuffix("_err_count"), vals.get("ue", 0), vals.get("ce", 0))
                )
        elif name == "gpu_vram_bad_pages":
            entry["bad"] = parse_vram_bad_pages(text_, int(card[4:]))

    for line in text.splitlines():
        if m := _CARD.match(line.strip()):
            flush()
            card, name, body = m.group(1), m.group(2), []
        else:
            body.append(line)
    flush()
    return [
        SysfsRas(c, e["features"], tuple(e["counts"]), e["bad"]) for c, e in sorted(cards.items())
    ]
