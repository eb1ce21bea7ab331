"""The human checklist data for hardware/BIOS findings (rocmprov/data/bios.yaml).

Checks the shape `rocmprov repair` relies on: every hardware finding id has an entry, every
BIOS row and every entry names an https source, and the prove commands only use the
placeholders rocmprov fills in ({bdf}, {upstream}).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "rocmprov" / "data" / "bios.yaml"
DOC = ROOT / "docs" / "bios.md"

FINDINGS = ("pcie.bar", "pcie.link.width", "pcie.link.speed", "kernel.iommu", "boot.secureboot")
PLACEHOLDERS = {"bdf", "upstream"}
BRACED = re.compile(r"\{([^{}]*)\}")


@pytest.fixture(scope="module")
def data() -> dict[str, Any]:
    loaded = yaml.safe_load(DATA.read_text(encoding="utf-8"))
    assert isinstance(loaded, dict)
    return loaded


def _https(url: Any) -> bool:
    return isinstance(url, str) and url.startswith("https://") and " " not in url and len(url) > 12


def test_schema_and_keys(data: dict[str, Any]) -> None:
    assert data["schema"] == "rocmprov.bios/1"
    for key in (*FINDINGS, "instinct_recommended"):
        assert key in data, f"missing entry {key}"


@pytest.mark.parametrize("fid", FINDINGS)
def test_finding_shape(data: dict[str, Any], fid: str) -> None:
    entry = data[fid]
    for field in ("title", "why"):
        assert isinstance(entry[field], str) and entry[field].strip(), f"{fid}.{field}"
    assert entry["steps"] and all(isinstance(s, str) and s.strip() for s in entry["steps"])
    assert entry["sources"] and all(_https(u) for u in entry["sources"]), f"{fid}.sources"


@pytest.mark.parametrize("fid", FINDINGS)
def test_bios_rows_are_sourced(data: dict[str, Any], fid: str) -> None:
    rows = data[fid]["bios"]
    assert rows, f"{fid} has no BIOS rows"
    for row in rows:
        for field in ("vendor", "menu", "value"):
            assert isinstance(row.get(field), str) and row[field].strip(), f"{fid}: {row}"
        assert _https(row.get("source")), (
            f"{fid}: {row['vendor']} {row['menu']} has no https source"
        )
        # a row's source is also listed with the entry's sources
        assert row["source"] in data[fid]["sources"], f"{fid}: {row['source']} not in sources"
        assert row.get("confidence") in (None, "community", "later-version")


@pytest.mark.parametrize("fid", FINDINGS)
def test_facts_are_sourced(data: dict[str, Any], fid: str) -> None:
    for fact in data[fid].get("facts", []):
        assert fact["text"].strip()
        assert _https(fact["source"]), f"{fid}: fact without https source: {fact['text']}"
        assert fact["source"] in data[fid]["sources"], f"{fid}: {fact['source']} not in sources"


@pytest.mark.parametrize("fid", FINDINGS)
def test_prove_commands(data: dict[str, Any], fid: str) -> None:
    prove = data[fid]["prove"]
    assert prove, f"{fid} has no prove command"
    for cmd in prove:
        assert isinstance(cmd, str) and cmd.strip()
        names = set(BRACED.findall(cmd))
        assert names <= PLACEHOLDERS, (
            f"{fid}: unknown placeholder(s) {names - PLACEHOLDERS} in {cmd!r}"
        )
        # no stray braces outside the placeholders (rocmprov fills them with str.format)
        assert "{" not in BRACED.sub("", cmd) and "}" not in BRACED.sub("", cmd), cmd
        cmd.format(bdf="0000:c3:00.0", upstream="0000:c1:00.0")


def test_link_checks_read_the_slot_link(data: dict[str, Any]) -> None:
    # the GPU endpoint's LnkSta is the on-card switch link; the slot link is on {upstream}
    for fid in ("pcie.link.width", "pcie.link.speed"):
        assert any("{upstream}" in c and "LnkSta" in c for c in data[fid]["prove"]), fid


def test_bar_fix_enables_above_4g(data: dict[str, Any]) -> None:
    # the seed article had it backwards: Above 4G Decoding must be ENABLED
    rows = data["pcie.bar"]["bios"]
    above = [r for r in rows if "Above 4G" in r["menu"]]
    assert above and all(r["value"].startswith("Enabled") for r in above)
    assert not any(
        "disable" in s.lower() and "above 4g" in s.lower() for s in data["pcie.bar"]["steps"]
    )


def test_instinct_recommended(data: dict[str, Any]) -> None:
    rec = data["instinct_recommended"]
    assert rec["sources"] and all(_https(u) for u in rec["sources"])
    gpus = [f["gpu"] for f in rec["families"]]
    assert any(g.startswith("MI100") for g in gpus) and any(g.startswith("MI300X") for g in gpus)
    for fam in rec["families"]:
        assert _https(fam["source"]) and fam["source"] in rec["sources"], fam["gpu"]
        assert fam["settings"], fam["gpu"]
        for s in fam["settings"]:
            for field in ("menu", "setting", "value"):
                assert isinstance(s.get(field), str) and s[field].strip(), (fam["gpu"], s)
        above = [s for s in fam["settings"] if s["setting"].lower() == "above 4g decoding"]
        assert above and above[0]["value"] == "Enabled", fam["gpu"]


def test_doc_covers_every_entry(data: dict[str, Any]) -> None:
    text = DOC.read_text(encoding="utf-8")
    for fid in (*FINDINGS, "instinct_recommended"):
        assert f"`{fid}`" in text, f"docs/bios.md does not mention {fid}"
    for fid in FINDINGS:
        for row in data[fid]["bios"]:
            assert row["source"] in text, f"docs/bios.md lacks source {row['source']}"
