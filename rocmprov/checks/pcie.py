"""PCIe slot link and VRAM BAR of every AMD GPU.

The GPU endpoint's own LnkSta is the link to the card's on-card switch, which always reads full
speed; the slot link is on the card's upstream switch port, found by walking up the PCI tree
through AMD bridges. AMD GPUs lower the link speed at idle, so a lower speed is a WARNING;
a lost width is CRITICAL.
"""

from __future__ import annotations

from dataclasses import replace

from rocmprov.checks.base import CRITICAL, OK, UNKNOWN, WARNING, gpu_scope
from rocmprov.checks.policy import Policy
from rocmprov.facts.host import HostFacts, slot_port
from rocmprov.model import Finding
from rocmprov.parse.pci import PciDevice, gen_of, human_size

REF_TUNING = "https://rocm.docs.amd.com/en/latest/how-to/system-optimization/mi300x.html"
REF_BAR = "https://rocm.docs.amd.com/en/latest/how-to/system-optimization/mi200.html"
BIOS_SPEED = (
    "check the slot in BIOS (PCIe link speed: Auto or the slot's Gen), reseat the card or riser; "
    "under load the speed should rise to the maximum"
)
BIOS_WIDTH = (
    "power off, reseat the card (and riser/cable), check the slot's bifurcation setting in BIOS "
    "(x16, not x8x8), then: sudo lspci -vvv -s {bdf} | grep LnkSta"
)
BIOS_BAR = (
    "enable 'Above 4G Decoding' and 'Re-Size BAR Support' (or 'Large BAR') in BIOS "
    "(PCI Subsystem Settings), then: sudo lspci -vvv -s {bdf} | grep -i 'Region 0'"
)
SMALL_BAR = 256 << 20
DOORBELL_BAR = 2 << 20  # the doorbell BAR (2M, prefetchable) is never the VRAM aperture


LINK_IDS = ("pcie.link.width", "pcie.link.speed")  # every link finding has one of these ids


def check_link(facts: HostFacts, policy: Policy) -> list[Finding]:
    if (scope := gpu_scope(facts, *LINK_IDS, pci=True)) is not None:
        return scope
    return [f for gpu in facts.amd_gpus for f in _link(facts, gpu, policy)]


def _link(facts: HostFacts, gpu: PciDevice, policy: Policy) -> list[Finding]:
    port = slot_port(facts, gpu)
    subject = gpu.bdf if port is gpu else f"{gpu.bdf} (slot link at {port.bdf})"
    sta = port.link_sta
    if sta.speed_gts is None and sta.width is None:
        denied = gpu.caps_denied or port.caps_denied or facts.lspci_caps_denied
        why = "link not readable" + (": lspci capabilities need root" if denied else "")
        fix = "run the audit as root (or with --become)" if denied else ""
        return [Finding(i, UNKNOWN, why, actual="unreadable", fix=fix, subject=subject)
                for i in LINK_IDS]  # fmt: skip
    card = port.link_cap  # what the card (its upstream port) can do
    parent = facts.device(port.parent) if port.parent else None
    slot_width = parent.link_cap.width if parent else None
    # the slot's real top speed: LnkCap2 (lspci) or sysfs max (already from LnkCap2); a
    # LnkCap below it means the BIOS capped the slot
    slot_speed = (parent.supported_speed or parent.link_cap.speed_gts) if parent else None
    capped = bool(
        parent
        and parent.supported_speed
        and parent.link_cap.speed_gts
        and parent.link_cap.speed_gts < parent.supported_speed
    )
    max_speed = _lower(card.speed_gts, slot_speed)
    max_width = _lower(card.width, slot_width)
    if policy.expected_pcie_width:
        max_width = policy.expected_pcie_width
    out = [_width(sta.width, max_width, subject, port.bdf)]
    if (
        not policy.expected_pcie_width
        and card.width
        and slot_width
        and slot_width < card.width
        and out[0].severity is OK
    ):
        out[0] = Finding(
            "pcie.link.width",
            WARNING,
            f"x{card.width} card in a x{slot_width} slot",
            actual=f"x{sta.width}",
            expected=f"x{card.width}",
            fix="move the card to a full-width slot (or check the riser/bifurcation setting)",
            ref=REF_TUNING,
            subject=subject,
        )
    speed = _speed(sta.speed_gts, max_speed, policy.expected_pcie_gen, subject, port.bdf)
    if capped and speed.severity is WARNING and parent is not None:
        speed = replace(
            speed,
            summary=f"{speed.summary}; the slot ({parent.bdf}) is capped at "
            f"{parent.link_cap.speed_gts:g} GT/s by the BIOS",
        )
    out.append(speed)
    return out


