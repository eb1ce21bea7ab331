"""The similarity tier beside harmless lines (issue 28, session 27): a log whose only matches are
harmless gets the tier over the informative lines no harmless match covers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rocmprov.commands import explain
from rocmprov.kb import load_table, match
from rocmprov.kb import similar as sim
from rocmprov.kb.lineends import normalise
from rocmprov.kb.names import masked
from rocmprov.kb.scan import MAX_EVIDENCE

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "kb"
TABLE = load_table()
TEXTS = json.loads((ROOT / "rocmprov" / "data" / "kb" / "texts.json").read_text("utf-8"))

# A harmless entry's fixture that also holds the real error it follows: the tier names that
# error's entry, which is what it is for. The apport notice's own cause says the failure is "the
# first 'error processing package' above it": here dpkg's "error processing package amdgpu
# (--configure): dependency problems", which no pattern takes (amdgpu, not amdgpu-dkms).
BESIDE_A_REAL_ERROR = {
    "apt.apport-followup-error-no-report.txt": "dkms.amdgpu-dpkg-configure-failed"
}
HARMLESS = [p for e in TABLE.entries if e.harmless for p in sim.wordings(FIXTURES, e.id)]


def _suggested(text: str) -> list[str]:
    text = normalise(text)
    return [s.id for s in sim.suggest(text, match(text, table=TABLE), TABLE)]


def test_every_harmless_entrys_fixture_and_wordings_alone_get_no_similar_real_cause() -> None:
    given = {p.name: ids for p in HARMLESS if (ids := _suggested(sim.body_of(p)))}
    assert {name: ids[0] for name, ids in given.items()} == BESIDE_A_REAL_ERROR, given
    assert len(HARMLESS) > 200


def _harmless_line() -> tuple[str, str]:
    """A harmless entry's own line that looks like a problem (so the tier would read it) and
    resembles that entry most, at 0.95 or more."""
    for entry in TABLE.entries:
        for line in TEXTS[entry.id][:1] if entry.harmless else []:
            best = sim.ranked(line, TABLE)[:1]
            if best and best[0].id == entry.id and best[0].score >= 0.95:
                return entry.id, line
    raise AssertionError("no harmless line to test with")


def _reworded() -> tuple[str, str]:
    """A real entry's line with every third word left out: no pattern takes it, the tier does."""
    for entry in TABLE.entries:
        for line in TEXTS[entry.id][:1]:
            near = " ".join(w for k, w in enumerate(line.split()) if k % 3 != 1)
            if entry.harmless or not sim.informative(near) or match(near, table=TABLE):
                continue
            got = sim.similar(near, TABLE)
            if got and got[0].id == entry.id and 0.7 < got[0].score < 0.9:
                return entry.id, near
    raise AssertionError("no reworded line to test with")


HARMLESS_ID, HARMLESS_LINE = _harmless_line()
REAL_ID, REWORDED = _reworded()


def test_a_real_error_beside_a_harmless_line_is_suggested() -> None:
    text = f"{HARMLESS_LINE}\nstarting\n{REWORDED}\n"
    assert [m.id for m in match(text, table=TABLE)] == [HARMLESS_ID]
    assert _suggested(text)[0] == REAL_ID
    got = sim.suggest(text, match(text, table=TABLE), TABLE)
    assert got[0].line == 3 and got[0].evidence == REWORDED


def test_no_suggestion_when_a_real_cause_matched() -> None:
    text = f"{HARMLESS_LINE}\n{REWORDED}\n{TEXTS[REAL_ID][0]}\n"
    assert any(not m.harmless for m in match(text, table=TABLE)) and _suggested(text) == []


def test_the_harmless_lines_are_not_compared_however_often_they_repeat() -> None:
    """A match lists its first MAX_EVIDENCE lines only; its entry's patterns take the rest out
    too. Left in, a copy of the harmless line resembles its own harmless entry most, and that
    rule (as alike to a harmless line as to anything: no cause) hid the real error."""
    lines = [HARMLESS_LINE] * (MAX_EVIDENCE + 5) + [REWORDED]
    text = "\n".join(lines) + "\n"
    found = match(text, table=TABLE)
    assert found[0].count > len(found[0].lines) == MAX_EVIDENCE
    assert _suggested(text)[0] == REAL_ID
    assert sim.similar(text, TABLE, skip=set(found[0].lines)) == []  # the copies past the tenth


def test_a_harmless_line_alone_gets_nothing_even_if_it_looks_like_a_problem() -> None:
    assert _suggested(HARMLESS_LINE + "\n") == []


@pytest.mark.parametrize("fmt", ["json", "table"])
def test_explain_shows_it_and_keeps_the_exit_code(tmp_path, capsys, fmt) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "log.txt"
    path.write_text(f"{HARMLESS_LINE}\nstarting\n{REWORDED}\n", encoding="utf-8")
    args = explain.argparse.Namespace(file=str(path), format=fmt, all=False, context=[])
    assert explain.run(args) == 0
    out = capsys.readouterr().out
    if fmt == "json":
        doc = json.loads(out)
        assert doc["exit_code"] == 0 and doc["harmless"] == 1
        assert [m["id"] for m in doc["matches"]] == [HARMLESS_ID]
        assert doc["similar"][0]["id"] == REAL_ID and doc["similar"][0]["line"] == 3
        assert "unknown" in doc
    else:
        assert "No known cause found" in out
        assert "Similar to (not a diagnosis" in out and f"[{REAL_ID}]" in out
        assert "Harmless (no action needed" in out and f"[{HARMLESS_ID}]" in out


def _line_by_line(text: str) -> list[tuple[int, str]]:
    """`informative` as it was: the regex on every line (~10 s on 20 MB of log), on the line
    with its names left out too (kb/names.py: libgpg-error.so.0 is a name, not a problem)."""
    out = []
    for number, line in enumerate(text.split("\n"), 1):
        cut = line[: sim.MAX_CHARS]
        if sim._PROBLEM.search(cut) and sim._PROBLEM.search(masked(cut)):
            out.append((number, cut.strip()))
    return out[: sim.MAX_LINES]


@pytest.mark.parametrize(
    "text",
    [
        "ok\nERROR: x\n\nfine\nCould Not open\nTimeout\ntimeouts\nwarning\n",
        "İstanbul İ error\nKELVIN K ERROR\nİ\nno gpu found\n",  # lower() changes the length
        "x" * (sim.MAX_CHARS - 2) + " error\n" + "y" * sim.MAX_CHARS + " error\nlast error",
        "error\n" * (sim.MAX_LINES + 3) + "tail error",
        "a hang\nhangar\nunhang\nlost\nlostness\nno device\n\r\nfault\nsegfault\n",
        "libgpg-error.so.0 (libc6)\npytest-timeout 2.5\nx: error\npanic=1\nstatus=failed\n",
    ],
)
def test_informative_reads_the_lines_the_regex_reads_line_by_line(text: str) -> None:
    assert sim.informative(text) == _line_by_line(text)


def test_informative_reads_every_fixture_as_the_regex_does() -> None:
    for path in sorted((ROOT / "tests" / "fixtures").glob("kb*/*.txt")):
        body = sim.body_of(path)
        assert sim.informative(body) == _line_by_line(body), path.name
