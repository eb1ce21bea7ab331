"""ROCm package sources, pin, signing keys, packages and AMD's prerequisites.

Both AMD streams are recognised (legacy repo.radeon.com, TheRock repo.amd.com /
stable.repo.amd.com, and mirrors keeping their layout), in AMD's own layout (one-line .list
files, /etc/apt/keyrings/rocm.gpg, rocm-pin-600) as well as rocmprov's deb822 one: only a real
conflict is a finding. What "the right packages" means comes from the release table, the same
rows `rocmprov apply` installs from.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urlsplit

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
from rocmprov.facts.host import HostFacts
from rocmprov.knowledge.expected import ansible_facts_for, distro_packages
from rocmprov.model import Finding
from rocmprov.parse.apt import RepoConfig, parse_pins, signed_by

REF_APT = (
    "https://rocm.docs.amd.com/projects/install-on-linux/en/latest/install/install-methods/"
    "package-manager/package-manager-ubuntu.html"
)
REF_CORE_SDK = "https://rocm.docs.amd.com/en/docs-10.0.0/install/rocm.html"
LEGACY_ORIGIN = "repo.radeon.com"
PIN_PRIORITY = 600
FIX_REPO = "rocmprov apply INVENTORY --tags repo"

_LEGACY_LAYOUT = re.compile(r"/rocm/(?:apt|el\d+|rhel\d+|zyp)/|/amdgpu/\d|/graphics/\d")
_THEROCK_LAYOUT = re.compile(r"repo\.amd\.com|/rocm/core/packages/|/rocm/packages(?:-multi-arch)?/")
_LEGACY_RELEASE = re.compile(r"/rocm/apt/(\d+\.\d+(?:\.\d+)?)")


_DRIVER_URI = re.compile(r"\S*/amdgpu/\d\S*")


def source_stream(text: str) -> str:
    """ "therock", "legacy", "driver" or "" for one source file's text (mirrors keep AMD's
    layout). "driver": only AMD GPU Driver repositories (amdgpu/<ver>/...), which both streams
    use (TheRock 10.x installs amdgpu-dkms from repo.radeon.com/amdgpu/31.50/ubuntu)."""
    if _THEROCK_LAYOUT.search(text):
        return "therock"
    if LEGACY_ORIGIN in text or _LEGACY_LAYOUT.search(text):
        rest = _DRIVER_URI.sub("", text)
        if (
            _DRIVER_URI.search(text)
            and LEGACY_ORIGIN not in rest
            and not _LEGACY_LAYOUT.search(rest)
        ):
            return "driver"
        return "legacy"
    return ""


def is_amd_source(text: str) -> bool:
    return bool(source_stream(text))


@dataclass(frozen=True)
class SourceEntry:
    path: str
    uri: str
    suite: str
    signed_by: tuple[str, ...]


_ONE_LINE = re.compile(r"^\s*deb\s+(?:\[(?P<opts>[^\]]*)\]\s+)?(?P<uri>\S+)\s+(?P<suite>\S+)", re.M)


def source_entries(path: str, text: str) -> list[SourceEntry]:
    """apt entries of one file, one-line or deb822 (yum .repo files give none)."""
    out = []
    for m in _ONE_LINE.finditer(text):
        keys = tuple(re.findall(r"signed-by=([^\s\]]+)", m.group("opts") or ""))
        out.append(SourceEntry(path, m.group("uri").rstrip("/"), m.group("suite"), keys))
    for stanza in re.split(r"\n\s*\n", text):
        uris = re.search(r"^URIs:\s*(.+)$", stanza, re.M)
        if not uris or re.search(r"^Enabled:\s*no", stanza, re.M | re.I):
            continue
        suites = re.search(r"^Suites:\s*(.+)$", stanza, re.M)
        keys = tuple(re.findall(r"^Signed-By:\s*(/\S+)", stanza, re.M))
        for uri in uris.group(1).split():
            for suite in suites.group(1).split() if suites else [""]:
                out.append(SourceEntry(path, uri.rstrip("/"), suite, keys))
    return out


def check_repo(facts: HostFacts, policy: Policy) -> list[Finding]:
    repo = facts.repo
    if repo is None:
        return [Finding("repo.sources", UNKNOWN, "package sources not collected")]
    amd_sources = {p: t for p, t in repo.sources.items() if is_amd_source(t)}
    if not amd_sources:
        return [_no_amd_source(policy)]
    out = _sources(facts, policy, amd_sources)
    out += _keys(repo, amd_sources)
    if any(source_stream(t) == "legacy" for t in amd_sources.values()):
        out.append(_pin(repo))
    return out


def _no_amd_source(policy: Policy) -> Finding:
    """No AMD source: fine on a distribution-packages host, a finding where the site expects one
    (rocmprov_repo_source=amd, or a target release with no source named): apt can then neither
    reinstall nor upgrade ROCm (e.g. after a failed key fetch took the sources away)."""
    expected = policy.repo_source == "amd" or (not policy.repo_source and policy.rocm_version)
    if not expected:
        return Finding(
            "repo.sources", OK, "no AMD repository (distribution packages)", actual="none"
        )
    target = f"ROCm {policy.rocm_version}" if policy.rocm_version else "AMD's ROCm"
    return Finding(
        "repo.sources",
        WARNING,
        f"no usable ROCm source, although the site expects {target} from AMD's repositories",
        actual="none",
        expected=f"an AMD source for {target}",
        fix=FIX_REPO,
        ref=REF_APT,
    )


def _sources(facts: HostFacts, policy: Policy, amd_sources: dict[str, str]) -> list[Finding]:
    entries = [e for p, t in amd_sources.items() for e in source_entries(p, t)]
    by_target: dict[tuple[str, str], list[SourceEntry]] = {}
    for e in entries:
        by_target.setdefault((e.uri, e.suite), []).append(e)
    out = []
    for (uri, suite), same in sorted(by_target.items()):
        files = sorted({e.path for e in same})
        if len(files) < 2:
            continue
        keys = {e.signed_by for e in same}
        conflict = len(keys) > 1
        out.append(
            Finding(
                "repo.sources",
                CRITICAL if conflict else WARNING,
                f"{uri} {suite} is configured in {len(files)} files"
                + (" with different Signed-By: apt refuses to update" if conflict else ""),
                actual=", ".join(files),
                expected="each repository in one source file",
                fix=FIX_REPO + " (writes one deb822 file per repository, removes the others)",
                ref=REF_APT,
            )
        )
    releases_seen = sorted({m for t in amd_sources.values() for m in _LEGACY_RELEASE.findall(t)})
    streams = sorted({source_stream(t) for t in amd_sources.values()} - {"driver"})
    if len(releases_seen) > 1 or len(streams) > 1:
        out.append(
            Finding(
                "repo.sources",
                WARNING,
                "sources of more than one ROCm release: "
                + ", ".join(streams + [f"rocm/apt/{r}" for r in releases_seen]),
                actual=", ".join(sorted(amd_sources)),
                expected="the sources of one release",
                fix=FIX_REPO,
                ref=REF_CORE_SDK,
            )
        )
    wrong = _not_the_target(facts, policy, entries)
    if wrong:
        out.append(wrong)
    if not out:
        out.append(
            Finding(
                "repo.sources",
                OK,
                f"{len(amd_sources)} AMD source file(s), {', '.join(streams or ['driver'])} stream",
                actual=", ".join(sorted(amd_sources)),
            )
        )
    return out


def _not_the_target(facts: HostFacts, policy: Policy, entries: list[SourceEntry]) -> Finding | None:
    """The site targets a release (inventory) whose ROCm repository is not among the sources."""
    from rocmprov.knowledge import releases

    if not policy.rocm_version or facts.os is None:
        return None
    host = ansible_facts_for(facts.os.id, facts.os.version_id)
    plan = releases.resolve(policy.rocm_version, host)
    if plan.get("error") or not plan.get("rocm_url"):
        return None
    want = urlsplit(plan["rocm_url"]).path.rstrip("/")
    if any(urlsplit(e.uri).path.rstrip("/").endswith(want) for e in entries):
        return None
    return Finding(
        "repo.sources",
        WARNING,
        f"no source for ROCm {plan['version']}, which the site targets",
        actual=", ".join(sorted({e.uri for e in entries})),
        expected=f"{plan['rocm_url']} {plan.get('suite', '')}".strip(),
        fix=f"rocmprov apply INVENTORY --tags repo -e rocmprov_rocm_version={policy.rocm_version}",
        ref=plan.get("source") or REF_APT,
    )


def _keys(repo: RepoConfig, amd_sources: dict[str, str]) -> list[Finding]:
    out = []
    stale = sorted(k.path for k in repo.keys if k.path.startswith("/etc/apt/trusted.gpg.d/"))
    if stale:
        out.append(
            Finding(
                "repo.key",
                WARNING,
                "ROCm key in trusted.gpg.d (trusted for every repository)",
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
    if not out:
        out.append(Finding("repo.key", OK, "signing key in place"))
    return out


def _pin(repo: RepoConfig) -> Finding:
    pins = [p for p in parse_pins(repo) if p.origin == LEGACY_ORIGIN]
    if not pins:
        return Finding(
            "repo.pin",
            WARNING,
            f"no apt pin for {LEGACY_ORIGIN}: the distribution's ROCm packages can win",
            actual="none",
            expected=f"Pin: release o={LEGACY_ORIGIN} / Pin-Priority: {PIN_PRIORITY}",
            fix=FIX_REPO,
            ref=REF_APT,
        )
    if all(p.priority < 500 for p in pins):
        low = pins[0]
        return Finding(
            "repo.pin",
            WARNING,
            f"apt pin for {LEGACY_ORIGIN} at {low.priority}: below the distribution's 500",
            actual=f"{low.priority} ({low.path})",
            expected=str(PIN_PRIORITY),
            fix=FIX_REPO,
            ref=REF_APT,
        )
    best = max(pins, key=lambda p: p.priority)
    return Finding("repo.pin", OK, f"apt pin {best.priority} for {LEGACY_ORIGIN} ({best.path})")


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
