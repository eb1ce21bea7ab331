"""`lspci -vvv [-nn] [-D]` text -> PciDevice list. Pure; survives any input."""

from __future__ import annotations

import re

from rocmprov.parse.pci import Bar, Link, PciDevice, normalize_bdf, parse_speed, parse_width

_HEADER = re.compile(
    r"^(?P<bdf>(?:[0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])\s+"
    r"(?P<cls>[^:]*?)(?:\s*\[(?P<clsid>[0-9a-fA-F]{4})\])?:\s*(?P<rest>.*)$"
)
_IDS = re.compile(r"\[([0-9a-fA-F]{4}):([0-9a-fA-F]{4})\]")
_REGION = re.compile(
    r"^\s*Region (?P<idx>\d+): Memory at \S+ \((?P<bits>32|64)-bit, (?P<pf>non-prefetchable|"
    r"prefetchable)\)(?: \[disabled\])? \[size=(?P<size>\d+)(?P<unit>[KMGT]?)\]"
)
_LNK = re.compile(r"^\s*(?P<kind>LnkCap|LnkSta):\s*(?P<body>.*)$")
_BUS = re.compile(r"^\s*Bus: primary=([0-9a-fA-F]{2}), secondary=([0-9a-fA-F]{2})")
_DRIVER = re.compile(r"^\s*Kernel driver in use:\s*(\S+)")
_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}

# lspci names classes in words; map the ones that matter when -nn is absent.
_CLASS_WORDS = {
    "vga compatible controller": "0300",
    "3d controller": "0302",
    "display controller": "0380",
    "processing accelerators": "1200",
    "pci bridge": "0604",
    "host bridge": "0600",
}


def parse_lspci(text: str) -> list[PciDevice]:
    devices: list[PciDevice] = []
    block: list[str] = []
    for line in text.splitlines():
        if _HEADER.match(line):
            if block:
                devices.append(_device(block))
            block = [line]
        elif block:
            block.append(line)
    if block:
        devices.append(_device(block))
    return _link_parents(devices)


def _device(lines: list[str]) -> PciDevice:
    head = _HEADER.match(lines[0])
    assert head is not None
    rest = head.group("rest")
    ids = _IDS.findall(rest)
    vendor, device = ids[-1] if ids else ("", "")
    cls_word = head.group("cls").strip()
    class_id = (head.group("clsid") or _CLASS_WORDS.get(cls_word.lower(), "")).lower()
    fields: dict = {"bars": [], "caps_denied": False, "downgraded": False}
    for line in lines[1:]:
        _read_line(line, fields)
    name = _IDS.sub("", rest)
    name = re.sub(r"\s*\(rev [0-9a-fA-F]+\)\s*$", "", name).strip()
    return PciDevice(
        bdf=normalize_bdf(head.group("bdf")),
        vendor_id=vendor.lower(),
        device_id=device.lower(),
        class_id=class_id,
        name=name,
        link_cap=fields.get("LnkCap", Link()),
        link_sta=fields.get("LnkSta", Link()),
        downgraded=fields["downgraded"],
        caps_denied=fields["caps_denied"],
        bars=tuple(fields["bars"]),
        driver=fields.get("driver", ""),
        secondary_bus=fields.get("secondary", ""),
    )


def _read_line(line: str, fields: dict) -> None:
    if "Capabilities: <access denied>" in line:
        fields["caps_denied"] = True
        return
    if m := _REGION.match(line):
        fields["bars"].append(
            Bar(
                index=int(m.group("idx")),
                size=int(m.group("size")) * _UNITS[m.group("unit")],
                prefetchable=m.group("pf") == "prefetchable",
                is64=m.group("bits") == "64",
            )
        )
    elif (m := _LNK.match(line)) and m.group("kind") not in fields:
        body = m.group("body")
        speed = re.search(r"Speed ([^,]*)", body)
        width = re.search(r"Width (x\d+)", body)
        fields[m.group("kind")] = Link(
            parse_speed(speed.group(1)) if speed else None,
            parse_width(width.group(1)) if width else None,
        )
        if m.group("kind") == "LnkSta" and "downgraded" in body:
            fields["downgraded"] = True
    elif m := _BUS.match(line):
        fields["secondary"] = m.group(2).lower()
    elif m := _DRIVER.match(line):
        fields["driver"] = m.group(1)


def _link_parents(devices: list[PciDevice]) -> list[PciDevice]:
    """A device on bus B of domain D sits below the bridge whose secondary bus is B."""
    below: dict[tuple[str, str], str] = {}
    for d in devices:
        if d.secondary_bus:
            below[(d.bdf[:4], d.secondary_bus)] = d.bdf
    out = []
    for d in devices:
        parent = below.get((d.bdf[:4], d.bdf[5:7]), "")
        out.append(_replace_parent(d, parent if parent != d.bdf else ""))
    return out


def _replace_parent(d: PciDevice, parent: str) -> PciDevice:
    from dataclasses import replace

    return replace(d, parent=parent)
