"""Are there AMD GPUs, do the tools agree on how many, and what gfx target each one is."""

from __future__ import annotations

from rocmprov.checks.base import (
    CRITICAL,
    NO_AMD_GPU,
    OK,
    PCI_PROBES,
    UNKNOWN,
    from_verdict,
    gpu_scope,
)
from rocmprov.checks.policy import Policy
from rocmprov.facts.host import HostFacts
from rocmprov.model import Finding
from rocmprov.parse.pci import PciDevice

VENDORS = {"10de": "NVIDIA", "8086": "Intel", "1a03": "ASPEED", "102b": "Matrox", "1002": "AMD"}
REF_GPUS = "https://rocm.docs.amd.com/projects/install-on-linux/en/latest/reference/system-requirements.html"


def describe_gpu(dev: PciDevice, torch_names: tuple[str, ...] = ()) -> str:
    """'NVIDIA H200 at 32 GT/s x16': lspci's name, else torch's, else vendor:device."""
    vendor = VENDORS.get(dev.vendor_id, f"vendor {dev.vendor_id}")
    name = dev.name
    if not name and dev.vendor_id == "10de" and torch_names:
        name = torch_names[0]
    name = name or f"{vendor} device {dev.vendor_id}:{dev.device_id}"
    sta = dev.link_sta
    if sta.speed_gts and sta.width:
        name += f" at {sta.speed_gts:g} GT/s x{sta.width}"
    return name


def check_present(facts: HostFacts, policy: Policy) -> list[Finding]:
    if facts.pci is None:
        return [
            Finding(
                "gpu.amd.present",
                UNKNOWN,
                f"PCI devices not collected: {facts.not_collected(*PCI_PROBES)}",
                actual="not collected",
                fix="collect as a user who can read /sys (the pci-sysfs probe needs no root)",
            )
        ]
    gpus = facts.amd_gpus
    if gpus:
        names = ", ".join(sorted({d.name or f"1002:{d.device_id}" for d in gpus}))
        return [
            Finding(
                "gpu.amd.present", OK, f"{len(gpus)} AMD GPU(s): {names}", actual=str(len(gpus))
            )
        ]
    torch_names = facts.torch.devices if facts.torch else ()
    others = [describe_gpu(d, torch_names) for d in facts.pci if d.is_gpu]
    found = f"found {'; '.join(others)}" if others else "no GPU of any vendor"
    return [
        Finding(
            "gpu.amd.present",
            CRITICAL if policy.require_gpu else OK,
            f"{NO_AMD_GPU}; {found}",
            actual=found,
            expected="at least one AMD GPU (PCI vendor 1002, display or processing class)",
            fix="check the card is seated and powered; `lspci -nn -d 1002:` must list it",
            ref=REF_GPUS,
        )
    ]


def check_count(facts: HostFacts, policy: Policy) -> list[Finding]:
    if (scope := gpu_scope(facts, "gpu.count", pci=True)) is not None:
        return scope
    counts = {"pci": len(facts.amd_gpus)}
    if facts.rocminfo is not None and facts.rocminfo.agents:
        counts["rocminfo"] = len(facts.rocminfo.gpus)
    if facts.smi_gpus is not None:
        counts["smi"] = len(facts.smi_gpus)
    if policy.expected_gpu_count is not None:
        counts["expected"] = policy.expected_gpu_count
    actual = ", ".join(f"{k}={v}" for k, v in counts.items())
    if len(set(counts.values())) > 1:
        return [
            Finding(
                "gpu.count",
                CRITICAL,
                f"GPU counts disagree ({actual})",
                actual=actual,
                expected="the same count everywhere",
                fix="a GPU the driver did not bring up: see `sudo dmesg | grep -i amdgpu`",
            )
        ]
    return [Finding("gpu.count", OK, f"{counts['pci']} GPU(s) seen by every source", actual=actual)]


def check_gfx(facts: HostFacts, policy: Policy) -> list[Finding]:
    from rocmprov.knowledge import gpus

    if (scope := gpu_scope(facts, "gpu.gfx")) is not None:
        return scope
    if facts.rocminfo is None or not facts.rocminfo.gpus:
        return [
            Finding(
                "gpu.gfx",
                UNKNOWN,
                "no gfx target known (rocminfo gave no GPU agent)",
                fix="install rocminfo and make /dev/kfd usable",
            )
        ]
    rocm = policy.target(facts.rocm_version)
    out = []
    for agent in facts.rocminfo.gpus:
        gfx = agent.gfx
        verdict = gpus.gpu_verdict(gfx, rocm)
        fix = (
            f"run {gfx} on a ROCm release that AMD's compatibility matrix lists it for "
            "(docs/support-matrix.md; `rocmprov apply -e rocmprov_rocm_version=X`), "
            "or use a GPU the installed release supports"
        )
        out.append(
            from_verdict(
                "gpu.gfx",
                verdict,
                f"{gfx}: {verdict.reason}",
                fix=fix,
                subject=agent.marketing_name or gfx,
            )
        )
    return out
