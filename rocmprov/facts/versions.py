"""A host's firmware and version inventory, per host and per GPU: pure extraction from a bundle's
probe outputs and the facts built from them (no command is run here).

In the JSON report (`rocmprov.audit/1`) each host gets an `inventory` object:

    {"host": {"os", "kernel", "rocm", "rocm_source", "driver", "driver_source",
              "bios_vendor", "bios_version", "bios_date", "system", "board", "torch",
              "gpu_pci_ids"},
     "gpus": [{"gpu", "bdf", "name", "pci_id", "gfx", "vbios", "vbios_version", "pmfw",
               "psp_sos", "mec", "firmware": {block: version}, "source"}]}

A value that no probe showed is absent (never guessed). Where the tools overlap, amd-smi wins
over rocm-smi, and amd-smi static's driver version over the module's sysfs version and DKMS.
Firmware block names are the tools' own: amd-smi fw_id (PM = the power-management firmware,
i.e. PMFW/SMU; PSP_SOSDRV = PSP SOS; CP_MEC1 = MEC), rocm-smi "<NAME> firmware version" (SMC,
SOS, MEC). Formats differ between the two tools (rocm-smi SMC "00.68.54.00", amd-smi PM
"04.85.103.184"), so compare hosts read by the same tool.
"""

from __future__ import annotations

from typing import Any

from rocmprov.collect.bundle import Bundle, ProbeOutput
from rocmprov.facts.host import HostFacts
from rocmprov.parse.firmware import (
    GpuFirmware,
    parse_amd_smi_firmware,
    parse_amd_smi_static_versions,
    parse_dmi,
    parse_rocm_smi_firmware,
)

# fw block ids of both tools -> the inventory's named fields (first present wins)
NAMED_BLOCKS: dict[str, tuple[str, ...]] = {
    "pmfw": ("PM", "PMFW", "SMU", "SMC"),
    "psp_sos": ("PSP_SOSDRV", "PSP_SOS", "SOS"),
    "mec": ("CP_MEC1", "MEC", "CP_MEC"),
}


def _ok(out: ProbeOutput | None) -> str | None:
    return out.stdout if out is not None and out.status == "ok" else None


def build_inventory(bundle: Bundle, facts: HostFacts) -> dict[str, Any]:
    static = parse_amd_smi_static_versions(_ok(bundle.get("amd-smi-static")) or "")
    fw_amd = parse_amd_smi_firmware(_ok(bundle.get("amd-smi-firmware")) or "")
    fw_rocm, rocm_driver = parse_rocm_smi_firmware(_ok(bundle.get("rocm-smi-firmware")) or "")
    dmi = parse_dmi(_ok(bundle.get("dmi")) or "")
    host: dict[str, Any] = {
        "os": f"{facts.os.id} {facts.os.version_id}".strip() if facts.os else None,
        "kernel": facts.kernel,
        "rocm": facts.rocm_version or None,
        "rocm_source": facts.rocm_source or None,
        "torch": facts.torch.version if facts.torch and facts.torch.version else None,
        "bios_vendor": dmi.get("bios_vendor"),
        "bios_version": dmi.get("bios_version"),
        "bios_date": dmi.get("bios_date"),
        "system": " ".join(x for x in (dmi.get("sys_vendor"), dmi.get("product_name")) if x)
        or None,
        "board": " ".join(x for x in (dmi.get("board_vendor"), dmi.get("board_name")) if x) or None,
        # every GPU on the PCI bus, any vendor (the "gpus" list below is the AMD GPUs)
        "gpu_pci_ids": sorted(f"{d.vendor_id}:{d.device_id}" for d in facts.pci or () if d.is_gpu)
        or None,
    }
    host["driver"], host["driver_source"] = _driver(bundle, facts, static, rocm_driver)
    return {
        "host": {k: v for k, v in host.items() if v},
        "gpus": _gpus(facts, static, fw_amd, fw_rocm),
    }


def _driver(bundle: Bundle, facts: HostFacts, static: list, rocm_driver: str) -> tuple[str, str]:
    """The amdgpu driver version and where it was read."""
    for s in static:
        if s.driver:
            return s.driver, "amd-smi"
    module = (_ok(bundle.get("amdgpu-version")) or "").strip()
    if module:
        return module[:80], "/sys/module/amdgpu/version"
    if rocm_driver:
        return rocm_driver, "rocm-smi"
    for d in facts.dkms or ():
        if getattr(d, "name", "") == "amdgpu" and getattr(d, "version", ""):
            return str(d.version), "dkms"
    return "", ""


def _gpus(
    facts: HostFacts, static: list, fw_amd: list[GpuFirmware], fw_rocm: list[GpuFirmware]
) -> list[dict[str, Any]]:
    rows: dict[int, dict[str, Any]] = {}
    # the PCI view first: every AMD GPU the host has, even where no SMI tool ran
    for pos, d in enumerate(sorted(facts.amd_gpus, key=lambda d: d.bdf)):
        rows[pos] = {"gpu": pos, "bdf": d.bdf, "pci_id": f"{d.vendor_id}:{d.device_id}"}
        if d.name:
            rows[pos]["name"] = d.name
    by_bdf = {r["bdf"]: i for i, r in rows.items()}
    for smi in facts.smi_gpus or ():
        row = rows.setdefault(_slot(by_bdf, smi.bdf, smi.index), {"gpu": smi.index})
        _put(row, name=smi.name, gfx=smi.gfx)
    for s in static:
        row = rows.setdefault(_slot(by_bdf, s.bdf, s.index), {"gpu": s.index})
        _put(row, bdf=s.bdf, name=s.name, pci_id=s.pci_id, vbios=s.vbios)
        _put(row, vbios_version=s.vbios_version, vbios_date=s.vbios_date)
    read = {fw.index for fw in fw_amd if fw.blocks}
    # amd-smi first; rocm-smi only for the GPUs amd-smi gave no firmware for (their block names
    # differ: one tool's list per GPU, not a mix)
    for fw in (*fw_amd, *(f for f in fw_rocm if f.index not in read)):
        row = rows.setdefault(fw.index, {"gpu": fw.index})
        _put(row, vbios=fw.vbios)
        blocks = row.setdefault("firmware", {})
        for name, version in fw.blocks.items():
            blocks.setdefault(name, version)
        row.setdefault("source", fw.tool)
        for key, names in NAMED_BLOCKS.items():
            value = next((fw.blocks[n] for n in names if n in fw.blocks), "")
            _put(row, **{key: value})
    return [rows[i] for i in sorted(rows)]


def _slot(by_bdf: dict[str, int], bdf: str, index: int) -> int:
    bdf = bdf.strip().lower()
    full = bdf if bdf.count(":") == 2 else f"0000:{bdf}" if bdf else ""
    return by_bdf.get(full, index)


def _put(row: dict[str, Any], **values: str) -> None:
    """Set each non-empty value the row does not have yet (the earlier source wins)."""
    for key, value in values.items():
        if value and not row.get(key):
            row[key] = value
