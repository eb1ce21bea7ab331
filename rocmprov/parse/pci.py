"""Typed PCI facts shared by the lspci and sysfs parsers."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

AMD_VENDOR = "1002"
# PCI base classes of GPUs: 03 display (VGA 0300, 3D 0302, other 0380), 12 processing accelerator
GPU_CLASS_PREFIXES = ("03", "12")
BRIDGE_CLASS_PREFIX = "0604"


@dataclass(frozen=True)
class Link:
    speed_gts: float | None = None  # GT/s; None when unreadable
    width: int | None = None


@dataclass(frozen=True)
class Bar:
    index: int
    size: int  # bytes
    prefetchable: bool = False
    is64: bool = False


@dataclass(frozen=True)
class PciDevice:
    """One PCI function. `parent` is the BDF of the bridge above it ("" at a root bus)."""

    bdf: str
    vendor_id: str = ""  # 4 lower-case hex digits
    device_id: str = ""
    class_id: str = ""  # 4 hex digits, base+sub class, e.g. "0380"
    name: str = ""
    parent: str = ""
    link_cap: Link = field(default_factory=Link)
    link_sta: Link = field(default_factory=Link)
    supported_speed: float | None = None  # LnkCap2's top speed (lspci); sysfs max already is
    downgraded: bool = False
    caps_denied: bool = False
    bars: tuple[Bar, ...] = ()
    driver: str = ""
    secondary_bus: str = ""  # bridges: the bus number below, for building the tree

    @property
    def is_gpu(self) -> bool:
        return self.class_id[:2] in GPU_CLASS_PREFIXES

    @property
    def is_amd_gpu(self) -> bool:
        return self.vendor_id == AMD_VENDOR and self.is_gpu

    @property
    def is_bridge(self) -> bool:
        return self.class_id.startswith(BRIDGE_CLASS_PREFIX)

    @property
    def link_readable(self) -> bool:
        return self.link_sta.speed_gts is not None or self.link_sta.width is not None


_SPEED = re.compile(r"(\d+(?:\.\d+)?)\s*GT/s", re.IGNORECASE)


def parse_speed(text: str) -> float | None:
    """'16GT/s', '16.0 GT/s PCIe', '2.5 GT/s' -> GT/s; anything else -> None."""
    m = _SPEED.search(text or "")
    return float(m.group(1)) if m else None


def parse_width(text: str) -> int | None:
    """'x16', '16' -> 16; 'x0'/garbage -> None."""
    m = re.search(r"x?(\d+)", text or "")
    if not m:
        return None
    value = int(m.group(1))
    return value if 0 < value <= 64 else None


def normalize_bdf(bdf: str) -> str:
    """'03:00.0' -> '0000:03:00.0'; lower-case."""
    bdf = bdf.strip().lower()
    return bdf if bdf.count(":") == 2 else f"0000:{bdf}"


PCIE_GEN_BY_SPEED = {2.5: 1, 5.0: 2, 8.0: 3, 16.0: 4, 32.0: 5, 64.0: 6}


def gen_of(speed: float | None) -> int | None:
    return PCIE_GEN_BY_SPEED.get(speed) if speed is not None else None


def human_size(size: int) -> str:
    for unit, factor in (("T", 1 << 40), ("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if size >= factor and size % factor == 0:
            return f"{size // factor}{unit}"
    return f"{size}B"
