"""ROCm packages and AMD's prerequisites: the release table's packages for the host's source
(AMD's streams or the distribution's), AMD's other complete meta-packages, and the install
guides' prerequisites (Python build packages, the kernel headers meta-package, ld.so.conf.d).
"""

from __future__ import annotations

import re

from rocmprov.checks.base import (
    CRITICAL,
    OK,
    UNKNOWN,
    WARNING,
    gpu_absence,
    no_amd_gpu,
    skipped,
    stray_note,
    unpackaged,
)
from rocmprov.checks.policy import Policy
from rocmprov.checks.repo import REF_APT, is_amd_source
from rocmprov.facts.host import HostFacts
from rocmprov.knowledge.expected import distro_packages
from rocmprov.model import Finding

# ------------------------------------------------------------------------- packages


def check_packages(facts: HostFacts, policy: Policy) -> list[Finding]:
    if facts.packages is None:
        why = facts.not_collected("packages")
        return [Finding("rocm.packages", UNKNOWN, f"installed packages not collected: {why}")]
    source = policy.repo_source or _infer_source(facts)
    requested = policy.rocm_version or policy.repo_source or policy.packages_amd
    if (bare := unpackaged(facts)) and not requested:
        return [Finding("rocm.packages", OK, f"no ROCm packages expected: ROCm from {bare}")]
    if not source:
        why = "none installed, no AMD source configured"
        why += stray_note(facts.rocm_stray)
        if no_amd_gpu(facts):
            return [skipped("rocm.packages", f"{gpu_absence(facts)}: {why}")]
        return [Finding("rocm.packages", OK, f"no ROCm packages expected here ({why})")]
    wanted, release = _wanted(facts, policy, source)
    if not wanted:
        return [
            Finding(
                "rocm.packages",
                UNKNOWN,
                f"no package list known for source {source}"
                + (f" and ROCm {release}" if release else ""),
                fix="set rocmprov_packages_amd / rocmprov_packages_distro in the inventory",
            )
        ]
    missing = [p for p in wanted if p not in facts.packages]
    if missing and release and not policy.packages_amd:
        # The row's meta-package is what apply installs; AMD documents others that are just as
        # complete (rocm-hip-runtime, amdrocm10.0-gfx942...): any of them is an install.
        other = _other_install(facts.packages, release)
        if other:
            return [Finding("rocm.packages", OK, f"AMD ROCm {release}: {other} installed",
                            actual=other)]  # fmt: skip
    asked = bool(facts.amd_gpus or policy.rocm_version or policy.repo_source)
    if missing:
        return [
            Finding(
                "rocm.packages",
                CRITICAL if asked else WARNING,
                f"ROCm package(s) missing: {', '.join(missing)}",
                actual="missing " + ", ".join(missing),
                expected=", ".join(wanted),
                fix="rocmprov apply INVENTORY --tags packages",
                ref=REF_APT,
            )
        ]
    return [
        Finding("rocm.packages", OK, f"{source} ROCm packages installed", actual=", ".join(wanted))
    ]


def _wanted(facts: HostFacts, policy: Policy, source: str) -> tuple[list[str], str]:
    from rocmprov.knowledge import releases

    if source == "distro":
        wanted = list(policy.packages_distro) or (
            distro_packages(facts.os.id, facts.os.version_id) if facts.os else []
        )
        return wanted + list(policy.packages_extra), ""
    if policy.packages_amd:
        return list(policy.packages_amd) + list(policy.packages_extra), ""
    target = policy.target(facts.rocm_version)
    row = releases.find(target)
    return (list(row.packages) + list(policy.packages_extra) if row else []), target


def _other_install(installed: dict[str, str], release: str) -> str:
    """An installed meta-package of the release's stream other than the row's: AMD's legacy
    meta-packages (the table's streams block) or TheRock's per-architecture packages."""
    from rocmprov.knowledge import releases

    row = releases.find(release)
    if row is None:
        return ""
    if row.stream == "therock":
        # amdrocm10.0-gfx942 (gfx_packages) and the like: the release's own prefix
        names = [
            n
            for n in installed
            if re.match(rf"amdrocm(?:-[a-z-]+)?{re.escape(row.minor)}(?:-|$)", n)
        ]
        return ", ".join(sorted(names)[:3])
    metas = releases.streams().get(row.stream, {}).get("meta_packages") or []
    return ", ".join(m for m in metas if m in installed)


