"""ROCm installed, and the torch wheel against it."""

from __future__ import annotations

from rocmprov.checks.base import (
    CRITICAL,
    OK,
    SKIPPED,
    UNKNOWN,
    WARNING,
    gpu_absence,
    no_amd_gpu,
    skipped,
    stray_note,
)
from rocmprov.checks.policy import Policy
from rocmprov.facts.host import HostFacts
from rocmprov.model import Finding

REF_INSTALL = "https://rocm.docs.amd.com/projects/install-on-linux/en/latest/"
REF_TORCH = "https://pytorch.org/get-started/previous-versions/"
REF_CORE_SDK = "https://rocm.docs.amd.com/en/docs-10.0.0/about/transition-guide-TheRock.html"


def check_rocm(facts: HostFacts, policy: Policy) -> list[Finding]:
    installs = facts.rocm_installs
    if installs is None:
        if facts.rocm_version is None:
            why = facts.not_collected("rocm-installs", "packages")
            return [Finding("rocm.installed", UNKNOWN, f"ROCm version not collected: {why}")]
        installs = ()
    target = policy.target(facts.rocm_version)
    stray = stray_note(facts.rocm_stray)
    if not installs:
        if no_amd_gpu(facts) and not policy.rocm_version:
            why = f"{gpu_absence(facts)} and no ROCm installed{stray}"
            return [skipped("rocm.installed", why)]
        return [
            Finding(
                "rocm.installed",
                CRITICAL if facts.amd_gpus else WARNING,
                f"ROCm not installed (no version record of either AMD stream, no ROCm "
                f"packages){stray}",
                actual="none",
                expected=f"ROCm {target}",
                fix=f"rocmprov apply INVENTORY -e rocmprov_rocm_version={target}",
                ref=REF_INSTALL,
            )
        ]
    system = [i for i in installs if i.layout != "pip"]  # a venv's ROCm is its own
    if not system:  # TheRock's wheels in a venv, no system-wide ROCm: named, not "none"
        venvs = "; ".join(f"{i.label} ({i.where})" for i in installs)
        return [Finding("rocm.installed", OK, f"ROCm only in virtual environments: {venvs}",
                        actual=venvs)]  # fmt: skip
    primary = system[0]
    out: list[Finding] = []
    amd = [i for i in system if i.stream != "distro"]
    if len({i.stream for i in amd}) > 1 or len({i.version for i in amd}) > 1:
        out.append(
            Finding(
                "rocm.installed",
                WARNING,
                "more than one AMD ROCm install: " + ", ".join(i.label for i in amd),
                actual="; ".join(f"{i.label} ({i.evidence})" for i in amd),
                expected="one release (AMD: uninstall ROCm 7.2.x or older before the ROCm Core "
                "SDK)",
                fix=f"rocmprov apply INVENTORY -e rocmprov_rocm_version={target}, then remove "
                "the other release's packages (apt/dnf remove)",
                ref=REF_CORE_SDK,
            )
        )
    if policy.rocm_version and not _same_release(primary.version, policy.rocm_version):
        out.append(
            Finding(
                "rocm.installed",
                WARNING,
                f"{primary.label} installed, the site targets ROCm {policy.rocm_version}",
                actual=f"{primary.version} ({primary.evidence})",
                expected=policy.rocm_version,
                fix=f"rocmprov apply INVENTORY -e rocmprov_rocm_version={policy.rocm_version}",
                ref=REF_INSTALL,
            )
        )
    if not out:
        out.append(
            Finding(
                "rocm.installed",
                OK,
                primary.label,
                actual=f"{primary.version} ({primary.evidence})",
            )
        )
    return out


def check_layouts(facts: HostFacts, policy: Policy) -> list[Finding]:
    """rocm.layouts: every ROCm install by version and layout (packages, tarball, pip venv), and
    which one the target python's torch loads (the libamdhip64 it mapped)."""
    installs = facts.rocm_installs
    if not installs:
        why = "no install seen" if installs is not None else facts.not_collected("rocm-installs")
        return [Finding("rocm.layouts", SKIPPED, why)]
    names = "; ".join(f"{i.label} ({i.where or i.evidence})" for i in installs)
    loads = torch_loads(facts)
    summary = f"{len(installs)} ROCm install(s): {names}" + (f"; {loads}" if loads else "")
    return [Finding("rocm.layouts", OK, summary, actual=names)]


def torch_loads(facts: HostFacts) -> str:
    """'torch (/venv/bin/python) loads ROCm SDK wheels ... (pip in /venv)' or ''."""
    t = facts.torch
    if t is None or not t.installed or not t.hip:
        return ""
    who = f"torch ({t.executable or 'the target python'})"
    lib = t.hip_library
    if not lib:
        return f"{who} did not load libamdhip64 at import (not known which ROCm it uses)"
    for i in facts.rocm_installs or ():
        if i.prefix and lib.startswith(i.prefix.rstrip("/") + "/"):
            return f"{who} loads {i.label} ({i.where}): {lib}"
    if "/site-packages/torch/lib/" in lib:
        return f"{who} loads the ROCm libraries inside its own wheel: {lib}"
    return f"{who} loads {lib}, which is in no install seen here"


def _same_release(installed: str, wanted: str) -> bool:
    """7.2.1 is what "7.2" or "7.2.1" asks for; "default"/"latest" ask for the table's row."""
    from rocmprov.knowledge import releases

    row = releases.find(wanted)
    want = row.version if row else wanted
    if len(wanted.split(".")) == 2 and row is not None:
        want = wanted
    return installed == want or installed.startswith(want + ".")


def check_torch(facts: HostFacts, policy: Policy) -> list[Finding]:
    from rocmprov.knowledge import torch_wheels

    t = facts.torch
    if t is None:
        return [Finding("torch.rocm", UNKNOWN, "torch probe did not run")]
    if not t.installed:
        return [
            Finding(
                "torch.rocm",
                WARNING if facts.amd_gpus else OK,
                f"torch not installed in the target python ({t.error or 'no torch'})",
                actual="none",
                fix="rocmprov apply INVENTORY --tags torch",
                ref=REF_TORCH,
            )
        ]
    rocm = policy.target(facts.rocm_version)
    v = torch_wheels.torch_verdict(t.version, t.hip or None, rocm)
    sev = v.severity
    if not facts.amd_gpus and sev in (WARNING, CRITICAL):
        sev = OK  # a CUDA/CPU torch on a host without an AMD GPU is not a ROCm problem
    out = [
        Finding(
            "torch.rocm",
            sev,
            f"torch {t.version}: {v.reason}",
            actual=v.actual,
            expected=v.expected,
            ref=v.source,
        )
    ]
    if facts.amd_gpus and t.hip and not t.available:
        out.append(
            Finding(
                "torch.device",
                CRITICAL,
                "torch (ROCm build) sees no GPU",
                actual=t.error or "torch.cuda.is_available() is False",
                fix="check /dev/kfd access (render group) and HSA_OVERRIDE_GFX_VERSION",
            )
        )
    return out
