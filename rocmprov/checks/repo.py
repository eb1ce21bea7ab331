"""ROCm package sources, pin, signing keys and packages, as `rocmprov apply` leaves them."""

from __future__ import annotations

import re

from rocmprov.checks.base import CRITICAL, OK, UNKNOWN, WARNING
from rocmprov.checks.policy import Policy
from rocmprov.expected import amd_packages, distro_packages
from rocmprov.facts import HostFacts
from rocmprov.model import Finding
from rocmprov.parse.apt import RepoConfig, parse_pins, signed_by

REF_APT = (
    "https://rocm.docs.amd.com/projects/install-on-linux/en/latest/install/install-methods/"
    "package-manager/package-manager-ubuntu.html"
)
AMD_ORIGIN = "repo.radeon.com"
PIN_PRIORITY = 600
FIX_REPO = "rocmprov apply INVENTORY --tags repo"


_AMD_LAYOUT = re.compile(r"/rocm/(?:apt|el\d|rhel\d|zyp)/|/amdgpu/\d")


def is_amd_source(text: str) -> bool:
    """repo.radeon.com, or a mirror of it (air-gapped sites keep AMD's directory layout)."""
    return AMD_ORIGIN in text or bool(_AMD_LAYOUT.search(text))


def check_repo(facts: HostFacts, policy: Policy) -> list[Finding]:
    repo = facts.repo
    if repo is None:
        return [Finding("repo.sources", UNKNOWN, "package sources not collected")]
    amd_sources = {p: t for p, t in repo.sources.items() if is_amd_source(t)}
    out: list[Finding] = []
    legacy = sorted(p for p in amd_sources if p.endswith(".list"))
    if legacy:
        out.append(
            Finding(
                "repo.sources",
                WARNING,
                "one-line AMD sources left from older instructions",
                actual=", ".join(legacy),
                expected="deb822 rocm.sources/amdgpu.sources with Signed-By",
                fix=FIX_REPO,
                ref=REF_APT,
            )
        )
    elif amd_sources:
        out.append(
            Finding(
                "repo.sources",
                OK,
                f"{len(amd_sources)} AMD source(s)",
                actual=", ".join(sorted(amd_sources)),
            )
        )
    else:
        out.append(
            Finding("repo.sources", OK, "no AMD repository (distribution packages)", actual="none")
        )
    out += _keys(facts, amd_sources)
    if amd_sources:
        out.append(_pin(repo))
    return out


def _keys(facts: HostFacts, amd_sources: dict[str, str]) -> list[Finding]:
    repo = facts.repo
    assert repo is not None
    out = []
    stale = sorted(k.path for k in repo.keys if k.path.startswith("/etc/apt/trusted.gpg.d/"))
    if stale:
        out.append(
            Finding(
                "repo.key",
                WARNING,
                "stale ROCm key in trusted.gpg.d (trusted for every repository)",
                actual=", ".join(stale),
                expected="the key only in /etc/apt/keyrings, named by Signed-By",
                fix=FIX_REPO,
                ref=REF_APT,
            )
        )
    known = {k.path for k in repo.keys}
    missing = sorted({p for t in amd_sources.values() for p in signed_by(t)} - known)
    if missing:
        out.append(
            Finding(
                "repo.key",
                CRITICAL,
                "a source names a keyring that is not there",
                actual=", ".join(missing),
                expected="the keyring file",
                fix=FIX_REPO,
                ref=REF_APT,
            )
        )
    expired = sorted(k.path for k in repo.keys if k.expired_flag)
    if expired:
        out.append(
            Finding(
                "repo.key",
                CRITICAL,
                "expired ROCm signing key (apt update fails)",
                actual=", ".join(expired),
                fix=FIX_REPO,
                ref=REF_APT,
            )
        )
    if not out and amd_sources:
        out.append(Finding("repo.key", OK, "signing key in place"))
    return out


def _pin(repo: RepoConfig) -> Finding:
    pins = [p for p in parse_pins(repo) if p.origin == AMD_ORIGIN]
    if not pins:
        return Finding(
            "repo.pin",
            WARNING,
            f"no apt pin for {AMD_ORIGIN}",
            actual="none",
            expected=f"Pin: release o={AMD_ORIGIN} / Pin-Priority: {PIN_PRIORITY}",
            fix=FIX_REPO,
            ref=REF_APT,
        )
    wrong = [p for p in pins if p.priority != PIN_PRIORITY]
    if wrong:
        return Finding(
            "repo.pin",
            WARNING,
            f"apt pin for {AMD_ORIGIN} at {wrong[0].priority}",
            actual=f"{wrong[0].priority} ({wrong[0].path})",
            expected=str(PIN_PRIORITY),
            fix=FIX_REPO,
            ref=REF_APT,
        )
    return Finding("repo.pin", OK, f"apt pin {PIN_PRIORITY} for {AMD_ORIGIN}")


def check_packages(facts: HostFacts, policy: Policy) -> list[Finding]:
    if facts.packages is None:
        return [Finding("rocm.packages", UNKNOWN, "installed packages not collected")]
    source = policy.repo_source or _infer_source(facts)
    if not source:
        return [
            Finding(
                "rocm.packages",
                OK,
                "no ROCm packages expected here (none installed, no source configured)",
            )
        ]
    if source == "amd":
        version = policy.rocm_version or facts.rocm_version or ""
        wanted = amd_packages(version) if version else []
    else:
        wanted = distro_packages(facts.os.id, facts.os.version_id) if facts.os else []
    if not wanted:
        return [Finding("rocm.packages", UNKNOWN, f"no package list known for source {source}")]
    missing = [p for p in wanted if p not in facts.packages]
    if missing:
        return [
            Finding(
                "rocm.packages",
                CRITICAL,
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


def _infer_source(facts: HostFacts) -> str:
    repo = facts.repo
    if repo is not None and any(is_amd_source(t) for t in repo.sources.values()):
        return "amd"
    pkgs = facts.packages or {}
    if "rocm-core" in pkgs:
        return "amd"
    if any(p in pkgs for p in ("rocminfo", "libamdhip64-5", "libamdhip64-dev", "hipcc")):
        return "distro"
    return ""
