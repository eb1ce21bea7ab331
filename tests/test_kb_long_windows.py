"""A multi-line pattern's window over long lines (session 30): each start tried in a window read
on by itself to its `lines`-th line end and to the next place of the literal its matches need,
`lines` x the line length a start. A pattern that can start with a common letter is tried at
every such letter up to its anchor's hit, so a window of lines of 1,000 to 8,000 characters cost
the square of its size (the put-back text of 256 KiB of the table's messages: 0.37 s of the
0.46 s of explain, 0.08 s past LOOSEN_ALWAYS, docs/benchmarks.md). Now a window's line ends and
the literal's places are read once as its starts move on (kb/window.py LineEnds, Next).
No timing here: the characters read are counted, and CPU time is compared between two texts."""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

from rocmprov.kb import window
from rocmprov.kb.matcher import analyse
from rocmprov.kb.table import parse_table
from tests.growth import cpu_ratio

NEEDLE = "NEEDLE here"
REGEX = r"[ab]x(?:[^\n]*\n){1,7}?[^\n]*?NEEDLE here"  # starts at every "a" or "b"
ENTRY = {"id": "t.ends", "title": "t", "category": "rocm", "kind": "root-cause",
         "cause": "c" * 50, "fix": "f", "sources": ["https://example.org/a"],
         "patterns": [{"regex": REGEX, "anchor": NEEDLE, "lines": 8}]}  # fmt: skip
TABLE = parse_table({"schema": "rocmprov.kb/1", "entries": [ENTRY]})


def _log(width: int, size: int = 256 * 1024, first: str = "a ") -> str:
    """Lines of `width` characters of "a a a ...", the needle ending every eighth."""
    line = (first + "a " * width)[: width - 1] + "\n"
    block = line * 7 + line[: width - len(NEEDLE) - 2] + " " + NEEDLE + "\n"
    return (block * (size // len(block) + 1))[:size]


class _Reads(str):
    """A text that counts the characters its `find` reads (to the place found, or the end)."""

    read = 0

    def find(self, sub: str, start: int = 0, end: int | None = None) -> int:  # type: ignore[override]
        end = len(self) if end is None else end
        at = str.find(self, sub, start, end)
        _Reads.read += max(0, (end if at < 0 else at + len(sub)) - start)
        return at


@dataclass(frozen=True, eq=False)
class _Target:
    regex: re.Pattern[str]
    lines: int = 8
    around: int = 0
    prefix: str = ""
    firsts: str = "ab"
    needs: str = NEEDLE
    head: re.Pattern[str] | None = None
    unless: re.Pattern[str] | None = None
    near: re.Pattern[str] | None = None


def test_a_windows_starts_read_its_text_a_few_times_not_once_each() -> None:
    """One window of 8 lines of 4,000 characters, every other one a start: the starts' finds
    read each character a few times in all (before: about 4 lines a start, 4 x 16,000 x 4,000)."""
    width = 4000
    text = _Reads(_log(width, 8 * width))
    pos = text.index(NEEDLE)
    _Reads.read = 0
    found = list(window.starting_by(_Target(re.compile(REGEX)), text, 0, len(text), pos, {}))
    assert found == []
    assert _Reads.read <= 4 * len(text), _Reads.read


def test_the_same_log_in_longer_lines_costs_about_the_same() -> None:
    """256 KiB of 8-line blocks whose last line holds the anchor: lines of 4,096 characters
    cost about what lines of 256 do (before: 5.3-5.4x)."""
    analyse("warm up")
    short, long = _log(256), _log(4096)
    assert not analyse(long, table=TABLE, codes=False).matches  # "[ab]x": no start matches
    assert analyse(_log(4096, first="ax "), table=TABLE, codes=False).matches  # still found
    ratio = cpu_ratio(lambda: analyse(long, table=TABLE, codes=False),
                      lambda: analyse(short, table=TABLE, codes=False))  # fmt: skip
    assert ratio < 2.5, ratio


def _lines_end(text: str, start: int, lines: int, limit: int) -> int:
    """lines_end as it was: each start reads on by itself."""
    end = start - 1
    for _ in range(lines):
        end = text.find("\n", end + 1, limit)
        if end < 0:
            return len(text) if limit >= len(text) else limit + 1
    return end


def test_line_ends_and_next_literal_read_once_answer_as_a_search_per_start() -> None:
    rng = random.Random(30)
    for _ in range(300):
        text = "".join(rng.choice("ab\nx") for _ in range(rng.randrange(1, 80)))
        lo = rng.randrange(len(text))
        limit = rng.randrange(lo, len(text) + 1)
        lines = rng.randrange(1, 5)
        ends, held = window.LineEnds(text, lo, limit), window.Next(text, "ab", limit)
        start = lo
        while start < limit:
            stop = ends.end(start, lines)
            assert stop == _lines_end(text, start, lines, limit), (text, lo, limit, start)
            assert stop == window.lines_end(text, start, lines, limit)
            upto = min(limit, stop)
            assert held.within(start, upto) == (text.find("ab", start, upto) >= 0)
            start += rng.randrange(1, 4)
