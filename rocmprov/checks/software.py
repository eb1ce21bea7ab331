"""ROCm installed, and the torch wheel against it."""

from __future__ import annotations

from rocmprov.checks.base import CRITICAL, OK, UNKNOWN, WARNING
from rocmprov.checks.policy import Policy
from rocmprov.facts import HostFacts
from rocmprov.model import Finding

REF_INSTALL = "https://rocm.docs.amd.com/projects/install-on-linux/en/latest/"
REF_TORCH = "https://pytorch.org/get-started/previous-versions/"


def check_rocm(facts: HostFacts, policy: Policy) -> list[Finding]:
    if facts.rocm_version is None:
        return [Finding("rocm.installed", UNKNOWN, "ROCm version not collected")]
    installed = facts.rocm_version
    sev = CRITICAL if facts.amd_gpus else WARNING
    if not installed:
        return [
            Finding(
                "rocm.installed",
                sev,
                "ROCm not installed (/opt/rocm/.info/version)",
                actual="none",
                expected=policy.rocm_version or "a ROCm release",
                fix="rocmprov apply INVENTORY",
                ref=REF_INSTALL,
            )
        ]
    if policy.rocm_version and not installed.startswith(policy.rocm_version):
        return [
            Finding(
                "rocm.installed",
                WARNING,
                f"ROCm {installed}, site targets {policy.rocm_version}",
                actual=installed,
                expected=policy.rocm_version,
                fix="rocmprov apply INVENTORY",
                ref=REF_INSTALL,
            )
        ]
    return [Finding("rocm.installed", OK, f"ROCm {installed}", actual=installed)]


def check_torch(facts: HostFacts, policy: Policy) -> list[Finding]:
    from rocmprov import support

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
    rocm = policy.rocm_version or facts.rocm_version or None
    v = support.torch_verdict(t.version, t.hip or None, rocm)
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