def _infer_source(facts: HostFacts) -> str:
    installs = facts.rocm_installs or ()
    if any(i.stream in ("legacy", "therock") for i in installs):
        return "amd"
    if facts.repo is not None and any(is_amd_source(t) for t in facts.repo.sources.values()):
        return "amd"
    if any(i.stream == "distro" for i in installs):
        return "distro"
    return ""


# -------------------------------------------------------------------- prerequisites

# AMD's Ubuntu/Debian prerequisites for the ROCm packages and the driver (install guides,
# "Installing prerequisites"), and the headers meta-package that makes DKMS rebuild amdgpu when
# a new kernel arrives.
_PYTHON_PREREQS = ("python3-setuptools", "python3-wheel")
_APT_OSES = ("ubuntu", "debian")
# The running kernel's flavour names its headers meta-package (as the driver role installs):
# 6.8.0-51-generic -> linux-headers-generic (or -generic-hwe-*), 6.8.0-1021-azure ->
# linux-headers-azure, 6.1.0-28-amd64 -> linux-headers-amd64; a custom kernel has none.
_FLAVOUR = re.compile(r"^\d+\.\d+\.\d+-\d+-([a-z0-9-]+)$")


def check_prerequisites(facts: HostFacts, policy: Policy) -> list[Finding]:
    installs = [i for i in facts.rocm_installs or () if i.stream != "distro"]
    if not installs:
        return [skipped("rocm.prerequisites", "no AMD ROCm installed")]
    if bare := unpackaged(facts):  # AMD's package prerequisites: a tarball or wheels need none
        return [skipped("rocm.prerequisites", f"ROCm from {bare}: no package prerequisites")]
    if facts.packages is None or facts.os is None:
        return [Finding("rocm.prerequisites", UNKNOWN, "installed packages not collected")]
    if facts.os.id not in _APT_OSES:
        return [skipped("rocm.prerequisites", f"no prerequisite list for {facts.os.id}")]
    pkgs = facts.packages
    missing = [p for p in _PYTHON_PREREQS if p not in pkgs]
    why = []
    flavour = _FLAVOUR.match(facts.kernel or "")
    if "amdgpu-dkms" in pkgs and flavour:
        meta = f"linux-headers-{flavour.group(1)}"
        if not any(n == meta or n.startswith(meta + "-hwe-") for n in pkgs):
            missing.append(meta)
            why.append(f"without {meta} DKMS builds no amdgpu for the next kernel")
        extra = f"linux-modules-extra-{facts.kernel}"
        # Ubuntu's stock flavours ship it; other kernels may have none (apply asks apt first).
        if facts.os.id == "ubuntu" and flavour.group(1) == "generic" and extra not in pkgs:
            missing.append(extra)
    ld_missing = facts.rocm_ldconf is not None and not any(
        d.startswith("/opt/rocm") for d in facts.rocm_ldconf
    )
    if ld_missing:
        why.append("no /etc/ld.so.conf.d entry for ROCm's libraries")
    ld = ["an /etc/ld.so.conf.d entry"] if ld_missing else []
    if not missing and not ld_missing:
        return [Finding("rocm.prerequisites", OK, "AMD's prerequisites are installed")]
    return [
        Finding(
            "rocm.prerequisites",
            WARNING,
            "AMD's prerequisites missing: " + ", ".join(missing + ld),
            actual=", ".join(missing + ld),
            expected=", ".join(_PYTHON_PREREQS) + ", the headers meta-package, ld.so.conf.d",
            fix="rocmprov apply INVENTORY --tags packages,driver"
            + (f" ({'; '.join(why)})" if why else ""),
            ref=REF_APT,
        )
    ]
