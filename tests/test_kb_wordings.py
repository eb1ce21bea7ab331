"""Several messages per cause (issue 28, item 2): each other real wording an entry was widened
for (tests/fixtures/kb-wordings/<entry>.<slug>.txt) is answered by that entry first, and comes
from a report on the table side of the held-out split."""

from __future__ import annotations

from pathlib import Path

import pytest
from kbsplit import side

from rocmprov.kb import load_table, match

ROOT = Path(__file__).resolve().parent.parent
WORDINGS = sorted((ROOT / "tests" / "fixtures" / "kb-wordings").glob("*.txt"))
TABLE = load_table()


def _read(path: Path) -> tuple[list[str], str, str]:
    """(sources, condition, text). `condition:`, optional: the start of the `when` of the
    entry's condition whose fix this wording must get (an entry's first answer alone does not
    show that one condition, placed first, took over its siblings' cases)."""
    head, _, text = path.read_text(encoding="utf-8").partition("\n---\n")
    fields = [line.split(":", 1) for line in head.splitlines() if ":" in line]
    sources = [value.strip() for key, value in fields if key == "source"]
    condition = next((value.strip() for key, value in fields if key == "condition"), "")
    return sources, condition, text


def test_there_are_wordings_and_each_names_an_entry() -> None:
    assert len(WORDINGS) >= 2
    for path in WORDINGS:
        assert path.name.split(".txt")[0].rsplit(".", 1)[0] in TABLE.by_id, path.name


@pytest.mark.parametrize("path", WORDINGS, ids=[p.name for p in WORDINGS])
def test_the_entry_answers_its_other_wording_first(path: Path) -> None:
    entry_id = path.name.split(".txt")[0].rsplit(".", 1)[0]
    sources, condition, text = _read(path)
    assert sources and all(side(url) == "table" for url in sources), sources
    found = match(text)
    assert found, f"{path.name}: nothing matched"
    assert found[0].id == entry_id, f"{path.name}: {found[0].id}"
    if condition:
        assert found[0].condition.startswith(condition), (path.name, found[0].condition)
