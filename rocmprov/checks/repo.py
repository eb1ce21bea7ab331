"""ROCm package sources, pin and signing keys.

Both AMD streams are recognised (legacy repo.radeon.com, TheRock repo.amd.com /
stable.repo.amd.com, and mirrors keeping their layout), in AMD's own layout (one-line .list
files, /etc/apt/keyrings/rocm.gpg, rocm-pin-600) as well as rocmprov's deb822 one: only a real
conflict is a finding. Packages and prerequisites: checks/packages.py.
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
)
from rocmprov.checks.policy import Policy
from rocmprov.facts.host import HostFacts
from rocmprov.knowledge.expected import ansible_facts_for
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
