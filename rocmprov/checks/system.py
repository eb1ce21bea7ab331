"""OS and kernel against the support matrix, kernel parameters and system services."""

from __future__ import annotations

from rocmprov.checks.base import OK, UNKNOWN, WARNING, from_verdict, skipped
from rocmprov.checks.policy import Policy
from rocmprov.facts import HostFacts
from rocmprov.model import Finding

REF_TUNING = "https://rocm.docs.amd.com/en/latest/how-to/system-optimization/mi300x.html"


def target_rocm(facts: HostFacts, policy: Policy) -> str | None:
    return policy.rocm_version or facts.rocm_version or None


def check_os(facts: HostFacts, policy: Policy) -> list[Finding]:
    from rocmprov import support

    if facts.os is None:
        return [Finding("os.supported", UNKNOWN, "os-release not collected")]
    rocm = target_rocm(facts, policy)
    os_name = f"{facts.os.id} {facts.os.version_id}".strip()
    note = ""
    if not rocm:  # nothing installed or targeted: judge against the newest release we know
        releases = support.supported_releases()
        if not releases:
            return [Finding("os.supported", UNKNOWN, f"{os_name}: no ROCm release known")]
        rocm, note = releases[-1], " (the newest release known; set rocmprov_rocm_version)"
    v = support.os_verdict(rocm, facts.os.id, facts.os.version_id)
    out = [
        from_verdict(
            "os.supported",
            v,
            f"{os_name} on ROCm {rocm}{note}: {v.reason}",
            fix=f"an OS listed for ROCm {rocm} ({v.expected}), or a ROCm release "
            f"that lists {os_name}",
        )
    ]
    if facts.kernel:
        k = support.kernel_verdict(rocm, facts.os.id, facts.os.version_id, facts.kernel)
        out.append(
            from_verdict(
                "os.kernel",
                k,
                f"kernel {facts.kernel}: {k.reason}",
                fix=f"boot a kernel AMD lists for this OS: {k.expected}",
            )
        )
    return out


def check_iommu(facts: HostFacts, policy: Policy) -> list[Finding]:
    if not facts.amd_gpus:
        return [skipped("kernel.iommu")]
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
    if not facts.amd_gpus:
        return [skipped("kernel.numa_balancing")]
    if facts.numa_balancing is None:
        return [Finding("kernel.numa_balancing", UNKNOWN, "numa_balancing not collected")]
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
