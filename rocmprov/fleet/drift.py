"""Fleet drift: every host's inventory (inventory_versions) against a reference. Pure.

The reference is, in order: a golden host of the same audit (`--baseline HOST`), a saved
snapshot (`--baseline FILE`, written by `--save-baseline FILE`), or else the fleet itself: the
value of a field that MORE THAN HALF of the hosts reporting it share. A field with no such
majority (a 2-2 split, or three values on three hosts) has no reference, and every host that
reports it gets one `fleet.drift.<field>` WARNING saying the fleet is split and how (no value
is declared right; pick a golden host or a baseline file). A host that does not report a field
(its probe could not run) is never drift: unknown is not different. Each difference is one
WARNING finding `fleet.drift.<field>` on the host that differs: actual = its value, expected =
the reference, summary naming the reference (host, file or "N of M hosts").
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from rocmprov.model import AuditResult, Finding, Severity, count

BASELINE_SCHEMA = "rocmprov.baseline/1"
CHECK = "fleet.drift"

# (field, label, where in the inventory: ("host", key) | ("gpus", key) | ("count", "")).
# Per-GPU fields compare the set of distinct values on the host ("a, b" when its GPUs differ).
FIELDS: tuple[tuple[str, str, tuple[str, str]], ...] = (
    ("os", "OS", ("host", "os")),
    ("kernel", "kernel", ("host", "kernel")),
    ("rocm", "ROCm version", ("host", "rocm")),
    ("driver", "amdgpu driver", ("host", "driver")),
    ("bios_version", "BIOS version", ("host", "bios_version")),
    ("system", "system model", ("host", "system")),
    ("gpu_pci_ids", "GPU PCI ids", ("host", "gpu_pci_ids")),
    ("gpu_count", "AMD GPU count", ("count", "")),
    ("gpu_name", "GPU model", ("gpus", "name")),
    ("vbios", "VBIOS", ("gpus", "vbios")),
    ("pmfw", "PMFW (SMU) firmware", ("gpus", "pmfw")),
    ("psp_sos", "PSP SOS firmware", ("gpus", "psp_sos")),
    ("mec", "MEC firmware", ("gpus", "mec")),
)
LABELS = {name: label for name, label, _ in FIELDS}


class BaselineError(ValueError):
    """A baseline file that cannot be used: one line for the user (exit 64)."""


@dataclass(frozen=True)
class Baseline:
    """The reference values and where they came from ("host gpu01", "file golden.json")."""

    source: str
    fields: dict[str, str]
    # fields with no majority when the reference was taken: {field: {value: hosts}}; every
    # host that reports one is told the fleet is split (never silently left out)
    unsettled: dict[str, dict[str, int]] = field(default_factory=dict)


def flatten(inventory: Mapping[str, Any]) -> dict[str, str]:
    """An inventory object -> {field: value} for the fields it shows (absent = unknown)."""
    host = inventory.get("host") if isinstance(inventory.get("host"), dict) else {}
    gpus = [g for g in inventory.get("gpus") or () if isinstance(g, dict)]
    out: dict[str, str] = {}
    for name, _, (where, key) in FIELDS:
        if where == "host":
            value = host.get(key)
            text = ", ".join(map(str, value)) if isinstance(value, list) else value
        elif where == "count":
            text = str(len(gpus)) if inventory.get("host") else None
        else:
            seen = sorted({str(g[key]) for g in gpus if g.get(key)})
            text = ", ".join(seen) if seen else None
        if text not in (None, ""):
            out[name] = canonical(name, str(text))
    return out


# PSP SOS as the two tools print the same 32-bit number: amd-smi (amdsmi_get_fw_info in
# py-interface/amdsmi_interface.py, hex_format_fw) "00.2D.00.5D", rocm-smi (showFwInfo in
# rocm_smi.py, SOS in hex) "0x002d005d". One spelling (amd-smi's) so that a host read by either
# tool is not drift. PM/SMC (both "%02d" per byte) and MEC (decimal) are spelled alike already.
_HEX_WORD = re.compile(r"0x([0-9a-fA-F]{1,8})")


def canonical(name: str, value: str) -> str:
    """A value in the spelling drift compares (per-GPU fields: each of "a, b" on its own)."""
    if name != "psp_sos":
        return value
    parts = []
    for part in value.split(", "):
        if m := _HEX_WORD.fullmatch(part.strip()):
            digits = m.group(1).zfill(8).upper()
            part = ".".join(digits[i : i + 2] for i in range(0, 8, 2))
        parts.append(part.upper())
    return ", ".join(sorted(set(parts)))


def majority(flat: Mapping[str, Mapping[str, str]]) -> tuple[Baseline, dict[str, Counter]]:
    """(the majority reference, {field: value counts} of the fields with no majority)."""
    counts: dict[str, Counter] = {}
    for values in flat.values():
        for name, value in values.items():
            counts.setdefault(name, Counter())[value] += 1
    fields, split = {}, {}
    for name, c in counts.items():
        value, n = c.most_common(1)[0]
        if n * 2 > sum(c.values()):
            fields[name] = value
        else:
            split[name] = c
    return Baseline(f"the fleet majority ({count(len(flat), 'host')})", fields), split


def drift_findings(
    flat: Mapping[str, Mapping[str, str]], baseline: Baseline | None = None
) -> dict[str, tuple[Finding, ...]]:
    """{host: its drift findings}. Every host compared gets at least one finding: an OK
    `fleet.drift` when it matches the reference in every field both show."""
    if baseline is None:
        reference, split = majority(flat)
    else:
        reference = baseline
        split = {k: Counter(v) for k, v in baseline.unsettled.items()}
    out: dict[str, tuple[Finding, ...]] = {}
    for host, values in flat.items():
        found = []
        for name, value in values.items():
            label = LABELS.get(name, name)
            if name in split:
                found.append(_split(name, label, value, split[name]))
                continue
            expected = reference.fields.get(name)
            if expected is None or expected == value:
                continue
            found.append(
                Finding(
                    f"{CHECK}.{name}",
                    Severity.WARNING,
                    f"{label} differs from {reference.source}: {value} here, {expected} there",
                    actual=value,
                    expected=expected,
                    fix=f"bring the {label} to {expected} (as on {reference.source}), or save a "
                    "new baseline if this value is the new standard",
                    subject=name,
                )
            )
        if not found:
            compared = sum(1 for n in values if n in reference.fields)
            found.append(
                Finding(
                    CHECK,
                    Severity.OK,
                    f"matches {reference.source} in {compared} compared fields",
                    actual=f"{compared} fields equal",
                    expected="no difference",
                )
            )
        out[host] = tuple(found)
    return out


def _split(name: str, label: str, value: str, counts: Counter) -> Finding:
    spread = "; ".join(f"{v} on {n}" for v, n in sorted(counts.items(), key=lambda x: -x[1]))
    return Finding(
        f"{CHECK}.{name}",
        Severity.WARNING,
        f"{label}: no majority across the fleet ({spread}); this host has {value}",
        actual=value,
        expected="one value on most hosts",
        fix="choose the reference: --baseline GOLDEN_HOST or --baseline FILE",
        subject=name,
    )


MAX_VALUE = 1024  # a field's value in a baseline file (the longest real ones are ~200)


def baseline_document(baseline: Baseline) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "schema": BASELINE_SCHEMA,
        "source": baseline.source,
        "fields": baseline.fields,
    }
    if baseline.unsettled:
        doc["unsettled"] = baseline.unsettled
    return doc


def dump_baseline(baseline: Baseline) -> str:
    return json.dumps(baseline_document(baseline), indent=2, sort_keys=True) + "\n"


def load_baseline(text: str, where: str) -> Baseline:
    """A saved baseline (`--save-baseline`) -> Baseline; anything else is a BaselineError."""
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise BaselineError(f"baseline {where}: not JSON ({exc.msg}, line {exc.lineno})") from None
    except (ValueError, RecursionError):  # e.g. arrays nested deeper than the parser goes
        raise BaselineError(f"baseline {where}: not a {BASELINE_SCHEMA} document") from None
    if not isinstance(doc, dict) or doc.get("schema") != BASELINE_SCHEMA:
        raise BaselineError(f"baseline {where}: not a {BASELINE_SCHEMA} document")
    fields = doc.get("fields")
    if not isinstance(fields, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in fields.items()
    ):
        raise BaselineError(f"baseline {where}: 'fields' must map names to strings")
    unsettled = doc.get("unsettled") or {}
    if not isinstance(unsettled, dict) or not all(
        isinstance(k, str)
        and isinstance(c, dict)
        and all(isinstance(v, str) and type(n) is int and 0 < n < 10**9 for v, n in c.items())
        for k, c in unsettled.items()
    ):
        raise BaselineError(f"baseline {where}: 'unsettled' must map names to value counts")
    unknown = sorted((set(fields) | set(unsettled)) - set(LABELS))
    if unknown:
        raise BaselineError(f"baseline {where}: unknown fields {', '.join(unknown[:5])}")
    values = [*fields.values(), *(v for c in unsettled.values() for v in c)]
    if any(len(v) > MAX_VALUE for v in values) or sum(len(c) for c in unsettled.values()) > 1000:
        raise BaselineError(
            f"baseline {where}: a value longer than {MAX_VALUE} characters (or too many): "
            "not a saved baseline"
        )
    return Baseline(
        f"baseline file {where}",
        {k: canonical(k, v) for k, v in fields.items()},
        {k: dict(c) for k, c in unsettled.items() if k not in fields},
    )


def drift_columns(findings: Iterable[Finding]) -> list[str]:
    """The drift fields that differ on at least one host, in FIELDS order."""
    seen = {f.check.removeprefix(CHECK + ".") for f in findings if f.check.startswith(CHECK + ".")}
    return [name for name, _, _ in FIELDS if name in seen]


def host_baseline(result: AuditResult, name: str) -> Baseline | None:
    """The reference of a golden host of this audit; None when no host has that name."""
    for h in result.hosts:
        if h.host == name:
            return Baseline(f"baseline host {name}", flatten(h.inventory))
    return None


def with_drift(result: AuditResult, baseline: Baseline | None) -> AuditResult:
    """The result with each audited host's drift findings added (hosts with no inventory, e.g.
    unreachable ones, are left out of the comparison)."""
    flat = {h.host: flatten(h.inventory) for h in result.hosts if h.inventory}
    if baseline is None and len(flat) < 2:
        return result
    found = drift_findings(flat, baseline)
    hosts = tuple(
        replace(h, findings=h.findings + found[h.host]) if h.host in found else h
        for h in result.hosts
    )
    return AuditResult(hosts)
