"""OS and kernel against the support matrix, kernel parameters and system services."""

from __future__ import annotations

from rocmprov.checks.base import (
    OK,
    UNKNOWN,
    WARNING,
    from_verdict,
    gpu_absence,
    gpu_scope,
    no_amd_gpu,
    skipped,
)
from rocmprov.checks.policy import Policy
from rocmprov.facts.host import HostFacts
from rocmprov.model import Finding

REF_TUNING = "https://rocm.docs.amd.com/en/latest/how-to/system-optimization/mi300x.html"


def target_rocm(facts: HostFacts, policy: Policy) -> str:
    return policy.target(facts.rocm_version)


def check_os(facts: HostFacts, policy: Policy) -> list[Finding]:
    from rocmprov.knowledge import matrix, os_kernel

    if facts.os is None:
        return [Finding("os.supported", UNKNOWN, "os-release not collected")]
    os_name = f"{facts.os.id} {facts.os.version_id}".strip()
    if no_amd_gpu(facts) and not facts.rocm_version and not policy.rocm_version:
        why = f"{gpu_absence(facts)} and no ROCm installed or targeted"
        return [skipped("os.supported", why), skipped("os.kernel", why)]
    rocm = target_rocm(facts, policy)
    if not rocm:
        return [Finding("os.supported", UNKNOWN, f"{os_name}: no ROCm release known")]
    note = "" if (policy.rocm_version or facts.rocm_version) else " (rocmprov's default release)"
    v = os_kernel.os_verdict(rocm, facts.os.id, facts.os.version_id)
    fix = (
        f"an OS listed for ROCm {rocm} ({v.expected}), or a ROCm release that lists {os_name}"
        if v.expected
        else f"check AMD's compatibility matrix for ROCm {rocm}: {matrix.MATRIX_URL}"
    )
    out = [from_verdict("os.supported", v, f"{os_name} on ROCm {rocm}{note}: {v.reason}", fix=fix)]
    if facts.kernel:
        k = os_kernel.kernel_verdict(rocm, facts.os.id, facts.os.version_id, facts.kernel)
        kfix = (
            f"boot a kernel AMD lists for {os_name} under ROCm {rocm}: {k.expected}"
            if k.expected
            else f"check AMD's kernel list for ROCm {rocm}: {matrix.MATRIX_URL}"
        )
        out.append(from_verdict("os.kernel", k, f"kernel {facts.kernel}: {k.reason}", fix=kfix))
    return out


def check_iommu(facts: HostFacts, policy: Policy) -> list[Finding]:
    if (scope := gpu_scope(facts, "kernel.iommu")) is not None:
        return scope
    if facts.cmdline is None:
        return [Finding("kernel.iommu", UNKNOWN, "kernel command line not collected")]
    if facts.cmdline.get("iommu") == "pt":
        return [Finding("kernel.iommu", OK, "iommu=pt", actual="iommu=pt")]
    return [
        Finding(
            "kernel.iommu",
            WARNING,
            "iommu=pt not set (AMD recommends it on multi-GPU servers with the IOMMU on)",
            actual=facts.cmdline.get("iommu", "unset"),
            expected="iommu=pt",
            fix="add iommu=pt to GRUB_CMDLINE_LINUX_DEFAULT in "
            "/etc/default/grub, then sudo update-grub and reboot",
            ref=REF_TUNING,
        )
    ]


def check_numa(facts: HostFacts, policy: Policy) -> list[Finding]:
    if no_amd_gpu(facts):
        return [skipped("kernel.numa_balancing", gpu_absence(facts))]
    if facts.numa_balancing is None:
        why = facts.not_collected("numa-balancing")
        return [Finding("kernel.numa_balancing", UNKNOWN, f"numa_balancing not collected: {why}")]
    if facts.numa_balancing:
        return [
            Finding(
                "kernel.numa_balancing",
                WARNING,
                "automatic NUMA balancing is on",
                actual=str(facts.numa_balancing),
                expected="0",
                fix="sudo sysctl kernel.numa_balancing=0 (persist in /etc/sysctl.d/)",
                ref=REF_TUNING,
            )
        ]
    return [Finding("kernel.numa_balancing", OK, "automatic NUMA balancing off", actual="0")]


def check_gpu_manager(facts: HostFacts, policy: Policy) -> list[Finding]:
    state = facts.gpu_manager
    if state is None:
        return [Finding("service.gpu-manager", UNKNOWN, "gpu-manager state not collected")]
    if state in ("not-found", "no-systemd", ""):
        return [
            Finding(
                "service.gpu-manager", OK, "no gpu-manager unit (nothing to do)", actual="not-found"
            )
        ]
    if state == "masked":
        return [Finding("service.gpu-manager", OK, "gpu-manager masked", actual="masked")]
    return [
        Finding(
            "service.gpu-manager",
            WARNING,
            f"gpu-manager is {state} (Ubuntu's dual-GPU switcher; rocmprov masks it)",
            actual=state,
            expected="masked",
            fix="sudo systemctl disable --now gpu-manager && sudo systemctl mask gpu-manager",
        )
    ]
