"""What AMD and PyTorch support, as data, and pure lookups over it.

The facts live in two package data files, each entry with its source URL:
``rocmprov/data/support_matrix.yaml`` (ROCm release -> OSes, kernels, GPU targets; targets ->
products and lifecycle; PCI IDs; HIP build numbers) and ``rocmprov/data/torch_rocm.yaml``
(torch release -> the pytorch.org ROCm wheel indexes it was published for).

Every lookup returns a :class:`Verdict` (or plain data) and never raises on bad input: garbage in
gives an ``unknown`` verdict. The only I/O is reading the package data, once.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

import yaml
from packaging.version import InvalidVersion, Version

from rocmprov.model import Severity

OK = "ok"
WARNING = "warning"
CRITICAL = "critical"
UNKNOWN = "unknown"

MATRIX_URL = "https://rocm.docs.amd.com/en/latest/compatibility/compatibility-matrix.html"

_RELEASE_RE = re.compile(r"^\s*v?(\d+)\.(\d+)(?:\.(\d+))?")
_KERNEL_RE = re.compile(r"^\s*(\d+)\.(\d+)")
_TORCH_RE = re.compile(r"^\s*(\d+\.\d+(?:\.\d+)?)([A-Za-z0-9.]*?)(?:\+([A-Za-z0-9._-]+))?\s*$")
_ROCM_TAG_RE = re.compile(r"^rocm(\d+(?:\.\d+){1,2})")
_CUDA_TAG_RE = re.compile(r"^cu(\d+)$")
_HIP_RE = re.compile(r"^\s*(\d+)\.(\d+)\.(\d+)")


@dataclass(frozen=True)
class Verdict:
    """One judgement against the support data: status is ok, warning, critical or unknown."""

    status: str
    actual: str = ""
    expected: str = ""
    reason: str = ""
    source: str = ""

    @property
    def severity(self) -> Severity:
        return Severity(self.status)


@dataclass(frozen=True)
class TorchBuild:
    """What ``torch.__version__`` says: base version and the build's accelerator.

    kind is "rocm", "cuda", "cpu", "none" (no local tag) or "other"; accel is the ROCm index tag
    ("6.2.4") or CUDA version ("12.1") where the tag gives one.
    """

    base: str
    kind: str
    accel: str | None = None


# --- loading ---------------------------------------------------------------------------------


def _load(name: str) -> dict[str, Any]:
    text = resources.files("rocmprov.data").joinpath(name).read_text(encoding="utf-8")
    data = yaml.safe_load(text)
    return data if isinstance(data, dict) else {}


@cache
def load_matrix() -> dict[str, Any]:
    """The ROCm support matrix (support_matrix.yaml), loaded once. Treat it as read-only."""
    return _load("support_matrix.yaml")


@cache
def load_torch() -> dict[str, Any]:
    """The torch <-> ROCm wheel table (torch_rocm.yaml), loaded once. Treat it as read-only."""
    return _load("torch_rocm.yaml")


# --- small parsers ---------------------------------------------------------------------------


def parse_release(rocm: object) -> Version | None:
    """ "6.4.1", "6.4", "6.4.1-83", "v7.0" -> Version (major.minor[.patch]); anything else None."""
    if not isinstance(rocm, str):
        return None
    m = _RELEASE_RE.match(rocm)
    if not m:
        return None
    try:
        return Version(".".join(g for g in m.groups() if g is not None))
    except InvalidVersion:  # pragma: no cover - the regex only lets digits through
        return None


def _minor(v: Version) -> str:
    return f"{v.major}.{v.minor}"


def _kernel_series(kernel_release: object) -> str | None:
    if not isinstance(kernel_release, str):
        return None
    m = _KERNEL_RE.match(kernel_release)
    return f"{int(m.group(1))}.{int(m.group(2))}" if m else None


def _norm(text: object) -> str:
    return text.strip().strip('"').lower() if isinstance(text, str) else ""


def _version_matches(entry_version: str, host_version: str) -> bool:
    """An entry "9" covers 9.x; "22.04" covers "22.04" and "22.04.4"; "15-SP5" is exact."""
    entry = _norm(entry_version)
    host = _norm(host_version)
    if not entry or not host:
        return False
    if entry == host:
        return True
    entry_parts = entry.split(".")
    host_parts = host.split(".")
    return len(entry_parts) < len(host_parts) and host_parts[: len(entry_parts)] == entry_parts


def _os_label(entry: dict[str, Any]) -> str:
    points = entry.get("points")
    label = f"{entry.get('id')} {entry.get('version')}"
    if points:
        label += f" ({', '.join(points)})"
    return label


def supported_releases() -> list[str]:
    """ROCm releases (major.minor) the data covers, oldest first."""
    releases = [str(r.get("rocm")) for r in load_matrix().get("releases", [])]
    return sorted(releases, key=lambda r: parse_release(r) or Version("0"))


def _release_entry(rocm: object) -> tuple[Version | None, dict[str, Any] | None]:
    v = parse_release(rocm)
    if v is None:
        return None, None
    for entry in load_matrix().get("releases", []):
        if str(entry.get("rocm")) == _minor(v):
            return v, entry
    return v, None


def _unknown_release(rocm: object, v: Version | None, what: str) -> Verdict:
    if v is None:
        return Verdict(
            UNKNOWN, str(rocm), "a ROCm version like 6.4.1", "cannot parse the ROCm version"
        )
    return Verdict(
        UNKNOWN,
        str(rocm),
        "one of " + ", ".join(supported_releases()),
        f"ROCm {_minor(v)} is not in rocmprov's support data; cannot judge the {what}",
    )


# --- OS and kernel ---------------------------------------------------------------------------


def _os_entry(release: dict[str, Any], os_id: object, version_id: object) -> dict[str, Any] | None:
    for entry in release.get("os", []):
        if _norm(entry.get("id")) == _norm(os_id) and _version_matches(
            str(entry.get("version")), str(version_id)
        ):
            return entry
    return None


def os_verdict(rocm: str, os_id: str, version_id: str, *, gfx: str | None = None) -> Verdict:
    """Is this OS (os-release ID and VERSION_ID) supported by this ROCm release?

    ok when AMD lists it; warning when it is not listed (it may still work, AMD does not
    validate it), listed only from a later point release, or listed only for other GPUs (pass
    ``gfx`` to check that; without it a GPU restriction is a warning); unknown when the release
    is not in the data.
    """
    v, release = _release_entry(rocm)
    if release is None or v is None:
        return _unknown_release(rocm, v, "operating system")
    source = str(release.get("source", ""))
    listed = [_os_label(e) for e in release.get("os", [])]
    actual = f"{os_id} {version_id}"
    if not listed:
        return Verdict(
            UNKNOWN,
            actual,
            "",
            f"no verified OS list for ROCm {release['rocm']}: {release.get('why', '')}".strip(),
            source,
        )
    expected = "; ".join(listed)
    entry = _os_entry(release, os_id, version_id)
    if entry is None:
        return Verdict(
            WARNING,
            actual,
            expected,
            f"{actual} is not in AMD's supported OS list for ROCm {release['rocm']} "
            f"(as of {release.get('as_of')})",
            source,
        )
    source = str(entry.get("source", source))
    since = parse_release(str(entry.get("since", "")))
    if since is not None and v < since:
        return Verdict(
            WARNING,
            actual,
            f"ROCm >= {entry['since']} for {_os_label(entry)}",
            f"AMD lists {_os_label(entry)} only from ROCm {entry['since']}",
            source,
        )
    only = entry.get("only")
    if only:
        products = ", ".join(only.get("products", []))
        note = f" ({only['note']})" if only.get("note") else ""
        want = [str(g).lower() for g in only.get("gfx", [])]
        gfx_norm = _gfx(gfx)
        if not gfx_norm:
            return Verdict(
                WARNING,
                actual,
                f"{_os_label(entry)} on {products}",
                f"ROCm {release['rocm']} supports {_os_label(entry)} only on {products}{note}",
                source,
            )
        if gfx_norm not in want:
            return Verdict(
                WARNING,
                f"{actual} with {gfx_norm}",
                f"{_os_label(entry)} on {products}",
                f"ROCm {release['rocm']} supports {_os_label(entry)} only on {products}{note}",
                source,
            )
        return Verdict(
            OK,
            f"{actual} with {gfx_norm}",
            f"{_os_label(entry)} on {products}",
            f"supported by ROCm {release['rocm']} on {products}{note}",
            source,
        )
    return Verdict(OK, actual, _os_label(entry), f"supported by ROCm {release['rocm']}", source)


def kernel_verdict(rocm: str, os_id: str, version_id: str, kernel_release: str) -> Verdict:
    """Is the running kernel one of the series AMD lists for this OS under this ROCm release?

    ok when its major.minor is listed (GA or HWE), warning when it is not, unknown when the
    release, the OS or the kernel list is not in the data or the kernel string does not parse.
    """
    v, release = _release_entry(rocm)
    if release is None or v is None:
        return _unknown_release(rocm, v, "kernel")
    actual = str(kernel_release)
    series = _kernel_series(kernel_release)
    if series is None:
        return Verdict(UNKNOWN, actual, "", "cannot parse the kernel release", "")
    entry = _os_entry(release, os_id, version_id)
    if entry is None:
        return Verdict(
            UNKNOWN,
            actual,
            "",
            f"{os_id} {version_id} is not a supported OS for ROCm {release['rocm']}, "
            "so AMD lists no kernel for it",
            str(release.get("source", "")),
        )
    kernels = [str(k) for k in entry.get("kernels", [])]
    source = str(entry.get("kernels_source", entry.get("source", "")))
    if not kernels:
        return Verdict(
            UNKNOWN,
            actual,
            "",
            f"rocmprov has no kernel list for {_os_label(entry)} under ROCm {release['rocm']}",
            str(entry.get("source", "")),
        )
    expected = ", ".join(kernels)
    if series in kernels:
        return Verdict(
            OK, actual, expected, f"kernel {series} is listed for {_os_label(entry)}", source
        )
    return Verdict(
        WARNING,
        actual,
        expected,
        f"kernel {series} is not among the kernels AMD lists for {_os_label(entry)} "
        f"under ROCm {release['rocm']}",
        source,
    )


# --- GPUs ------------------------------------------------------------------------------------


def _gfx(gfx: object) -> str:
    """ "gfx942:sramecc+:xnack-" -> "gfx942"; garbage -> ""."""
    text = _norm(gfx).split(":", 1)[0]
    return text if re.fullmatch(r"gfx[0-9a-f]{3,4}", text) else ""


def _gpu_entry(gfx: str) -> dict[str, Any] | None:
    for entry in load_matrix().get("gpus", []):
        if entry.get("gfx") == gfx:
            return entry
    return None


def products_for_gfx(gfx: str) -> tuple[str, ...]:
    """Product names AMD lists for a target, e.g. gfx90a -> MI250X, MI250, MI210."""
    entry = _gpu_entry(_gfx(gfx))
    return tuple(entry.get("products", [])) if entry else ()


def _lifecycle_stage(entry: dict[str, Any], v: Version | None) -> dict[str, Any] | None:
    stages = entry.get("lifecycle") or []
    if v is None:
        return stages[-1] if stages else None
    current = None
    for stage in stages:
        start = parse_release(str(stage.get("from", "")))
        if start is not None and start <= v:
            current = stage
    return current


_STAGE_STATUS = {"maintenance": WARNING, "deprecated": WARNING, "unsupported": CRITICAL}


def gpu_verdict(gfx: str, rocm: str | None) -> Verdict:
    """Is this GPU target supported, and by this ROCm release (None: by any release we know)?

    ok: listed; warning: maintenance or deprecated; critical: not enabled, or ROCm older than
    the first release that lists it; unknown: target or release not in the data.
    """
    target = _gfx(gfx)
    if not target:
        return Verdict(
            UNKNOWN, str(gfx), "an LLVM target like gfx942", "cannot parse the GPU target"
        )
    entry = _gpu_entry(target)
    names = ", ".join(products_for_gfx(target))
    label = f"{target} ({names})" if names else target
    if entry is None:
        return Verdict(
            UNKNOWN, target, "", f"{target} is not in rocmprov's GPU data; cannot judge it", ""
        )
    min_rocm = entry.get("min_rocm")
    min_text = f"ROCm >= {min_rocm}" if min_rocm else ""
    source = str(entry.get("source", ""))
    if rocm is None:
        stage = _lifecycle_stage(entry, None)
        if stage:
            return Verdict(
                _STAGE_STATUS.get(stage["status"], WARNING),
                label,
                min_text,
                f"{stage['status']} from ROCm {stage['from']}: {stage.get('why', '')}".strip(),
                str(stage.get("source", source)),
            )
        return Verdict(OK, label, min_text, f"AMD supports {label} from ROCm {min_rocm}", source)
    v = parse_release(rocm)
    if v is None:
        return Verdict(UNKNOWN, label, min_text, f"cannot parse the ROCm version {rocm!r}", source)
    min_v = parse_release(str(min_rocm)) if min_rocm else None
    if min_v is not None and v < min_v:
        if not entry.get("min_rocm_exact"):
            return Verdict(
                UNKNOWN,
                f"{label} on ROCm {rocm}",
                min_text,
                f"rocmprov's data for {target} starts at ROCm {min_rocm} (AMD's matrix begins "
                "there); support in older releases is not recorded",
                source,
            )
        return Verdict(
            CRITICAL,
            f"{label} on ROCm {rocm}",
            min_text,
            f"ROCm {rocm} is older than the first release that supports {target}: {min_rocm}",
            source,
        )
    stage = _lifecycle_stage(entry, v)
    if stage:
        return Verdict(
            _STAGE_STATUS.get(stage["status"], WARNING),
            f"{label} on ROCm {rocm}",
            "a target AMD fully supports",
            f"{target} is {stage['status']} from ROCm {stage['from']}: {stage.get('why', '')}",
            str(stage.get("source", source)),
        )
    _, release = _release_entry(rocm)
    if release is None or not release.get("gpus"):
        return _unknown_release(rocm, v, "GPU support")
    rel_source = str(release.get("source", source))
    listed = [str(g) for g in release.get("gpus", [])]
    if target in listed:
        return Verdict(
            OK,
            f"{label} on ROCm {rocm}",
            ", ".join(listed),
            f"{target} is listed for ROCm {release['rocm']} (as of {release.get('as_of')})",
            rel_source,
        )
    return Verdict(
        CRITICAL,
        f"{label} on ROCm {rocm}",
        ", ".join(listed),
        f"{target} is not among the targets AMD lists for ROCm {release['rocm']}",
        rel_source,
    )


def _pci_entry(device_id: object) -> dict[str, Any] | None:
    if not isinstance(device_id, str):
        return None
    text = device_id.strip().lower()
    if ":" in text:  # "1002:74a1" (lspci -n style)
        vendor, _, text = text.partition(":")
        if vendor.removeprefix("0x") != "1002":
            return None
    text = text.removeprefix("0x")
    if not re.fullmatch(r"[0-9a-f]{4}", text):
        return None
    for entry in load_matrix().get("pci_ids", []):
        if str(entry.get("id", "")).lower() == f"0x{text}":
            return entry
    return None


def gfx_for_pci(device_id: str) -> str | None:
    """AMD PCI device ID ("0x74a1", "74a1" or "1002:74a1") -> LLVM target, None if unknown."""
    entry = _pci_entry(device_id)
    return str(entry["gfx"]) if entry and entry.get("gfx") else None


def pci_name(device_id: str) -> str | None:
    """AMD PCI device ID -> its pci.ids name (e.g. "Aqua Vanjaram [Instinct MI300X]")."""
    entry = _pci_entry(device_id)
    return str(entry["name"]) if entry and entry.get("name") else None


# --- torch -----------------------------------------------------------------------------------


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


# --- documentation ---------------------------------------------------------------------------


def _releases_markdown() -> list[str]:
    """The release table (playbooks/data/rocm_releases.yml): what `rocmprov apply` installs."""
    from rocmprov.knowledge import releases

    table = releases.load_table()
    lines = [
        "## ROCm releases rocmprov installs (the release table)",
        "",
        "From `playbooks/data/rocm_releases.yml` (checked "
        f"{table.get('checked', '?')}): the playbooks, the audit and the torch pairing read it. "
        f"Default release: **{table.get('default')}** (the newest production release with a "
        "published torch wheel). `apt suites` are the distributions AMD publishes the release "
        "for (keys as `<os-release ID>-<VERSION_ID>`). Validate with `python -m rocmprov.data."
        "check` (`--online` fetches each Release file and key).",
        "",
        "| ROCm | stream | status | date | apt suites | RHEL / SLES | packages | torch (index) "
        "| confidence | source |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    rows = {str(r.get("version")): r for r in table.get("releases") or []}
    for rel in releases.all_releases():
        raw = rows.get(rel.version, {})
        suites = ", ".join(sorted((raw.get("apt") or {}).get("suites") or {})) or "none"
        rpm = ", ".join(sorted((raw.get("rpm") or {}).get("rocm") or {}))
        sles = ", ".join(sorted((raw.get("sles") or {}).get("rocm") or {}))
        other = "; ".join(x for x in (f"el {rpm}" if rpm else "", f"sles {sles}" if sles else "")
                          if x) or "none"  # fmt: skip
        torch = (
            f"{', '.join(rel.torch_versions)} ({rel.torch_index})" if rel.torch_index else "none"
        )
        lines.append(
            f"| {rel.version} | {rel.stream} | {rel.status} | {raw.get('date') or ''} | {suites} "
            f"| {other} | {', '.join(rel.packages) or 'none'} | {torch} "
            f"| {raw.get('confidence', '')} | {rel.source} |"
        )
    lines += ["", "### Sources of each row", "",
              "Every `source` field of the row (the row, its distributions, driver repository, "
              "RPM paths, torch index, transition guide), as the table records them; a field "
              "whose AMD text was not found is marked unverified in the table's note. The "
              "repository paths are also checked against AMD's layout rules "
              "(`tests/lab/amd_layout.yaml`) by tests/test_release_table.py.", ""]
    for version, raw in rows.items():
        found = _row_sources(raw)
        lines.append(f"- **{version}**: " + ("; ".join(f"{k}: {v}" for k, v in found) or "none"))
    return [*lines, ""]


def _row_sources(node: object, where: str = "") -> list[tuple[str, str]]:
    """(field, URL) for every *source field under a release row, in file order."""
    out: list[tuple[str, str]] = []
    if isinstance(node, dict):
        for key, value in node.items():
            name = f"{where}.{key}" if where else str(key)
            if str(key).endswith("source"):
                for url in value if isinstance(value, list) else [value]:
                    if isinstance(url, str) and url and (name, url) not in out:
                        out.append((name, url))
            elif isinstance(value, dict):
                out += [s for s in _row_sources(value, name) if s not in out]
    return out


def matrix_markdown() -> str:
    """docs/support-matrix.md, rendered from the two data files (kept in sync by a test)."""
    m = load_matrix()
    lines = [
        "# Support matrix",
        "",
        "Generated by `rocmprov.knowledge.matrix.matrix_markdown()` from "
        "`rocmprov/data/support_matrix.yaml`"
        " and `rocmprov/data/torch_rocm.yaml`; edit the YAML, not this file. Each row names its"
        " source; `as of` is the point release whose column of AMD's matrix was read.",
        "",
    ]
    lines += _releases_markdown()
    lines += [
        "## Operating systems and kernels per ROCm release",
        "",
        "| ROCm | as of | OS (os-release ID VERSION_ID) | kernels | only on | source |",
        "|---|---|---|---|---|---|",
    ]
    for rel in m.get("releases", []):
        if not rel.get("os"):
            lines.append(
                f"| {rel['rocm']} | {rel.get('as_of', '')} | unverified: {rel.get('why', '')} "
                f"| | | {rel.get('source', '')} |"
            )
        for e in rel.get("os", []):
            since = f" (from {e['since']})" if e.get("since") else ""
            only = ", ".join(e.get("only", {}).get("products", []))
            lines.append(
                f"| {rel['rocm']} | {rel.get('as_of', '')} | {_os_label(e)}{since} "
                f"| {', '.join(e.get('kernels', [])) or 'not in data'} | {only} "
                f"| {e.get('source', '')} |"
            )
    lines += [
        "",
        "## GPU targets per ROCm release",
        "",
        "| ROCm | targets | source |",
        "|---|---|---|",
    ]
    for rel in m.get("releases", []):
        gpus = ", ".join(rel.get("gpus", [])) or "unverified"
        lines.append(f"| {rel['rocm']} | {gpus} | {rel.get('source', '')} |")
    lines += [
        "",
        "## GPU targets",
        "",
        "| target | arch | products | first ROCm | lifecycle | source |",
        "|---|---|---|---|---|---|",
    ]
    for g in m.get("gpus", []):
        first = g.get("min_rocm", "")
        if first and not g.get("min_rocm_exact"):
            first = f"{first} or earlier"
        stages = "; ".join(f"{s['status']} from {s['from']}" for s in g.get("lifecycle", []))
        lines.append(
            f"| {g['gfx']} | {g.get('arch', '')} | {', '.join(g.get('products', []))} | {first} "
            f"| {stages} | {g.get('source', '')} |"
        )
    lines += [
        "",
        "## PCI device IDs (vendor 0x1002)",
        "",
        "| ID | pci.ids name | target | source |",
    ]
    lines.append("|---|---|---|---|")
    for p in m.get("pci_ids", []):
        conf = " (secondary)" if p.get("confidence") == "secondary" else ""
        lines.append(f"| {p['id']} | {p['name']} | {p['gfx']} | {p['source']}{conf} |")
    t = load_torch()
    lines += [
        "",
        "## PyTorch wheels per ROCm index",
        "",
        f"Index URL: `{t.get('index_url')}`. Wheel versions carry the tag as a local version "
        "(`2.4.1+rocm6.1`).",
        "",
        "| torch | ROCm indexes | source |",
        "|---|---|---|",
    ]
    for r in t.get("releases", []):
        conf = " (secondary)" if r.get("confidence") == "secondary" else ""
        lines.append(f"| {r['torch']} | {', '.join(r['rocm'])} | {r['source']}{conf} |")
    return "\n".join(lines) + "\n"
