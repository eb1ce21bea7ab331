"""The `pci-sysfs` probe's text -> PciDevice list (parent from the sysfs path). Pure."""

from __future__ import annotations

import re

from rocmprov.parse.pci import Bar, Link, PciDevice, normalize_bdf, parse_speed, parse_width

_BDF = re.compile(r"^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$")
# resource flags (include/linux/ioport.h): MEM 0x200, PREFETCH 0x2000, MEM_64 0x100000
_IORESOURCE_MEM = 0x200
_IORESOURCE_PREFETCH = 0x2000
_IORESOURCE_MEM_64 = 0x100000
_BAR_LINES = 6  # resource lines 0-5 are the BARs; 6 is the ROM, then SR-IOV


def parse_pci_sysfs(text: str) -> list[PciDevice]:
    devices = []
    for block in re.split(r"\n\s*\n", text):
        dev = _block(block)
        if dev is not None:
            devices.append(dev)
    return devices


def _block(block: str) -> PciDevice | None:
    attrs: dict[str, str] = {}
    resources: list[str] = []
    for line in block.splitlines():
        key, _, value = line.strip().partition(" ")
        if key == "resource":
            resources.append(value)
        elif key:
            attrs.setdefault(key, value.strip())
    bdf = attrs.get("bdf", "").lower()
    if not _BDF.match(bdf):
        return None
    chain = [p for p in attrs.get("path", "").split("/") if _BDF.match(p.lower())]
    parent = chain[-2].lower() if len(chain) >= 2 and chain[-1].lower() == bdf else ""
    cls = attrs.get("class", "").lower().removeprefix("0x")
    return PciDevice(
        bdf=normalize_bdf(bdf),
        vendor_id=attrs.get("vendor", "").lower().removeprefix("0x"),
        device_id=attrs.get("device", "").lower().removeprefix("0x"),
        class_id=cls[:4],
        parent=parent,
        link_cap=Link(
            parse_speed(attrs.get("max_link_speed", "")),
            parse_width(attrs.get("max_link_width", "")),
        ),
        link_sta=Link(
            parse_speed(attrs.get("current_link_speed", "")),
            parse_width(attrs.get("current_link_width", "")),
        ),
        bars=tuple(_bars(resources)),
        driver=attrs.get("driver", ""),
    )


def _bars(lines: list[str]) -> list[Bar]:
    bars = []
    for index, line in enumerate(lines[:_BAR_LINES]):
        try:
            start, end, flags = (int(x, 16) for x in line.split()[:3])
        except ValueError:
            continue
        if end <= start or not flags & _IORESOURCE_MEM:
            continue
        bars.append(
            Bar(
                index=index,
                size=end - start + 1,
                prefetchable=bool(flags & _IORESOURCE_PREFETCH),
                is64=bool(flags & _IORESOURCE_MEM_64),
            )
        )
    return bars


# --- other sysfs texts people paste (tests/fixtures/sysfs) -----------------------------------

_DPM = re.compile(r"^\s*(\d+):\s*(\d+(?:\.\d+)?)GT/s,\s*x(\d+)\s+(\d+)Mhz\s*(\*)?", re.I)


def parse_pp_dpm_pcie(text: str) -> list[dict]:
    """amdgpu's pp_dpm_pcie ('1: 8.0GT/s, x16 619Mhz *') -> levels; '*' marks the current."""
    out = []
    for line in text.splitlines():
        if m := _DPM.match(line):
            out.append(
                {
                    "level": int(m.group(1)),
                    "speed_gts": float(m.group(2)),
                    "width": int(m.group(3)),
                    "mhz": int(m.group(4)),
                    "current": bool(m.group(5)),
                }
            )
    return out


_LINK_ATTRS = ("current_link_speed", "current_link_width", "max_link_speed", "max_link_width")


def parse_link_files(text: str) -> dict[str, dict[str, str]]:
    """`grep . .../*_link_*` ('path:value') or `tail -v -n +1` ('==> path <==' then value)
    -> {device directory: {attr: value}}."""
    out: dict[str, dict[str, str]] = {}
    current = ""
    for line in text.splitlines():
        if m := re.match(r"^==> (.+) <==$", line.strip()):
            current = m.group(1)
            continue
        path, sep, value = line.partition(":")
        if sep and path.rsplit("/", 1)[-1] in _LINK_ATTRS and path.startswith("/"):
            directory, attr = path.rsplit("/", 1)
            out.setdefault(directory, {})[attr] = value.strip()
        elif current and line.strip():
            directory, _, attr = current.rpartition("/")
            if attr in _LINK_ATTRS:
                out.setdefault(directory, {}).setdefault(attr, line.strip())
                current = ""
    return out
