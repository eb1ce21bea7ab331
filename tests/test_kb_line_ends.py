"""Line ends are made \\n once, at the start of `analyse` (kb/lineends.py): a log with Windows
(\\r\\n), serial-console (\\n\\r) or old Mac (\\r) line ends is matched as the same log with \\n,
by patterns that do not allow a \\r themselves, with the same line numbers and evidence without a
\\r. A lone \\r inside a line stays there (so nothing the matcher found at bc7614b
is lost); one with only blanks or ANSI escapes after it to the line end is dropped with them"""

from __future__ import annotations

from pathlib import Path

import pytest

from rocmprov.kb import load_table
from rocmprov.kb.lineends import normalise
from rocmprov.kb.matcher import analyse
from rocmprov.kb.table import parse_table
from tests.growth import assert_linear

ROOT = Path(__file__).resolve().parent.parent
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


def test_a_lone_cr_inside_a_line_keeps_the_text_the_base_found() -> None:
    """Constructed inputs (review 26C): r26-g7 took a line with a lone \\r as a terminal shows
    it, which hid text the matcher found before (bc7614b). No real capture of redraw bytes was
    available to check that rule, so a lone \\r inside a line now stays in it as it is; only a
    \\r with nothing but blanks or ANSI escapes after it up to the line end is dropped (with
    them), and a line's leading \\r."""
    err = "hipErrorNoBinaryForGpu: Unable to find code object for all current devices!"
    oom = ("torch.OutOfMemoryError: HIP out of memory. Tried to allocate 2.00 GiB. GPU 0 has a "
           "total capacity of 23.98 GiB of which 1.02 GiB is free.")  # fmt: skip
    assert normalise("a\nx 10%\rdone\nb\n") == "a\nx 10%\rdone\nb\n"
    assert normalise(err + "\r\x1b[K\n") == err + "\n"
    assert normalise(err + "\r \n") == err + "\n"
    assert normalise("bar\r\r\nnext\r") == "bar\nnext"
    assert normalise("a\n\rbar 0%\rbar 100%\nb\n") == "a\nbar 0%\rbar 100%\nb\n"
    assert normalise("plain\ntext\n") == "plain\ntext\n"
    table = load_table()
    for text, entry in (
        (err + "\r\x1b[K\n", "hip.no-binary-for-gpu"),
        (err + "\r \n", "hip.no-binary-for-gpu"),
        (oom + "\r[rank0] exit code 1\nnext\n", "pytorch.hip-out-of-memory"),
        ("a\n" + err + "\r  3%|#   | 1/30\n", "hip.no-binary-for-gpu"),  # a bar after it
    ):
        assert entry in [m.id for m in analyse(text, table=table).matches], repr(text)


def test_serial_console_and_old_mac_line_ends() -> None:
    """Constructed inputs: \\n\\r (a serial console) is \\n; lone \\r are line breaks when they
    are at least as many as the \\n, so a \\r-separated log with one final \\n still splits
    (r26-g7 split only a text with no \\n at all)."""
    assert _seen(LOG.replace("\n", "\n\r")) == _seen(LOG)
    assert normalise("one\rtwo\rthree") == "one\ntwo\nthree"
    assert normalise("one\rtwo\rthree\n") == "one\ntwo\nthree\n"
    assert normalise("one\rtwo\rthree\rexit status 134\n") == "one\ntwo\nthree\nexit status 134\n"
    assert _seen(LOG.replace("\n", "\r").rstrip("\r") + "\n") == _seen(LOG)
    assert normalise("a\nb\nx 10%\rdone\n") == "a\nb\nx 10%\rdone\n"  # fewer \\r than \\n


def test_normalising_is_idempotent() -> None:
    """Constructed inputs: explain normalises once and analyse again (library callers)."""
    for text in ("a\n\r\rb\n", "x\r\n\r\n", "\r\r - nothing\n", "a\rb\nc\rd\n",
                 "e\r\x1b[2K\x1b[0m \n\r\r\n", LOG.replace("\n", "\r")):  # fmt: skip
        once = normalise(text)
        assert normalise(once) == once, repr(text)


_RUNS = [
    lambda size: "x\n" + "\r" * size + "y\n",
    lambda size: "x\n" + "ab\r" * (size // 3) + "\n",
    lambda size: "x\n" + "a" * size + "\r" + "b" * size + "\n",
    lambda size: "x\n" + "a" * size + "\rb" * (size // 2) + "\n",
    lambda size: "x\n" + ("\r" * 999 + "a") * (size // 256),
    lambda size: "x\n" + "\r \x1b[K" * (size // 5) + "y\n",
    lambda size: "x\n" + "\r\x1b[" + "1" * size + "\n",
    lambda size: "\n\r" * (size // 2),
]


@pytest.mark.parametrize("run", range(len(_RUNS)))
def test_normalising_is_linear_on_long_runs_and_lines(run: int) -> None:
    """No regex here is retried along a run: 1 MiB of \\r, of redraws, of one long line (a
    quadratic pass over 1 MiB takes hours; the linear one about 1 s on a loaded 2-core
    machine, where 4 MiB came near the time bound this test had). Now 4x each run (64 KiB ->
    256 KiB) must take well under 16x the CPU time, whatever the machine's speed; each run on
    its own (pooled, a cheap quadratic in one run hid under the others' linear cost)."""
    assert_linear(_RUNS[run], normalise, 64 * 1024)


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


def test_one_line_with_one_lone_cr_inside_stays_one_line() -> None:
    # constructed: a message, a carriage return and more text on the same line, then \n (a
    # redraw, or a terminal-escape payload as tests/test_terminal_safety.py sends): not an old
    # Mac file, so the text after the \r stays on the message's line
    text = "RuntimeError: No HIP GPUs are available \rOK [drm] tail\n"
    assert normalise(text) == text
    assert normalise("one\rtwo\rthree\n") == "one\ntwo\nthree\n"  # \r outnumber \n: old Mac
