"""AMD's repository layout rules (tests/lab/amd_layout.yaml), evaluated for one release.

The rules come from AMD's install-doc sources, not from the release table: given only a
release's version, stream and driver version (and the OS), they say which repositories AMD
publishes, at which path, with which suite and key. The lab serves exactly these
(tests/lab/amdrepo.py) and tests/test_release_table.py compares every row of the table with
them, so a path the table gets wrong fails in both places.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

RULES = Path(__file__).with_name("amd_layout.yaml")


def load(path: Path = RULES) -> dict[str, Any]:
    with path.open() as f:
        return yaml.safe_load(f)


def vkey(version: object) -> tuple[int, ...]:
    return tuple(int("".join(c for c in p if c.isdigit()) or 0) for p in str(version).split("."))


@dataclass(frozen=True)
class Release:
    """What the layout needs to know of a release: nothing but its identity."""

    version: str
    stream: str
    driver: str = ""

    @property
    def rel(self) -> str:
        """AMD's directory for the release: x.y for x.y.0, else x.y.z."""
        parts = self.version.split(".")
        return ".".join(parts[:2]) if len(parts) == 3 and parts[2] == "0" else self.version

    @property
    def major(self) -> str:
        return self.version.split(".", maxsplit=1)[0]


@dataclass(frozen=True)
class Repo:
    """One published repository: kind (rocm|amdgpu|graphics), host, path, suite, key URL."""

    kind: str
    host: str
    path: str
    suite: str
    key_url: str

    @property
    def url(self) -> str:
        return f"https://{self.host}/{self.path}"


class Layout:
    def __init__(self, rules: dict[str, Any] | None = None) -> None:
        self.rules = rules or load()
        self.streams: dict[str, Any] = self.rules["streams"]

    # --- pieces -----------------------------------------------------------------------------
    def _era(self, rel: Release) -> dict[str, Any]:
        eras = self.streams[rel.stream]["eras"]
        for era in eras:  # newest first
            if vkey(rel.version) >= vkey(era["from"]):
                return era
        raise ValueError(f"{rel.stream} {rel.version}: older than every layout era")

    def _drv(self, rel: Release) -> str:
        if rel.stream == "legacy" and vkey(rel.version) < (7,):
            return rel.rel  # up to 6.4 the driver directory is the ROCm release
        return rel.driver

    def _graphics_rel(self, rel: Release) -> str:
        return str(self.streams["legacy"].get("graphics_release", {}).get(rel.version, rel.rel))

    def el(self, rel: Release, os_version: str) -> str:
        """RHEL directory below el/: the OS version, or its major where AMD uses that."""
        major = os_version.split(".", maxsplit=1)[0]
        drv = self._drv(rel)
        if rel.stream == "legacy" and vkey(rel.version) < (7,):
            return os_version
        for rule in self.streams["legacy"]["rpm"]["el_by_major"]:  # newest first
            if drv and vkey(drv) >= vkey(rule["from_driver"]):
                return major if major in rule["majors"] else os_version
        return os_version

    def _fill(self, template: str, rel: Release, os_version: str = "", distro: str = "") -> str:
        major = os_version.split(".", maxsplit=1)[0]
        return (template.replace("{rel}", rel.rel).replace("{ver}", rel.version)
                .replace("{drv}", self._drv(rel)).replace("{graphics_rel}", self._graphics_rel(rel))
                .replace("{el}", self.el(rel, os_version) if os_version else "")
                .replace("{os}", os_version).replace("{major}", major)
                .replace("{distro}", distro))

    # --- apt --------------------------------------------------------------------------------
    def apt_repos(self, rel: Release, distro_key: str) -> list[Repo]:
        """The apt repositories AMD publishes for this release and distribution
        ("ubuntu-24.04", "debian-12"); [] where it publishes none."""
        legacy = self.streams["legacy"]
        codename = legacy["apt"]["suites"].get(distro_key)
        out: list[Repo] = []
        if rel.stream == "legacy":
            if codename is None:
                return []
            key = f"https://{legacy['host']}/{legacy['key']['path']}"
            for kind in ("rocm", "amdgpu", "graphics"):
                rule = legacy["apt"][kind]
                if "from" in rule and vkey(rel.version) < vkey(rule["from"]):
                    continue
                if kind == "amdgpu" and not self._drv(rel):
                    continue
                out.append(Repo(kind, legacy["host"], self._fill(rule["path"], rel), codename, key))
            return out
        era = self._era(rel)
        distro = self.streams["therock"]["distro_dirs"].get(distro_key)
        if distro is None or "apt" not in era:
            return []
        key = f"https://{era['host']}/{era['key']['path']}"
        path = self._fill(era["apt"]["rocm"]["path"], rel, distro=distro)
        out.append(Repo("rocm", era["host"], path, era["apt"]["suite"], key))
        driver = era.get("driver")
        if driver and rel.driver and codename is not None:
            dkey = f"https://{driver['host']}/{driver['key']['path']}"
            out.append(Repo("amdgpu", driver["host"], self._fill(driver["apt"]["path"], rel),
                            codename, dkey))
        return out

    # --- rpm / sles -------------------------------------------------------------------------
    def rpm_path(self, rel: Release, kind: str, os_version: str, family: str = "rpm") -> str:
        """The path AMD publishes `kind` at for RHEL (family rpm) or SLES (sles) os_version;
        "" where it publishes none."""
        if rel.stream == "legacy":
            rule = self.streams["legacy"][family].get(kind)
            if not rule or ("from" in rule and vkey(rel.version) < vkey(rule["from"])):
                return ""
            if kind == "amdgpu" and not self._drv(rel):
                return ""
            return self._fill(rule["path"], rel, os_version)
        era = self._era(rel)
        if kind == "amdgpu":
            driver = era.get("driver") or {}
            rule = driver.get(family)
            return self._fill(rule["path"], rel, os_version) if rule and rel.driver else ""
        rule = (era.get(family) or {}).get(kind)
        return self._fill(rule["path"], rel, os_version) if rule else ""

    def base_url(self, rel: Release, kind: str = "rocm") -> str:
        if rel.stream == "legacy":
            return f"https://{self.streams['legacy']['host']}"
        era = self._era(rel)
        host = era["driver"]["host"] if kind == "amdgpu" and era.get("driver") else era["host"]
        return f"https://{host}"

    def key_url(self, rel: Release, kind: str = "rocm") -> str:
        if rel.stream == "legacy":
            legacy = self.streams["legacy"]
            return f"https://{legacy['host']}/{legacy['key']['path']}"
        era = self._era(rel)
        part = era["driver"] if kind == "amdgpu" and era.get("driver") else era
        return f"https://{part['host']}/{part['key']['path']}"


