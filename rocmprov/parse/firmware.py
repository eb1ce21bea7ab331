"""Firmware and version text -> typed facts. Pure; tolerant of every shape.

- `amd-smi firmware --json`: per GPU {"gpu": N, "fw_list": [{"fw_id": "CP_MEC1", "fw_version":
  "166"}, ...]} (amdsmi_cli/amdsmi_commands.py renames the library's fw_name to fw_id), as a bare
  list (ROCm 6.x) or {"gpu_data": [...]} (7.x); the human form ("GPU: 0 / FW_LIST: / FW 0: /
  FW_ID: PM / FW_VERSION: 04.85.103.184", e.g. github.com/ROCm/ROCm/issues/4477) is read too.
- rocm-smi JSON: "<NAME> firmware version" and "VBIOS version" keys per "cardN", plus
  "system": {"Driver version": ...} (--showfwinfo, --showvbios, --showdriverversion, -a).
- the `dmi` probe: "<file> <value>" lines from /sys/class/dmi/id (readable without root).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from rocmprov.parse.smi import amd_smi_gpus, load_json


@dataclass(frozen=True)
class GpuFirmware:
    """One GPU's firmware blocks, keyed by the tool's own id (amd-smi fw_id, or rocm-smi's name
    before " firmware version"), plus the VBIOS (part number) where the tool shows it."""

    index: int
    blocks: dict[str, str] = field(default_factory=dict)
    vbios: str = ""
    tool: str = ""  # amd-smi | rocm-smi


def _clean(value: object) -> str:
    text = "" if value is None else str(value).strip()
    return "" if text.upper() in ("N/A", "NONE", "") else text[:120]


def parse_amd_smi_firmware(text: str) -> list[GpuFirmware]:
    data = load_json(text)
    if data is not None:
        out = []
        for pos, g in enumerate(amd_smi_gpus(data)):
            index = g.get("gpu") if isinstance(g.get("gpu"), int) else pos
            blocks: dict[str, str] = {}
            entries = g.get("fw_list")
            for e in entries if isinstance(entries, list) else ():
                if not isinstance(e, dict):
                    continue
                name = _clean(e.get("fw_id", e.get("fw_name")))
                version = _clean(e.get("fw_version"))
                if name and version:
                    blocks[name.upper().removeprefix("AMDSMI_FW_ID_")] = version
            out.append(GpuFirmware(index, blocks, tool="amd-smi"))
        return out
    return _amd_smi_firmware_text(text)


_GPU_LINE = re.compile(r"^\s*GPU:\s*(\d+)\s*$")
_FIELD = re.compile(r"^\s*(FW_ID|FW_VERSION):\s*(.*?)\s*$")


def _amd_smi_firmware_text(text: str) -> list[GpuFirmware]:
    gpus: dict[int, dict[str, str]] = {}
    current: dict[str, str] | None = None
    name = ""
    for line in text.splitlines():
        m = _GPU_LINE.match(line)
        if m:
            current = gpus.setdefault(int(m.group(1)), {})
            name = ""
            continue
        f = _FIELD.match(line)
        if f is None or current is None:
            continue
        if f.group(1) == "FW_ID":
            name = _clean(f.group(2)).upper()
        elif name:
            version = _clean(f.group(2))
            if version:
                current[name] = version
            name = ""
    return [GpuFirmware(i, blocks, tool="amd-smi") for i, blocks in sorted(gpus.items())]


_FW_KEY = re.compile(r"^(.*?) firmware version$", re.IGNORECASE)


def parse_rocm_smi_firmware(text: str) -> tuple[list[GpuFirmware], str]:
    """(per-card firmware and VBIOS, the driver version of the "system" block or "")."""
    data = load_json(text)
    if not isinstance(data, dict):
        return [], ""
    gpus = []
    for key, card in data.items():
        m = re.fullmatch(r"card(\d+)", str(key))
        if not m or not isinstance(card, dict):
            continue
        blocks = {}
        for k, v in card.items():
            fw = _FW_KEY.match(str(k))
            if fw and _clean(v):
                blocks[fw.group(1).strip().upper().replace(" ", "_")] = _clean(v)
        vbios = _clean(card.get("VBIOS version"))
        gpus.append(GpuFirmware(int(m.group(1)), blocks, vbios, tool="rocm-smi"))
    system = data.get("system") if isinstance(data.get("system"), dict) else {}
    return sorted(gpus, key=lambda g: g.index), _clean(system.get("Driver version"))


DMI_FILES = (
    "bios_vendor",
    "bios_version",
    "bios_date",
    "sys_vendor",
    "product_name",
    "board_vendor",
    "board_name",
)


def parse_dmi(text: str) -> dict[str, str]:
    """`<name> <value>` lines (the dmi probe) -> {name: value} for the known names only."""
    out = {}
    for line in text.splitlines():
        name, _, value = line.partition(" ")
        if name in DMI_FILES and _clean(value):
            out[name] = _clean(value)
    return out


@dataclass(frozen=True)
class StaticVersions:
    """The version facts of one GPU in `amd-smi static --json`: the VBIOS (the `vbios` section
    on ROCm 6.x, `ifwi` on 7.x), the driver section, and the ASIC's name and PCI ids."""

    index: int
    bdf: str = ""
    name: str = ""
    pci_id: str = ""  # vendor:device, e.g. 1002:74a1
    vbios: str = ""  # part number, e.g. 113-M3000100-102 (what rocm-smi calls "VBIOS version")
    vbios_version: str = ""
    vbios_date: str = ""
    driver: str = ""


def parse_amd_smi_static_versions(text: str) -> list[StaticVersions]:
    out = []
    for pos, g in enumerate(amd_smi_gpus(load_json(text))):
        index = g.get("gpu") if isinstance(g.get("gpu"), int) else pos
        asic = _section(g, "asic")
        bus = _section(g, "bus")
        rom = _section(g, "vbios") or _section(g, "ifwi")
        driver = _section(g, "driver")
        vendor = _clean(asic.get("vendor_id")).lower().removeprefix("0x")
        device = _clean(asic.get("device_id")).lower().removeprefix("0x")
        out.append(
            StaticVersions(
                index=index,
                bdf=_clean(bus.get("bdf")).lower(),
                name=_clean(asic.get("market_name")),
                pci_id=f"{vendor}:{device}" if vendor and device else "",
                vbios=_clean(rom.get("part_number", rom.get("vbios_part_number"))),
                vbios_version=_clean(rom.get("version", rom.get("vbios_version"))),
                vbios_date=_clean(rom.get("build_date", rom.get("vbios_build_date"))),
                driver=_clean(driver.get("version", driver.get("driver_version"))),
            )
        )
    return out


def _section(g: dict, key: str) -> dict:
    value = g.get(key)
    return value if isinstance(value, dict) else {}
