"""`lspci -vvv [-nn] [-D]` (also `-v`, non-root) text -> PciDevice list. Pure; survives any input.

Real formats handled (see tests/fixtures/lspci): with or without -nn ids and -D domains;
`Region N: Memory at ...` (-vv) and bare `Memory at ...` (-v) BAR lines; `[disabled]`/`[virtual]`
markers; LnkSta with `(downgraded)`, `(ok)` or nothing; `Capabilities: <access denied>` as a
non-root user. Without -nn the vendor is read from the name ("[AMD/ATI]" is 1002) and the device
id from a trailing "Device 67df".
"""

from __future__ import annotations

import re
from dataclasses import replace

from rocmprov.parse.pci import Bar, Link, PciDevice, normalize_bdf, parse_speed, parse_width

_HEADER = re.compile(
    r"^(?P<bdf>(?:[0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])\s+"
    r"(?P<cls>[^:\[]*?)(?:\s*\[(?P<clsid>[0-9a-fA-F]{4})\])?:\s*(?P<rest>.*)$"
)
_IDS = re.compile(r"\[([0-9a-fA-F]{4}):([0-9a-fA-F]{4})\]")
_MEM = re.compile(
    r"^\s*(?:Region (?P<idx>\d+): )?(?:\[(?:disabled|virtual)\] )?"
    r"Memory at \S+ \((?P<bits>32|64)-bit, "
    r"(?P<pf>non-prefetchable|prefetchable)\)(?: \[(?:disabled|virtual)\])* "
    r"\[size=(?P<size>\d+)(?P<unit>[KMGT]?)\]"
)
_LNK = re.compile(r"^\s*(?P<kind>LnkCap|LnkSta):\s*(?P<body>.*)$")
# "LnkCap2: Supported Link Speeds: 2.5-8GT/s": what the port can do, whatever LnkCap (which
# the BIOS may have capped) says
_LNKCAP2 = re.compile(r"^\s*LnkCap2:\s*Supported Link Speeds:\s*([\d.]+)(?:-([\d.]+))?GT/s")
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
    "audio device": "0403",
}
# vendor names as lspci prints them (pci.ids) -> vendor id, for output without -nn
_VENDOR_WORDS = (
    ("[AMD/ATI]", "1002"),
    ("Advanced Micro Devices, Inc. [AMD]", "1022"),
    ("NVIDIA Corporation", "10de"),
    ("Intel Corporation", "8086"),
)
_DEVICE_WORD = re.compile(r"\bDevice ([0-9a-fA-F]{4})$")


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


def parse_lspci_block(text: str) -> PciDevice:
    """The capability lines of ONE device without its header line (e.g. `lspci -s X -vv | grep
    Lnk`, or an excerpt cut below the header): a PciDevice with bdf ""."""
    fields = _fields(text.splitlines())
    return _build(fields, bdf="", vendor="", device="", class_id="", name="")


def _fields(lines: list[str]) -> dict:
    fields: dict = {"bars": [], "caps_denied": False, "downgraded": False}
    for line in lines:
        _read_line(line, fields)
    return fields


def _device(lines: list[str]) -> PciDevice:
    head = _HEADER.match(lines[0])
    assert head is not None
    rest = head.group("rest")
    ids = _IDS.findall(rest)
    name = _IDS.sub("", rest)
    name = re.sub(r"\s*\(prog-if [^)]*\)", "", name)
    name = re.sub(r"\s*\(rev [0-9a-fA-F]+\)", "", name).strip()
    if ids:
        vendor, device = ids[-1]
    else:
        vendor = next((vid for word, vid in _VENDOR_WORDS if word in name), "")
        m = _DEVICE_WORD.search(name)
        device = m.group(1) if m else ""
    cls_word = head.group("cls").strip()
    class_id = (head.group("clsid") or _CLASS_WORDS.get(cls_word.lower(), "")).lower()
    return _build(
        _fields(lines[1:]),
        bdf=normalize_bdf(head.group("bdf")),
        vendor=vendor.lower(),
        device=device.lower(),
        class_id=class_id,
        name=name,
    )


def _build(
    fields: dict, *, bdf: str, vendor: str, device: str, class_id: str, name: str
) -> PciDevice:
    return PciDevice(
        bdf=bdf,
        vendor_id=vendor,
        device_id=device,
        class_id=class_id,
        name=name,
        link_cap=fields.get("LnkCap", Link()),
        link_sta=fields.get("LnkSta", Link()),
        supported_speed=fields.get("supported_speed"),
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
    if m := _MEM.match(line):
        fields["bars"].append(
            Bar(
                index=int(m.group("idx")) if m.group("idx") is not None else -1,
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
    elif m := _LNKCAP2.match(line):
        fields["supported_speed"] = float(m.group(2) or m.group(1))
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
        out.append(replace(d, parent=parent if parent != d.bdf else ""))
    return out