def release_of(row: dict[str, Any]) -> Release:
    """Only a row's identity (version, stream, driver version): never its paths."""
    return Release(str(row["version"]), str(row.get("stream", "")), str(row.get("driver") or ""))


def _fill_distro(path: object, distro: str) -> str:
    return str(path or "").replace("{distro}", distro).strip("/")


def row_problems(table: dict[str, Any], row: dict[str, Any],
                 layout: Layout | None = None) -> list[str]:
    """Where a release row's repository URLs disagree with AMD's layout rules (empty: none)."""
    layout = layout or Layout()
    rel = release_of(row)
    out: list[str] = []
    where = f"{rel.version} ({rel.stream})"
    stream = (table.get("streams") or {}).get(rel.stream) or {}
    apt = row.get("apt") or {}
    if not apt.get("rocm"):
        return out

    def own(key: str) -> str:
        value = row.get(key)
        return str(value if value is not None else stream.get(key) or "")

    for kind in ("rocm", "amdgpu"):
        want_key = layout.key_url(rel, kind)
        have_key = own("driver_key_url" if kind == "amdgpu" else "key_url") or own("key_url")
        if kind == "amdgpu" and not apt.get("amdgpu"):
            continue
        if have_key != want_key:
            out.append(f"{where}: {kind} key {have_key}, AMD: {want_key}")
    for distro_key, suite in (apt.get("suites") or {}).items():
        published = {r.kind: r for r in layout.apt_repos(rel, str(distro_key))}
        if "rocm" not in published:
            out.append(f"{where}: AMD publishes no apt repository for {distro_key}")
            continue
        distro = str((apt.get("distro_dirs") or {}).get(distro_key, ""))
        if str(suite) != published["rocm"].suite:
            out.append(f"{where}: {distro_key} suite {suite}, AMD: {published['rocm'].suite}")
        for kind in ("rocm", "amdgpu", "graphics"):
            have = _fill_distro(apt.get(kind), distro)
            if kind == "amdgpu" and distro_key not in (apt.get("amdgpu_suites") or {distro_key: 1}):
                have = ""  # the driver repository has no suite for this distribution
            pub = published.get(kind)
            want = pub.path.strip("/") if pub else ""
            base = own("driver_base_url") if kind == "amdgpu" and row.get("driver_base_url") \
                else own("base_url")
            if have and pub and base.rstrip("/") != f"https://{pub.host}":
                out.append(f"{where}: {kind} on {base}, AMD: https://{pub.host}")
            if have != want:
                out.append(f"{where}: apt {kind} {distro_key}: {have or 'none'}, "
                           f"AMD: {want or 'none'}")
            if kind == "amdgpu" and pub and apt.get("amdgpu_suites"):
                got = (apt.get("amdgpu_suites") or {}).get(distro_key)
                if got and got != pub.suite:
                    out.append(f"{where}: amdgpu suite {distro_key} {got}, AMD: {pub.suite}")
    for family in ("rpm", "sles"):
        section = row.get(family) or {}
        for kind in ("rocm", "amdgpu", "graphics"):
            for os_version, have in (section.get(kind) or {}).items():
                want = layout.rpm_path(rel, kind, str(os_version), family)
                if str(have).strip("/") != want:
                    out.append(f"{where}: {family} {kind} {os_version}: {have}, "
                               f"AMD: {want or 'none'}")
    return out
