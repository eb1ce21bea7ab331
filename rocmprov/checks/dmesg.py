"""Boot and driver-state failures that the kernel log names (the `dmesg` probe).

Small and specific on purpose: a GPU that amdgpu could not bring up, KFD refusing the ASIC, no
PCI space for the VRAM BAR, and the hang/fault/RAS lines that leave the GPU unusable. A ring
timeout the driver recovered from is a WARNING; a hang it did not recover from cleanly, or one
that lost VRAM, is CRITICAL, as is an uncorrectable RAS error. The broad troubleshooting table
(rocmprov/kb, `rocmprov explain`) covers everything else.
"""

from __future__ import annotations

from rocmprov.checks.base import CRITICAL, OK, UNKNOWN, WARNING
from rocmprov.checks.policy import Policy
from rocmprov.facts.host import HostFacts
from rocmprov.model import Finding, Severity
from rocmprov.parse.dmesg import DmesgEvent, parse_dmesg
from rocmprov.parse.kernel_catalogue import catalogue

REF_BAR = "https://rocm.docs.amd.com/en/latest/how-to/system-optimization/mi200.html"
REF_INSTALL = (
    "https://rocm.docs.amd.com/projects/install-on-linux/en/latest/reference/"
    "system-requirements.html"
)
REF_RAS = "https://rocm.docs.amd.com/en/latest/conceptual/ras.html"
REF_RESET = "https://docs.kernel.org/gpu/amdgpu/debugging.html"
BIOS_BAR = (
    "enable 'Above 4G Decoding' and 'Re-Size BAR Support' (Large BAR) in BIOS (PCI Subsystem "
    "Settings); keep SR-IOV off unless used; then reboot and check `sudo dmesg | grep -i BAR`"
)

# (check id, tags, severity, summary, fix, source)
_CAUSES: tuple[tuple[str, tuple[str, ...], Severity, str, str, str], ...] = (  # + catalogue
    (
        "dmesg.amdgpu.probe_enomem",
        ("probe_failed_-12",),
        CRITICAL,
        "amdgpu probe failed with -12 (ENOMEM): no PCI address space for the GPU's BARs",
        BIOS_BAR,
        "https://github.com/ROCm/rocm-install-on-linux/issues/615",
    ),
    (
        "dmesg.amdgpu.probe_einval",
        ("probe_failed_-22",),
        CRITICAL,
        "amdgpu probe failed with -22 (EINVAL): the GPU did not initialize (VBIOS post failed, "
        "or the driver does not support this GPU)",
        "read the lines before it (`sudo dmesg | grep -i amdgpu`): 'gpu post error'/'atombios "
        "stuck' point at power, riser or firmware (reseat, check PCIe power cables, update the "
        "system BIOS); otherwise install the amdgpu-dkms of a ROCm release that supports the GPU",
        "https://github.com/ROCm/ROCm/issues/4533",
    ),
    (
        "dmesg.amdgpu.init",
        ("fatal_gpu_init", "atombios_stuck", "gpu_post_error", "ip_init_failed"),
        CRITICAL,
        "amdgpu: Fatal error during GPU init (atombios stuck / gpu post error)",
        "cold-boot (power off fully); reseat the card and its power cables; update the system "
        "BIOS; enable Above 4G Decoding; then `sudo dmesg | grep -i amdgpu`",
        "https://github.com/ROCm/ROCm/issues/4533",
    ),
    (
        "dmesg.kfd.unsupported",
        ("not_supported_in_kfd",),
        CRITICAL,
        "KFD does not support this GPU: ROCm compute will not see it",
        "use a GPU on the ROCm support list (graphics still work with amdgpu)",
        REF_INSTALL,
    ),
    (
        "dmesg.pci.bar",
        ("bar_resize_failed", "bar_assign_failed"),
        WARNING,
        "kernel could not resize/assign a BAR: not enough PCI address space (Large BAR off)",
        BIOS_BAR,
        REF_BAR,
    ),
    (
        "dmesg.gpu.ring_timeout",
        ("ring_timeout",),
        WARNING,
        "GPU ring timeout (a job hung; the driver reset the GPU)",
        "update amdgpu-dkms/kernel and firmware to the pair your ROCm release supports; if it "
        "repeats, collect `sudo dmesg` and `amd-smi` output for AMD support",
        REF_RESET,
    ),
    (
        "dmesg.gpu.hang",
        (
            "ring_reset_failed",
            "mes_failed",
            "cp_unrecoverable_preemption_failed",
            "failed_to_restore_process_queues",
            "vram_lost",
        ),
        CRITICAL,
        "GPU hang the driver did not recover from cleanly (ring reset failed, MES or CP not "
        "responding, process queues not restored) or that lost the GPU's memory (VRAM lost)",
        "drain the node and collect `sudo dmesg` and `amd-smi` output (the health gate's bundle "
        "has them); cold-boot the node to bring the GPU back; if it repeats, update "
        "amdgpu-dkms and firmware to the pair your ROCm release supports and contact the vendor",
        REF_RESET,
    ),
    (
        "dmesg.gpu.page_fault",
        ("page_fault",),
        WARNING,
        "GPU page fault (a kernel touched unmapped memory)",
        "usually an application bug; rerun with AMD_LOG_LEVEL=3 / HSA_XNACK as the app requires; "
        "if system-wide, update ROCm and amdgpu-dkms",
        REF_RESET,
    ),
    (
        "dmesg.gpu.ras",
        ("ras_uncorrectable",),
        CRITICAL,
        "RAS: uncorrectable hardware error reported by the GPU",
        "drain the node; read `sudo amd-smi metric --ecc` and the bad-page count; contact the "
        "system vendor to replace the GPU if errors repeat",
        REF_RAS,
    ),
)


