"""Line ends are made \\n once, at the start of `analyse` (kb/lineends.py): a log with Windows
(\\r\\n) or old Mac (\\r) line ends is matched as the same log with \\n, by patterns that do not
allow a \\r themselves, with the same line numbers and evidence without a \\r. A lone \\r inside
a line is a terminal's carriage return (a progress bar's redraw): the line is what the terminal
showed (each part written over it from its start), and line numbers stay those `grep -n` gives."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from rocmprov.kb import load_table
from rocmprov.kb.lineends import normalise, shown
from rocmprov.kb.matcher import analyse
from rocmprov.kb.table import parse_table

ROOT = Path(__file__).resolve().parent.parent
TQDM = ROOT / "tests" / "fixtures" / "kb-line-ends" / "tqdm-redraw-then-fault.txt"
FIXTURES = sorted((ROOT / "tests" / "fixtures" / "kb").glob("*.txt"))
WORDINGS = sorted((ROOT / "tests" / "fixtures" / "kb-wordings").glob("*.txt"))

# no \r allowed anywhere: `$` before the line end, `\n` between the lines, `[^\n]*` to the end
STRICT = parse_table({"schema": "rocmprov.kb/1", "entries": [
    {"id": "t.strict-one", "title": "one", "category": "rocm", "kind": "root-cause",
     "cause": "c" * 50, "fix": "use {dev}", "sources": ["https://example.org/a"],
     "patterns": [{"regex": r"Unable to open (?P<dev>/dev/kfd) read-write$", "lines": 1}]},
    {"id": "t.strict-two", "title": "two", "category": "rocm", "kind": "symptom",
     "cause": "c" * 50, "fix": "f", "sources": ["https://example.org/a"],
     "patterns": [{"regex": r"ROCk module is loaded\nFailed to get user name[^\n]*$",
                   "anchor": "ROCk module is loaded", "lines": 2}]},
]})  # fmt: skip
LOG = (
    "rocminfo\n"
    "ROCk module is loaded\n"
    "Failed to get user name to check for video group membership\n"
    "hsa api call failure at: rocminfo.cc:1306\n"
    "Unable to open /dev/kfd read-write\n"
)


def _seen(text: str, table=STRICT) -> list[tuple[str, tuple[int, ...], tuple[str, ...], dict]]:
    found = analyse(text, table=table, codes=False).matches
    return [(m.id, m.lines, m.evidence, dict(m.captures)) for m in found]


def test_the_strict_patterns_need_the_normalising() -> None:
    """Without it (the raw CRLF text) neither pattern matches: `$` and `\\n` meet a \\r."""
    crlf = LOG.replace("\n", "\r\n")
    assert [p.compiled.search(crlf) for e in STRICT.entries for p in e.patterns] == [None, None]


def test_crlf_and_old_mac_line_ends_match_as_lf() -> None:
    lf = _seen(LOG)
    assert [x[0] for x in lf] == ["t.strict-one", "t.strict-two"]
    assert lf[0][1:] == ((5,), ("Unable to open /dev/kfd read-write",), {"dev": "/dev/kfd"})
    assert lf[1][1] == (2, 3)
    for ends in ("\r\n", "\r", "\r\r\n"):
        assert _seen(LOG.replace("\n", ends)) == lf, repr(ends)
        assert _seen(LOG.replace("\n", ends).rstrip("\r\n")) == lf, repr(ends)  # no last end


def test_mixed_line_ends_keep_the_lf_line_numbers() -> None:
    lines = LOG.splitlines()
    mixed = "\r\n".join(lines[:2]) + "\n" + "\r\n".join(lines[2:]) + "\n"
    assert _seen(mixed) == _seen(LOG)


def test_a_redrawn_line_is_what_the_terminal_showed() -> None:
    assert normalise("a\nx 10%\rx 20%\rdone!\nb\n") == "a\ndone!\nb\n"
    assert normalise("a\nx 10%\rx 20%\rdone\nb\n") == "a\ndone%\nb\n"  # the bar's tail stays
    assert shown("long message\rbar\rab") == "abrg message"
    assert normalise("bar\r\r\nnext\r") == "bar\nnext"  # a \r at a line's end erases nothing
    assert normalise("\rbar 0%\rbar 100%\n") == "bar 100%\n"
    assert normalise("one\rtwo\rthree") == "one\ntwo\nthree"  # no \n at all: old Mac
    assert normalise("plain\ntext\n") == "plain\ntext\n"
    # a progress bar redrawn before the message on the message's line: same line number
    redrawn = LOG.replace("Unable", "  0%|    | 0/9\r 50%|##  | 4/9\rUnable")
    assert _seen(redrawn) == _seen(LOG)


def test_a_captured_tqdm_log_gets_its_fault_with_lf_line_numbers() -> None:
    """A report's ComfyUI console with tqdm's \\r (tests/fixtures/kb-line-ends): the fault is
    found on the line `grep -n` gives it, shown as the terminal showed it, and the \\r\\n copy
    of the same file gets the same answer."""
    raw = TQDM.read_bytes().decode("utf-8")  # not read_text: it would turn each \r into \n
    assert raw.startswith("source: https://") and "\r" in raw
    body = raw.partition("\n---\n")[2]
    table = load_table()
    found = analyse(body, table=table).matches
    fault = next(m for m in found if m.id == "hsa.memory-access-fault")
    number = next(n for n, line in enumerate(body.split("\n"), 1) if "Memory access" in line)
    assert fault.lines == (number,)
    assert fault.evidence == (
        "Memory access fault by GPU node-1. Reason: Page not present or supervisor privilege.",
    )
    assert all("\r" not in e for m in found for e in m.evidence)
    again = analyse(body.replace("\n", "\r\n"), table=table).matches
    assert [(m.id, m.lines, m.evidence) for m in again] == [
        (m.id, m.lines, m.evidence) for m in found
    ]


def test_normalising_is_linear_on_long_runs_and_lines() -> None:
    """No regex here is retried along a run: 4 MiB of \\r, of redraws, of one long line."""
    mib = 4 * 1024 * 1024
    texts = [
        "x\n" + "\r" * mib + "y\n",
        "x\n" + "ab\r" * (mib // 3) + "\n",
        "x\n" + "a" * mib + "\r" + "b" * mib + "\n",
        "x\n" + "a" * mib + "\rb" * (mib // 2) + "\n",
        "x\n" + ("\r" * 999 + "a") * 4096,
    ]
    t0 = time.process_time()  # CPU time: a shared machine's load does not count
    for text in texts:
        assert "\r" not in normalise(text)
    assert time.process_time() - t0 < 5.0  # about 0.7 s; a quadratic pass takes hours


def _whole(text: str) -> tuple[list[dict], list[tuple[str, str]], list[str]]:
    found = analyse(text)
    return [m.to_dict() for m in found.matches], [(f.name, f.value) for f in found.facts], list(
        found.code_like
    )


@pytest.mark.parametrize("path", FIXTURES + WORDINGS, ids=[p.name for p in FIXTURES + WORDINGS])
def test_every_fixture_gets_the_whole_same_answer_with_any_line_ends(path: Path) -> None:
    """Not only the first entry (tests/test_kb_crlf.py): every match with its lines, evidence,
    captures and fix, and the facts, are the same with \\r\\n and with \\r line ends."""
    text = path.read_bytes().decode("utf-8").partition("\n---\n")[2].replace("\r\n", "\n")
    lf = _whole(text)
    assert _whole(text.replace("\n", "\r\n")) == lf
    assert _whole(text.replace("\n", "\r")) == lf  # old Mac: no \\n at all
