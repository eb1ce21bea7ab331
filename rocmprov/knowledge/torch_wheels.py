"""Which torch wheels exist for which ROCm (torch_rocm.yaml and the release table's pinned
wheels): parse torch.__version__, the pytorch.org index of a ROCm tag, the ROCm a HIP version
belongs to, and the verdict on a host's torch. Pure lookups."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from packaging.version import Version

from rocmprov.knowledge.matrix import (
    CRITICAL,
    OK,
    UNKNOWN,
    WARNING,
    Verdict,
    _minor,
    load_matrix,
    load_torch,
    parse_release,
)

_TORCH_RE = re.compile(r"^\s*(\d+\.\d+(?:\.\d+)?)([A-Za-z0-9.]*?)(?:\+([A-Za-z0-9._-]+))?\s*$")
_ROCM_TAG_RE = re.compile(r"^rocm(\d+(?:\.\d+){1,2})")
_CUDA_TAG_RE = re.compile(r"^cu(\d+)$")
_HIP_RE = re.compile(r"^\s*(\d+)\.(\d+)\.(\d+)")


@dataclass(frozen=True)
class TorchBuild:
    """What ``torch.__version__`` says: base version and the build's accelerator.

    kind is "rocm", "cuda", "cpu", "none" (no local tag) or "other"; accel is the ROCm index tag
    ("6.2.4") or CUDA version ("12.1") where the tag gives one.
    """

    base: str
    kind: str
    accel: str | None = None


def parse_torch_version(torch_version: str) -> TorchBuild | None:
    """ "2.4.1+rocm6.1" -> TorchBuild("2.4.1", "rocm", "6.1"); "2.1.0+cu121" -> cuda "12.1"."""
    if not isinstance(torch_version, str):
        return None
    m = _TORCH_RE.match(torch_version)
    if not m:
        return None
    base, _pre, local = m.groups()
    if not local:
        return TorchBuild(base, "none")
    local = local.lower()
    if rocm := _ROCM_TAG_RE.match(local):
        return TorchBuild(base, "rocm", rocm.group(1))
    if cuda := _CUDA_TAG_RE.match(local):
        digits = cuda.group(1)
        return TorchBuild(
            base, "cuda", f"{digits[:-1]}.{digits[-1]}" if len(digits) > 1 else digits
        )
    if local == "cpu":
        return TorchBuild(base, "cpu")
    return TorchBuild(base, "other")


@cache
def _table_wheels() -> tuple[tuple[str, str, str], ...]:
    """(torch version, ROCm tag, index URL) from the release table (playbooks/data): the torch
    wheels published per release, pytorch.org's (.../whl/rocm7.2) and AMD's own indexes."""
    from rocmprov.knowledge import releases

    out = []
    for row in releases.all_releases():
        if not row.torch_index:
            continue
        m = re.search(r"/rocm(\d+(?:\.\d+){1,2})/?$", row.torch_index)
        tag = m.group(1) if m else row.version  # AMD's wheels are tagged +rocm<release>
        out.extend((str(t), tag, row.torch_index) for t in row.torch_versions)
    return tuple(out)


def torch_pairing(torch_version: str) -> list[str]:
    """ROCm index tags this torch release was published for (["6.1", "6.2"] for 2.5.1).

    The release table's torch rows first, then pytorch.org's history in torch_rocm.yaml (which
    also covers the 5.x releases the table does not). A version never published (e.g. "2.5.7")
    falls back to its minor series. Unknown/garbage -> [].
    """
    build = parse_torch_version(torch_version)
    if build is None:
        return []
    rows = [(str(r.get("torch")), str(t)) for r in load_torch().get("releases", [])
            for t in r.get("rocm", [])]  # fmt: skip
    rows += [(torch, tag) for torch, tag, _ in _table_wheels()]
    exact = [tag for torch, tag in rows if torch == build.base]
    if not exact:
        series = ".".join(build.base.split(".")[:2])
        exact = [tag for torch, tag in rows if ".".join(torch.split(".")[:2]) == series]
    tags: list[str] = []
    for tag in exact:
        if tag not in tags:
            tags.append(tag)
    return sorted(tags, key=lambda t: parse_release(t) or Version("0"))


def index_url(rocm_tag: str) -> str:
    """ "6.2.4" -> "https://download.pytorch.org/whl/rocm6.2.4"; a TheRock release -> the AMD
    index the release table names for it."""
    for _, tag, url in _table_wheels():
        if tag == rocm_tag:
            return url
    template = str(load_torch().get("index_url", "https://download.pytorch.org/whl/rocm{tag}"))
    return template.format(tag=rocm_tag)


def rocm_for_hip(hip_version: str | None) -> str | None:
    """torch.version.hip ("6.1.40091-a8dbc0c19") -> ROCm major.minor ("6.1"); None if unknown.

    Uses the HIP build number from AMD's matrix, then falls back to the HIP major.minor.
    """
    if not isinstance(hip_version, str):
        return None
    m = _HIP_RE.match(hip_version)
    if not m:
        return None
    builds = load_matrix().get("hip_builds", {}).get("builds", {})
    known = builds.get(m.group(3))
    return str(known) if known else f"{int(m.group(1))}.{int(m.group(2))}"


_TORCH_SOURCE = "https://pytorch.org/get-started/previous-versions/"


def torch_verdict(
    torch_version: str, hip_version: str | None, installed_rocm: str | None
) -> Verdict:
    """Does the installed torch build fit this AMD host's ROCm?

    ``hip_version`` is torch.version.hip as reported (None for CUDA and CPU builds).
    critical: a CUDA or CPU build, or a plain PyPI wheel with no HIP (a CUDA build);
    warning: a ROCm build for another ROCm major.minor than the one installed;
    ok: same major.minor; unknown: versions that do not parse or no installed ROCm to compare.
    """
    build = parse_torch_version(torch_version)
    actual = str(torch_version)
    if build is None:
        return Verdict(UNKNOWN, actual, "", "cannot parse the torch version", _TORCH_SOURCE)
    pairing = torch_pairing(build.base)
    installed = parse_release(installed_rocm) if installed_rocm is not None else None
    wanted = _wanted_index(pairing, installed)
    expected = f"a ROCm build, e.g. torch=={build.base} from {wanted}" if wanted else "a ROCm build"
    if build.kind == "cuda":
        return Verdict(
            CRITICAL,
            actual,
            expected,
            f"torch {actual} is a CUDA {build.accel} build: it cannot use AMD GPUs",
            _TORCH_SOURCE,
        )
    if build.kind == "cpu":
        return Verdict(
            CRITICAL, actual, expected, f"torch {actual} is a CPU-only build", _TORCH_SOURCE
        )
    hip_rocm = rocm_for_hip(hip_version)
    if build.kind == "rocm":
        wheel_rocm = build.accel
    elif hip_rocm is not None:
        wheel_rocm = hip_rocm
    elif build.kind == "none":
        return Verdict(
            CRITICAL,
            actual,
            expected,
            f"torch {actual} has no +rocm tag and no HIP version: PyPI's default Linux wheel "
            "is a CUDA build",
            _TORCH_SOURCE,
        )
    else:
        return Verdict(
            UNKNOWN, actual, expected, "cannot tell which build this torch is", _TORCH_SOURCE
        )
    wheel_v = parse_release(wheel_rocm or "")
    note = ""
    if pairing and wheel_rocm not in pairing:
        note = (
            f"; pytorch.org published torch {build.base} for ROCm {', '.join(pairing)} only "
            "(a custom or vendor build?)"
        )
    if installed is None or wheel_v is None:
        return Verdict(
            UNKNOWN,
            f"{actual} (built for ROCm {wheel_rocm})",
            "",
            f"no installed ROCm version to compare with{note}",
            _TORCH_SOURCE,
        )
    actual = f"{actual} (built for ROCm {wheel_rocm}) on ROCm {installed_rocm}"
    if _minor(wheel_v) == _minor(installed):
        return Verdict(
            OK, actual, f"ROCm {_minor(installed)}", f"wheel matches{note}", _TORCH_SOURCE
        )
    return Verdict(
        WARNING,
        actual,
        expected if wanted else f"a wheel built for ROCm {_minor(installed)}",
        f"torch wheel built for ROCm {wheel_rocm} but ROCm {installed_rocm} is installed{note}",
        _TORCH_SOURCE,
    )


def _wanted_index(pairing: list[str], installed: Version | None) -> str | None:
    """The index of this torch release that fits the installed ROCm (same minor, else newest)."""
    if not pairing:
        return None
    if installed is not None:
        for tag in reversed(pairing):
            tag_v = parse_release(tag)
            if tag_v is not None and _minor(tag_v) == _minor(installed):
                return index_url(tag)
    return index_url(pairing[-1])