_Cause = tuple[str, tuple[str, ...], Severity, str, str, str]


def _with_catalogue(own: tuple[_Cause, ...]) -> tuple[_Cause, ...]:
    """The own causes with the catalogue's tags added to the ids they name, then the
    catalogue's own findings (rocmprov/data/kernel_log.yaml) in its order."""
    cat = catalogue()
    tags: dict[str, tuple[str, ...]] = {}
    for rule in cat.rules:
        tags[rule.id] = (*tags.get(rule.id, ()), rule.tag)
    sev = {"CRITICAL": CRITICAL, "WARNING": WARNING}
    known = {c[0] for c in own}
    out: list[_Cause] = [(c[0], c[1] + tags.get(c[0], ()), c[2], c[3], c[4], c[5]) for c in own]
    out += [
        (f.id, tags.get(f.id, ()), sev[f.severity], f.summary, f.fix, f.ref)
        for f in cat.findings
        if f.id not in known
    ]
    return tuple(out)


CAUSES = _with_catalogue(_CAUSES)


def check_dmesg(facts: HostFacts, policy: Policy) -> list[Finding]:
    if facts.dmesg is None:
        return [
            Finding(
                "dmesg",
                UNKNOWN,
                f"kernel log not collected: {facts.not_collected('dmesg')}",
                actual="not collected",
                fix="run the audit as root (or with --become): dmesg and journalctl -k need it",
            )
        ]
    log = parse_dmesg(facts.dmesg)
    out = []
    for check, tags, severity, summary, fix, ref in CAUSES:
        events = [e for e in log.events if e.tag in tags]
        if events:
            out.append(_finding(check, severity, summary, fix, ref, events))
    if not out:
        out.append(Finding("dmesg", OK, "no known amdgpu boot/driver failure in the kernel log"))
    return out


def _finding(
    check: str, severity: Severity, summary: str, fix: str, ref: str, events: list[DmesgEvent]
) -> Finding:
    bdfs = ", ".join(dict.fromkeys(e.bdf for e in events if e.bdf))
    return Finding(
        check,
        severity,
        summary,
        actual=events[0].line[:200],
        expected="no such line in the kernel log",
        fix=fix,
        ref=ref,
        subject=bdfs,
    )
