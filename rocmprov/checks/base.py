"""Helpers every check module uses to build findings."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rocmprov.model import Finding, Severity

if TYPE_CHECKING:
    from rocmprov.facts.host import HostFacts
    from rocmprov.knowledge.matrix import Verdict

OK, SKIPPED, UNKNOWN = Severity.OK, Severity.SKIPPED, Severity.UNKNOWN
WARNING, CRITICAL = Severity.WARNING, Severity.CRITICAL

NO_AMD_GPU = "no AMD GPU on this host"


def stray_note(libs: tuple[str, ...]) -> str:
    """ "; libamdhip64-5 5.7.1 is a distribution library, not a ROCm install" (or "")."""
    if not libs:
        return ""
    what = "is a distribution library" if len(libs) == 1 else "are distribution libraries"
    return f"; {', '.join(libs)} {what}, not a ROCm install"


def unknown(check: str, why: str, *, subject: str = "", fix: str = "") -> Finding:
    return Finding(check, UNKNOWN, why, actual="not collected", subject=subject, fix=fix)


def skipped(check: str, why: str = NO_AMD_GPU) -> Finding:
    return Finding(check, SKIPPED, why)


PCI_PROBES = ("pci-sysfs", "lspci")


def not_collected(
    facts: HostFacts, checks: tuple[str, ...], probes: tuple[str, ...]
) -> list[Finding]:
    """UNKNOWN for each check, naming the probes and why each gave nothing: a statement about
    the collection, never about the hardware."""
    why = f"not collected: {facts.not_collected(*probes)}"
    return [Finding(c, UNKNOWN, why, actual="not collected") for c in checks]


def gpu_elsewhere(facts: HostFacts) -> str:
    """When the PCI probes gave nothing: the probe that still saw an AMD GPU (rocminfo's GPU
    agents, amd-smi/rocm-smi's GPU list), else ""."""
    if facts.pci is not None:
        return ""
    if facts.rocminfo is not None and facts.rocminfo.gpus:
        return "rocminfo"
    return "amd-smi" if facts.smi_gpus else ""


def no_amd_gpu(facts: HostFacts) -> bool:
    """No AMD GPU known: the PCI probes found none, or gave nothing and no other probe saw one."""
    return not facts.amd_gpus and not gpu_elsewhere(facts)


def unpackaged(facts: HostFacts) -> str:
    """'tarball at /opt/rocm-10.1.0; pip in /opt/ml/.venv' when every AMD ROCm install seen is
    a TheRock tarball or pip wheels (no package, no install step, no ld.so.conf entry: TheRock
    RELEASES.md), else "" (a package install, a version file of one, or nothing)."""
    from rocmprov.parse.rocm import PIP, TARBALL

    amd = [i for i in facts.rocm_installs or () if i.stream != "distro"]
    if not amd or any(i.layout not in (TARBALL, PIP) for i in amd):
        return ""
    return "; ".join(i.where for i in amd)


def gpu_absence(facts: HostFacts) -> str:
    """NO_AMD_GPU when the PCI probes said so, else why nobody knows."""
    if facts.pci is not None:
        return NO_AMD_GPU
    return f"whether there is an AMD GPU is unknown ({facts.not_collected(*PCI_PROBES)})"


def gpu_scope(facts: HostFacts, *checks: str, pci: bool = False) -> list[Finding] | None:
    """For a check about the AMD GPUs: UNKNOWN (the PCI probes gave nothing, so nobody knows
    whether there is one), SKIPPED (the host has none), or None (go on). A check that does not
    need the PCI devices (`pci=False`) goes on when another probe saw an AMD GPU."""
    if facts.pci is None:
        if not pci and gpu_elsewhere(facts):
            return None
        return not_collected(facts, checks, PCI_PROBES)
    if not facts.amd_gpus:
        return [skipped(c) for c in checks]
    return None


def from_verdict(
    check: str, verdict: Verdict, summary: str, *, fix: str = "", subject: str = ""
) -> Finding:
    """A support-matrix verdict (rocmprov.knowledge.matrix) as a finding."""
    return Finding(
        check,
        verdict.severity,
        summary,
        actual=verdict.actual,
        expected=verdict.expected,
        fix=fix if verdict.status != "ok" else "",
        ref=verdict.source,
        subject=subject,
    )
