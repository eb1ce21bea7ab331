"""`explain` never cries wolf: real healthy outputs (tests/fixtures/healthy/) match no real cause.

Each file is a verbatim output of a working system (rocminfo, amd-smi, rocm-smi, a torch run, an
LLM server that used the GPU, a package install, a DKMS build, an amdgpu boot in dmesg, a PyTorch
collect_env), with its public source. Neither the matcher nor the similarity tier may name a
real (non-harmless) cause on any of them.
"""

from __future__ import annotations

from pathlib import Path

import kbsplit
import pytest
from fixtureload import load

from rocmprov.kb import load_table, match
from rocmprov.kb.lineends import normalise
from rocmprov.kb.similar import similar, suggest

HEALTHY = Path(__file__).resolve().parent / "fixtures" / "healthy"
FILES = sorted(p.name for p in HEALTHY.glob("*.txt"))
TABLE = load_table()

# Healthy files on which a real entry fires today: file name -> the entry's id. The lead fixes
# the entries and empties this dict; an entry listed here that no longer fires fails the test.
KNOWN_WOLVES: dict[str, str] = {}


def body(name: str) -> str:
    return load(HEALTHY / name).text  # the shared fixture loader: header, '---', raw text


def real_matches(text: str) -> list[str]:
    return [m.id for m in match(text, table=TABLE) if not m.harmless]


def real_similar(text: str) -> list[str]:
    """The tier over the whole text, and as explain runs it (beside harmless matches, over the
    lines they do not cover)."""
    text = normalise(text)
    near = similar(text, TABLE) + suggest(text, match(text, table=TABLE), TABLE)
    return [s.id for s in near if not s.harmless]


def test_the_corpus_is_large_enough() -> None:
    assert len(FILES) >= 30, FILES


def test_known_wolves_name_files_of_the_corpus() -> None:
    assert set(KNOWN_WOLVES) <= set(FILES), set(KNOWN_WOLVES) - set(FILES)
    ids = {e.id for e in TABLE.entries}
    assert set(KNOWN_WOLVES.values()) <= ids, set(KNOWN_WOLVES.values()) - ids


@pytest.mark.parametrize("name", FILES)
def test_file_starts_with_a_source_line(name: str) -> None:
    first = (HEALTHY / name).read_text(encoding="utf-8").split("\n", 1)[0]
    assert first.startswith("source: https://"), (name, first)
    head = load(HEALTHY / name).header
    assert head.get("what"), name
    assert not kbsplit.is_report(head["source"]) or kbsplit.side(head["source"]) == "table", name
    assert body(name).strip(), name


@pytest.mark.parametrize("name", FILES)
def test_healthy_output_matches_no_real_cause(name: str) -> None:
    found = real_matches(body(name))
    wolf = KNOWN_WOLVES.get(name)
    if wolf is None:
        assert found == [], (name, found)
    else:  # tolerated until the entry is fixed, and only that entry
        assert wolf in found, f"{name}: {wolf} no longer fires; take it out of KNOWN_WOLVES"
        assert set(found) | set(real_similar(body(name))) <= {wolf}, (name, found)


@pytest.mark.parametrize("name", FILES)
def test_healthy_output_is_similar_to_no_real_cause(name: str) -> None:
    found = real_similar(body(name))
    wolf = KNOWN_WOLVES.get(name)
    assert set(found) <= ({wolf} if wolf else set()), (name, found)
