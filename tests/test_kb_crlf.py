"""A log pasted with Windows line endings (\\r\\n: a file saved on Windows, a terminal copied
from PowerShell or a Windows browser) gets the same answer as with \\n (review 25B, item 3):
every fixture of the table and every other wording, its lines ended with \\r\\n, is answered
first by the same entry as with \\n (and by the same condition where the wording names one).
Line ends are made \\n once, before any pattern runs (kb/lineends.py; round 26): a pattern need
not allow a \\r before its \\n (tests/test_kb_line_ends.py checks whole answers)."""

from __future__ import annotations

from pathlib import Path

import pytest

from rocmprov.kb import match

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = sorted((ROOT / "tests" / "fixtures" / "kb").glob("*.txt"))
WORDINGS = sorted((ROOT / "tests" / "fixtures" / "kb-wordings").glob("*.txt"))

# fixtures whose answer still changes with \r\n, and why; this list may only shrink (they are
# left out of the parametrised test, never skipped: CI counts a skip as a failure)
KNOWN_DEBT: dict[str, str] = {}
CHECKED = [p for p in FIXTURES + WORDINGS if p.name not in KNOWN_DEBT]


def _read(path: Path) -> tuple[str, str]:
    """(condition named in the header, text)."""
    head, _, text = path.read_text(encoding="utf-8").partition("\n---\n")
    fields = [line.split(":", 1) for line in head.splitlines() if ":" in line]
    return next((v.strip() for k, v in fields if k == "condition"), ""), text


def _first(text: str) -> tuple[str, str]:
    found = match(text)
    return (found[0].id, found[0].condition) if found else ("", "")


@pytest.mark.parametrize("path", CHECKED, ids=[p.name for p in CHECKED])
def test_crlf_line_endings_get_the_same_first_answer(path: Path) -> None:
    condition, text = _read(path)
    text = text.replace("\r\n", "\n")
    lf, crlf = _first(text), _first(text.replace("\n", "\r\n"))
    assert crlf[0] == lf[0], (path.name, lf[0], crlf[0])
    if condition:
        assert crlf[1].startswith(condition), (path.name, crlf[1])


def test_known_debt_names_existing_fixtures_that_still_differ() -> None:
    """The debt list may only shrink: each name on it is a fixture that still differs."""
    for name in KNOWN_DEBT:
        path = next((p for p in FIXTURES + WORDINGS if p.name == name), None)
        assert path is not None, name
        text = _read(path)[1].replace("\r\n", "\n")
        assert _first(text)[0] != _first(text.replace("\n", "\r\n"))[0], f"{name}: fixed, drop it"
