"""Which ROCm is installed, from whichever stream put it there. Pure.

Three sources leave three kinds of traces (rocmprov/data/... release table, streams block):
- AMD's legacy stream (repo.radeon.com, up to 7.2.x): rocm-core writes <prefix>/.info/version
  under /opt/rocm-X.Y.Z (and /opt/rocm links to it); packages rocm-core, rocm, hip-runtime-amd.
- AMD's TheRock stream (ROCm Core SDK, 7.12 onward, 10.x): the prefix is /opt/rocm/core-X.Y
  (/opt/rocm/core links to it), rocm-core's .info/version lives there; packages amdrocm*.
- The distribution's own ROCm (Debian/Ubuntu universe: rocminfo, hipcc, libamdhip64-5...).
  A distribution library pulled in as a dependency is not an install: only its tools are.

Layouts of TheRock beside its packages (ROCm/TheRock RELEASES.md, "Installing multi-arch
tarballs" and "Using multi-arch ROCm Python packages"): a tarball unpacked anywhere (its prefix
holds .info/version and the per-GPU kernel packs in .kpack/; found at ROCM_PATH, ROCM_HOME,
/opt/rocm-*), and the pip wheels rocm-sdk-core/-libraries/-device-gfx* in a virtual environment
(site-packages/rocm_sdk_core-VERSION.dist-info; found in the torch python's own environment and
in the usual venv places). The legacy stream ends at 7.2.x and TheRock starts at 7.12, so a
version file of 7.12 or later outside /opt/rocm/core is a TheRock tarball.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rocmprov.parse.apt import upstream_version

LEGACY = "legacy"
THEROCK = "therock"
DISTRO = "distro"


@dataclass(frozen=True)
class VersionRecord:
    path: str
    version: str  # "" when the file did not name one


PACKAGES = "packages"
TARBALL = "tarball"
PIP = "pip"


@dataclass(frozen=True)
class RocmInstall:
    stream: str  # legacy | therock | distro
    version: str  # "7.2.1", "10.1.0", "5.7.1"; "" when only a directory says it is there
    evidence: str  # the file or package that says so
    layout: str = ""  # packages | tarball | pip | "" (a version file, installer unknown)
    prefix: str = ""  # the directory it lives in (a venv's prefix for pip)

    @property
    def label(self) -> str:
        name = {LEGACY: "AMD ROCm", THEROCK: "AMD ROCm Core SDK (TheRock)"}.get(
            self.stream, "distribution ROCm"
        )
        if self.layout == PIP:
            name = "ROCm SDK wheels (TheRock, pip)"
        return f"{name} {self.version}".strip()

    @property
    def where(self) -> str:
        """'tarball at /opt/rocm-10.1.0', 'pip in /home/a/.venv', 'packages', ''."""
        if self.layout == PIP:
            return f"pip in {self.prefix}"
        if self.layout == TARBALL:
            return f"tarball at {self.prefix}"
        if self.prefix:
            return f"{self.layout or 'installed'} at {self.prefix}"
        return self.layout


_RECORD = re.compile(r"^(?P<path>/\S+)\t(?P<text>.*)$")
_CORE_DIR = re.compile(r"/opt/rocm/core-(\d+\.\d+)(?:/|$)")
_VERSION = re.compile(r"\s*(\d+\.\d+(?:\.\d+)?)")
# TheRock packages: amdrocm10.1, amdrocm-core10.1, amdrocm10.1-gfx942, amdrocm-core-dev7.13-gfx94x
_THEROCK_PKG = re.compile(r"^amdrocm(?:-[a-z-]+?)?(\d+\.\d+)(?:-[a-z0-9-]+)?$")
_LEGACY_PKGS = ("rocm-core", "hip-runtime-amd", "rocm")
# AMD's own builds carry the release and its 5-digit build in the version (6.2.4.60204-139~22.04);
# a distribution's package of the same name does not (Ubuntu's "rocm" is 7.1.0-1).
_AMD_BUILD = re.compile(r"^(?:\d+:)?\d+\.\d+\.\d+\.\d{5}")
# Distribution packages that someone installs on purpose (tools), and libraries that arrive as
# dependencies of other software (Ubuntu 24.04 pulls libamdhip64-5 in for e.g. blender).
_DISTRO_TOOLS = ("rocminfo", "hipcc", "rocm-smi", "rocm-hip-devel", "libamdhip64-dev", "rocm")
_DISTRO_LIBS = ("libamdhip64-5", "libamdhip64-6", "libhsa-runtime64-1", "librocm-smi64-1",
                "hip-runtime", "rocm-hip")  # fmt: skip


def parse_version_records(text: str) -> tuple[VersionRecord, ...]:
    """The `rocm-installs` probe: 'PATH<TAB>first line' per version file, or a bare directory
    line ('/opt/rocm/core-10.1') for a TheRock prefix without one."""
    out = []
    for line in text.splitlines():
        m = _RECORD.match(line)
        if m:
            v = _VERSION.match(m.group("text"))
            out.append(VersionRecord(m.group("path"), v.group(1) if v else ""))
        elif line.startswith("/"):
            core = _CORE_DIR.search(line.strip())
            out.append(VersionRecord(line.strip(), core.group(1) if core else ""))
    return tuple(out)


_KPACK = re.compile(r"^kpack (/\S+)$")
_WHEEL = re.compile(
    r"^rocmsdk (?P<prefix>/\S+?)/lib/python3[^/]*/site-packages/rocm_sdk_core-(?P<v>[^/-]+)"
    r"\.dist-info$"
)


def parse_layout_marks(text: str) -> tuple[tuple[str, ...], tuple[VersionRecord, ...]]:
    """The `rocm-installs` probe's 'kpack PREFIX' lines (a TheRock tarball's .kpack/) and
    'rocmsdk DIST-INFO' lines (rocm-sdk-core wheels in a venv) -> (tarball prefixes, one record
    per venv: its prefix and the wheel's version)."""
    kpacks, wheels = [], []
    for line in text.splitlines():
        if m := _KPACK.match(line.strip()):
            kpacks.append(m.group(1).rstrip("/"))
        elif m := _WHEEL.match(line.strip()):
            wheels.append(VersionRecord(m.group("prefix"), m.group("v")))
    return tuple(kpacks), tuple(wheels)


def parse_ldconf(text: str) -> tuple[str, ...]:
    """The `rocm-installs` probe's 'ldconf FILE DIR' lines -> the ROCm library directories the
    dynamic linker is told about."""
    return tuple(
        line.split(None, 2)[2]
        for line in text.splitlines()
        if line.startswith("ldconf ") and len(line.split(None, 2)) == 3
    )


def _prefix_of(path: str) -> str:
    return path.removesuffix("/.info/version").rstrip("/") if path.startswith("/") else ""


def _stream_of(path: str, version: str = "", kpacks: tuple[str, ...] = ()) -> str:
    if "/opt/rocm/core" in path or _prefix_of(path) in kpacks:
        return THEROCK
    parts = [int(p) for p in version.split(".")[:2] if p.isdigit()]
    return THEROCK if len(parts) == 2 and tuple(parts) >= (7, 12) else LEGACY


def _layout_of(path: str, stream: str) -> str:
    if "/opt/rocm/core" in path:
        return PACKAGES
    return TARBALL if stream == THEROCK else ""


def _better(a: str, b: str) -> bool:
    """True when version a says more than b (10.1.0 over 10.1)."""
    return len(a.split(".")) > len(b.split("."))


def find_installs(
    records: tuple[VersionRecord, ...] | None,
    packages: dict[str, str] | None,
    *,
    kpacks: tuple[str, ...] = (),
    wheels: tuple[VersionRecord, ...] = (),
) -> tuple[RocmInstall, ...]:
    """Every ROCm install the traces show: one per stream and release (system-wide), one per
    virtual environment (pip); system installs first (TheRock, legacy, distribution), pip last."""
    found: dict[tuple[str, str], RocmInstall] = {}

    def add(stream: str, version: str, evidence: str, layout: str = "", prefix: str = "") -> None:
        minor = ".".join(version.split(".")[:2])
        key = (stream, minor)
        old = found.get(key)
        vague = ("", "/opt/rocm")  # /opt/rocm is a link to the real prefix
        if (
            old is None
            or _better(version, old.version)
            or (version == old.version and old.prefix in vague and prefix not in vague)
        ):
            found[key] = RocmInstall(stream, version, evidence, layout, prefix)

    for r in records or ():
        if r.version:
            stream = _stream_of(r.path, r.version, kpacks)
            add(stream, r.version, r.path, _layout_of(r.path, stream), _prefix_of(r.path))
    pkgs = packages or {}
    for name in _LEGACY_PKGS:
        if name in pkgs and _AMD_BUILD.match(pkgs[name]):
            add(LEGACY, upstream_version(pkgs[name]), f"package {name} {pkgs[name]}", PACKAGES)
            break
    for name, version in sorted(pkgs.items()):
        m = _THEROCK_PKG.match(name)
        if m:
            v = upstream_version(version)
            v = v if v.startswith(m.group(1)) else m.group(1)
            add(THEROCK, v, f"package {name} {version}", PACKAGES, "/opt/rocm/core-" + m.group(1))
    if not any(stream != DISTRO for stream, _ in found):
        tools = [n for n in _DISTRO_TOOLS if n in pkgs]
        if tools:
            lib = next((n for n in _DISTRO_LIBS if n in pkgs), tools[0])
            add(DISTRO, upstream_version(pkgs[lib]), f"package {lib} {pkgs[lib]}")
    order = {THEROCK: 0, LEGACY: 1, DISTRO: 2}
    system = sorted(found.values(), key=lambda i: (order[i.stream], _vkey(i.version)))
    venvs = {w.path: w for w in wheels if w.version}  # one per environment
    pip = [
        RocmInstall(THEROCK, w.version, f"{w.path} (rocm-sdk-core {w.version})", PIP, w.path)
        for w in sorted(venvs.values(), key=lambda w: w.path)
    ]
    return tuple(system + pip)


def _vkey(version: str) -> tuple[int, ...]:
    return tuple(-int(p) for p in version.split(".") if p.isdigit())


def stray_libraries(
    packages: dict[str, str] | None, installs: tuple[RocmInstall, ...]
) -> tuple[str, ...]:
    """Distribution ROCm libraries present without any install: 'libamdhip64-5 5.7.1'."""
    if installs or not packages:
        return ()
    return tuple(f"{n} {upstream_version(packages[n])}" for n in _DISTRO_LIBS if n in packages)