def _lower(a: float | None, b: float | None) -> float | None:
    values = [v for v in (a, b) if v]
    return min(values) if values else None


def _width(width: int | None, max_width: int | None, subject: str, bdf: str) -> Finding:
    if width is None or max_width is None:
        return Finding("pcie.link.width", UNKNOWN, "link width not readable", subject=subject)
    if width < max_width:
        return Finding(
            "pcie.link.width",
            CRITICAL,
            f"PCIe x{width} on a x{max_width} link",
            actual=f"x{width}",
            expected=f"x{max_width}",
            fix=BIOS_WIDTH.format(bdf=bdf),
            ref=REF_TUNING,
            subject=subject,
        )
    return Finding(
        "pcie.link.width",
        OK,
        f"PCIe x{width}",
        actual=f"x{width}",
        expected=f"x{max_width}",
        subject=subject,
    )


def _speed(
    speed: float | None, max_speed: float | None, gen: int | None, subject: str, bdf: str
) -> Finding:
    if speed is None:
        return Finding("pcie.link.speed", UNKNOWN, "link speed not readable", subject=subject)
    actual = f"{speed:g} GT/s (Gen{gen_of(speed) or '?'})"
    if gen is not None and max_speed is not None and (gen_of(max_speed) or 0) < gen:
        return Finding(
            "pcie.link.speed",
            WARNING,
            f"slot capable of Gen{gen_of(max_speed)} only",
            actual=actual,
            expected=f"Gen{gen}",
            fix=BIOS_SPEED,
            ref=REF_TUNING,
            subject=subject,
        )
    if max_speed is not None and speed < max_speed:
        return Finding(
            "pcie.link.speed",
            WARNING,
            f"PCIe {speed:g} GT/s below {max_speed:g} GT/s (AMD GPUs lower it at idle)",
            actual=actual,
            expected=f"{max_speed:g} GT/s (Gen{gen_of(max_speed) or '?'})",
            fix=BIOS_SPEED,
            ref=REF_TUNING,
            subject=subject,
        )
    return Finding("pcie.link.speed", OK, actual, actual=actual, subject=subject)


def check_bar(facts: HostFacts, policy: Policy) -> list[Finding]:
    if (scope := gpu_scope(facts, "pcie.bar", pci=True)) is not None:
        return scope
    smi = [g for g in facts.smi_gpus or () if g.vram_total_bytes]
    vram = {_bdf(g.bdf): g.vram_total_bytes for g in smi if g.bdf}
    if not vram and len(smi) == 1 and len(facts.amd_gpus) == 1:
        vram = {facts.amd_gpus[0].bdf: smi[0].vram_total_bytes}
    return [_bar(gpu, vram.get(gpu.bdf)) for gpu in facts.amd_gpus]


def _bdf(bdf: str) -> str:
    bdf = bdf.strip().lower()
    return bdf if bdf.count(":") == 2 else f"0000:{bdf}"


def vram_bar(gpu: PciDevice) -> int | None:
    """The VRAM aperture is the largest prefetchable memory BAR; the 2M doorbell BAR and the
    non-prefetchable register BAR (256K/512K/1M) never are."""
    sizes = [b.size for b in gpu.bars if b.prefetchable and b.size > DOORBELL_BAR]
    return max(sizes) if sizes else None


def _bar(gpu: PciDevice, vram: int | None) -> Finding:
    size = vram_bar(gpu)
    if size is None:
        return Finding(
            "pcie.bar",
            UNKNOWN,
            "no VRAM BAR readable (no prefetchable BAR over 2M)",
            actual="unreadable",
            subject=gpu.bdf,
        )
    small = size < vram if vram else size <= SMALL_BAR
    if small:
        instinct = gpu.class_id in ("0380", "1200") or "instinct" in gpu.name.lower()
        expected = human_size(vram) if vram else "the whole VRAM (Large BAR)"
        return Finding(
            "pcie.bar",
            CRITICAL if instinct else WARNING,
            f"VRAM BAR {human_size(size)}: Above 4G Decoding / Re-Size BAR off in BIOS",
            actual=human_size(size),
            expected=expected,
            fix=BIOS_BAR.format(bdf=gpu.bdf),
            ref=REF_BAR,
            subject=gpu.bdf,
        )
    return Finding(
        "pcie.bar", OK, f"VRAM BAR {human_size(size)}", actual=human_size(size), subject=gpu.bdf
    )
