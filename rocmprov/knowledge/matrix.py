"""What AMD and PyTorch support, as data: loading it, ROCm release lookups, the Verdict every
lookup returns, and the docs page rendered from it (matrix_markdown). The lookups by concern are
beside this module: os_kernel.py (OS releases, kernels), gpus.py (gfx targets, products, PCI
IDs), torch_wheels.py (torch <-> ROCm wheel pairings).

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

from packaging.version import InvalidVersion, Version

from rocmprov.model import Severity
from rocmprov.parse.datafile import load_yaml

OK = "ok"
WARNING = "warning"
CRITICAL = "critical"
UNKNOWN = "unknown"

MATRIX_URL = "https://rocm.docs.amd.com/en/latest/compatibility/compatibility-matrix.html"

_RELEASE_RE = re.compile(r"^\s*v?(\d+)\.(\d+)(?:\.(\d+))?")
_KERNEL_RE = re.compile(r"^\s*(\d+)\.(\d+)")


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


# --- loading ---------------------------------------------------------------------------------


def _load(name: str) -> dict[str, Any]:
    text = resources.files("rocmprov.data").joinpath(name).read_text(encoding="utf-8")
    data = load_yaml(text)
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


def _gfx(gfx: object) -> str:
    """ "gfx942:sramecc+:xnack-" -> "gfx942"; garbage -> ""."""
    text = _norm(gfx).split(":", 1)[0]
    return text if re.fullmatch(r"gfx[0-9a-f]{3,4}", text) else ""


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
    lines += [
        "",
        "### Sources of each row",
        "",
        "Every `source` field of the row (the row, its distributions, driver repository, "
        "RPM paths, torch index, transition guide), as the table records them; a field "
        "whose AMD text was not found is marked unverified in the table's note. The "
        "repository paths are also checked against AMD's layout rules "
        "(`tests/lab/amd_layout.yaml`) by tests/test_release_table.py.",
        "",
    ]
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
