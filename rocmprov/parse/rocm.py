"""Which ROCm is installed, from whichever stream put it there. Pure.

Three sources leave three kinds of traces (rocmprov/data/... release table, streams block):
- AMD's legacy stream (repo.radeon.com, up to 7.2.x): rocm-core writes <prefix>/.info/version
  under /opt/rocm-X.Y.Z (and /opt/rocm links to it); packages rocm-core, rocm, hip-runtime-amd.
- AMD's TheRock stream (ROCm Core SDK, 7.12 onward, 10.x): the prefix is /opt/rocm/core-X.Y
  (/opt/rocm/core links to it), rocm-core's .info/version lives there; packages amdrocm*.
- The distribution's own ROCm (Debian/Ubuntu universe: rocminfo, hipcc, libamdhip64-5...).
  A distribution library pulled in as a dependency is not an install: only its tools are.
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


@dataclass(frozen=True)
class RocmInstall:
    stream: str  # legacy | therock | distro
    version: str  # "7.2.1", "10.1.0", "5.7.1"; "" when only a directory says it is there
    evidence: str  # the file or package that says so

    @property
    def label(self) -> str:
        name = {LEGACY: "AMD ROCm", THEROCK: "AMD ROCm Core SDK (TheRock)"}.get(
            self.stream, "distribution ROCm"
        )
        return f"{name} {self.version}".strip()


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


def parse_ldconf(text: str) -> tuple[str, ...]:
    """The `rocm-installs` probe's 'ldconf FILE DIR' lines -> the ROCm library directories the
    dynamic linker is told about."""
    return tuple(
        line.split(None, 2)[2]
        for line in text.splitlines()
        if line.startswith("ldconf ") and len(line.split(None, 2)) == 3
    )


def _stream_of(path: str) -> str:
    return THEROCK if "/opt/rocm/core" in path else LEGACY


def _better(a: str, b: str) -> bool:
    """True when version a says more than b (10.1.0 over 10.1)."""
    return len(a.split(".")) > len(b.split("."))


def find_installs(
    records: tuple[VersionRecord, ...] | None, packages: dict[str, str] | None
) -> tuple[RocmInstall, ...]:
    """Every ROCm install the traces show, newest evidence first per stream."""
    found: dict[tuple[str, str], RocmInstall] = {}

    def add(stream: str, version: str, evidence: str) -> None:
        minor = ".".join(version.split(".")[:2])
        key = (stream, minor)
        old = found.get(key)
        if old is None or (_better(version, old.version)):
            found[key] = RocmInstall(stream, version, evidence)

    for r in records or ():
        if r.version:
            add(_stream_of(r.path), r.version, r.path)
    pkgs = packages or {}
    for name in _LEGACY_PKGS:
        if name in pkgs and _AMD_BUILD.match(pkgs[name]):
            add(LEGACY, upstream_version(pkgs[name]), f"package {name} {pkgs[name]}")
            break
    for name, version in sorted(pkgs.items()):
        m = _THEROCK_PKG.match(name)
        if m:
            v = upstream_version(version)
            add(THEROCK, v if v.startswith(m.group(1)) else m.group(1), f"package {name} {version}")
    if not any(stream != DISTRO for stream, _ in found):
        tools = [n for n in _DISTRO_TOOLS if n in pkgs]
        if tools:
            lib = next((n for n in _DISTRO_LIBS if n in pkgs), tools[0])
            add(DISTRO, upstream_version(pkgs[lib]), f"package {lib} {pkgs[lib]}")
    order = {THEROCK: 0, LEGACY: 1, DISTRO: 2}
    return tuple(
        sorted(found.values(), key=lambda i: (order[i.stream], _vkey(i.version)), reverse=False)
    )


def _vkey(version: str) -> tuple[int, ...]:
    return tuple(-int(p) for p in version.split(".") if p.isdigit())


def stray_libraries(
    packages: dict[str, str] | None, installs: tuple[RocmInstall, ...]
) -> tuple[str, ...]:
    """Distribution ROCm libraries present without any install: 'libamdhip64-5 5.7.1'."""
    if installs or not packages:
        return ()
    return tuple(f"{n} {upstream_version(packages[n])}" for n in _DISTRO_LIBS if n in packages)
