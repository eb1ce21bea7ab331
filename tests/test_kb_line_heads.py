"""One start a line for a multi-line pattern shaped HEAD REST, where REST begins by reading to
its line's end (`(?:[^\\n]*\\n){m,n}` with m >= 1, `[^\\n]*\\n`; regexshape.line_head): where a
match failed from a start at which HEAD matched, no later start on that line can match, so
kb/window.py starting_by passes over the rest of the line (issue 28 item 6, session 30). 15 lines
of 8,000 characters of "ROCm " then one ONNX Runtime line that completes no match were 8.5 s of
CPU: framework.onnxruntime-cuda-provider-on-amd's first pattern was tried from every "ROCm", each
try reading on up to 15 lines. Here: the rule gives what trying every start gives (synthetic
patterns and every table pattern of that shape, on random texts), the matches a window tries,
and the growth with the line length (tests/growth.py: no absolute time)."""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import pytest

from rocmprov.kb import load_table, window
from rocmprov.kb.matcher import analyse
from rocmprov.kb.regexshape import line_head
from rocmprov.kb.target import Target
from tests.growth import assert_linear

ROOT = Path(__file__).resolve().parent.parent
TABLE = load_table()
ONNX = "framework.onnxruntime-cuda-provider-on-amd"
# a line of the ONNX message that no pattern of that entry completes (migraphx is not cuda|tensorrt)
MISS = ("Failed to load library libonnxruntime_providers_migraphx.so with error: "
        "libcublasLt.so.12: cannot open shared object file")  # fmt: skip
MSG = MISS.replace("migraphx", "cuda")


def _every_start(target: Any, text: str) -> list[tuple[int, int]]:
    """The matches starting_by gives, by trying every start (finditer's order: the leftmost,
    then the next from its end), each read to its own `lines`-th line end; with neither prefix
    nor first characters, finditer itself over the window."""
    hi = len(text)
    if target.needs and target.needs not in text:
        return []
    if not target.prefix and not target.firsts:
        return [m.span() for m in target.regex.finditer(text, 0, hi)]
    out, start = [], 0
    while start < hi:
        upto = min(hi, window.lines_end(text, start, target.lines, hi))
        m = target.regex.match(text, start, upto)
        if m is None:
            start += 1
        else:
            out.append(m.span())
            start = max(m.end(), start + 1)
    return out


def _per_line(target: Any, text: str) -> list[tuple[int, int]]:
    return [m.span() for m in window.starting_by(target, text, 0, len(text), len(text), {})]


@dataclass(frozen=True, eq=False)
class _Synthetic:
    """A target as the scan runs one, for a regex of the test's own (first characters "ab")."""

    pattern: str
    lines: int = 4
    around: int = 0
    prefix: str = ""
    firsts: str = "ab"
    needs: str = ""
    unless: re.Pattern[str] | None = None
    near: re.Pattern[str] | None = None

    @cached_property
    def regex(self) -> re.Pattern[str]:
        return re.compile(self.pattern, re.MULTILINE)

    @cached_property
    def head(self) -> re.Pattern[str] | None:
        return line_head(self.pattern, re.MULTILINE)


SHAPED = [  # HEAD, then REST reading to the line's end first
    r"(?:ab|a|b\b)(?:[^\n]*\n){1,3}?[^\n]*?ba",
    r"a+b?(?:[^\n]*\n){1,3}[^\n]*b\b",  # greedy
    r"(?P<h>a|ba)[^\n]*+\nb(?:[^\n]*\n)?a",  # possessive run, a capture in HEAD
    r"b[^\n]*?(?:\n[^\n]*){0,2}?\n(?<=a\n)b",  # a lookbehind over the line break REST reaches
    r"(?:a|b)(?=a)(?:[^\n]*\n(?:x )?){1,2}?a",  # a lookahead in HEAD, an optional line prefix
    r"(a)(b)?([^\n]*)\n(?:[^\n]*\n){0,2}?(?:b|$)",
]
NOT_SHAPED = [  # REST can end on HEAD's own line, or reads where HEAD ended, or refers to it
    r"a(?:[^\n]*\n){0,3}?[^\n]*?b",
    r"a[^\n]{0,2}\nb",
    r"a[^\n]*\r?\nb",
    r"(a|b)[^\n]*\n\1",
    r"a\nb",
    r"(?s)a.*\nb",
    r"a(?:[^\n]*\n|b)",
]


def test_line_head_finds_the_shape_and_nothing_else() -> None:
    for pattern in SHAPED:
        assert line_head(pattern, re.MULTILINE) is not None, pattern
    for pattern in NOT_SHAPED:
        assert line_head(pattern, re.MULTILINE) is None, pattern
    head = line_head(TABLE.by_id[ONNX].patterns[0].compiled.pattern, re.MULTILINE)
    assert head is not None and head.match("ROCm") and not head.match("ROCmx")


def test_one_start_a_line_gives_what_every_start_gives_synthetic() -> None:
    """And where a start's lines lack a literal every match holds (`needs`), so do those of
    every later start on its line, whatever the pattern's shape."""
    rng = random.Random(30)
    cases = [(p, "") for p in SHAPED] + [(p, "ba") for p in SHAPED[:1]]
    cases += [(r"a(?:[^\n]*\n){0,2}?[^\n]*?ba", "ba"), (r"b[^\n]{0,3}\n?a b", "a b")]
    for pattern, needs in cases:
        target = _Synthetic(pattern, needs=needs)
        found = 0
        for _ in range(400):
            text = "".join(rng.choice("aab \n") for _ in range(rng.randrange(1, 60)))
            assert _per_line(target, text) == _every_start(target, text), (pattern, text)
            found += bool(_every_start(target, text))
        assert found > 20, pattern  # the texts do hold matches


def test_the_rule_would_be_wrong_where_rest_can_end_on_heads_line() -> None:
    """So the equivalence tests can fail: with m = 0, a later start on a line can match where an
    earlier one did not (the first "a" reads on to "b" only through its line)."""
    target = _Synthetic(r"a(?:[^\n]*\n){0,1}?b", firsts="a")
    forced = _Forced(target, re.compile("a"))
    text = "a ab\n"  # the first "a" is followed by no "b", on its line or the next; the second is
    assert _every_start(target, text) == [(2, 4)]
    assert _per_line(forced, text) == []


@dataclass(frozen=True, eq=False)
class _Forced:
    """A target given a head that line_head would not give it."""

    of: Any
    head: re.Pattern[str]

    def __getattr__(self, name: str) -> Any:
        return getattr(self.of, name)


def _fixture_texts(entry_id: str) -> list[str]:
    paths = [ROOT / "tests" / "fixtures" / "kb" / f"{entry_id}.txt"]
    paths += sorted((ROOT / "tests" / "fixtures" / "kb-wordings").glob(f"{entry_id}.*.txt"))
    return [p.read_text(encoding="utf-8").split("\n---\n", 1)[-1] for p in paths if p.exists()]


def _shaped_targets() -> list[tuple[str, Target]]:
    out = []
    for ei, entry in enumerate(TABLE.entries):
        for pi, pattern in enumerate(entry.patterns):
            target = Target(ei, pi, pattern, pattern.lines, pattern.around)
            if pattern.lines > 1 and target.head is not None:
                out.append((f"{entry.id}:{pi}", target))
    return out


SHAPED_TABLE = _shaped_targets()


def _text(rng: random.Random, lines: list[str], heads: list[str], most: int) -> str:
    """A run of the entry's own lines, some cut, some swapped for another of its lines, with its
    heads' matches strewn along some of them (several starts a line, most of them failing)."""
    first = rng.randrange(len(lines))
    out = []
    for line in lines[first : first + rng.randrange(1, most)]:
        if rng.random() < 0.15:
            line = rng.choice(lines)
        if rng.random() < 0.2:
            a = rng.randrange(len(line))
            line = line[a : a + rng.randrange(1, 80)]
        if heads and rng.random() < 0.4:
            line = " ".join(rng.choice(heads) for _ in range(rng.randrange(1, 4))) + " " + line
        if heads and rng.random() < 0.2:
            line += " " + rng.choice(heads)
        out.append(line[:300])
    return "\n".join(out) + rng.choice(("", "\n"))


def test_table_patterns_of_the_shape_are_many() -> None:
    assert len(SHAPED_TABLE) >= 50  # 60 of 192 multi-line patterns when written
    names = [name for name, _t in SHAPED_TABLE]
    assert f"{ONNX}:0" in names and f"{ONNX}:1" in names


def test_one_start_a_line_gives_what_every_start_gives_table() -> None:
    """Every table pattern of the shape, on its entry's fixture texts as they are, with its
    heads' matches strewn along their lines, and on runs of their lines cut, swapped and
    strewn so: the matches starting_by gives are those of trying every start. Most patterns
    match some of those texts; most have heads in their texts (the others' entries are found
    by another pattern), and texts with lines where HEAD matches twice or more."""
    matching = repeating = headed = 0
    for name, target in SHAPED_TABLE:
        assert target.head is not None
        rng = random.Random(name)
        bodies = _fixture_texts(name.split(":")[0])
        lines = [line for body in bodies for line in body.splitlines() if line.strip()] or ["x"]
        heads = sorted({m.group() for ln in lines for m in target.head.finditer(ln) if m.group()})
        strewn = ["\n".join(f"{rng.choice(heads)} {ln} {rng.choice(heads)}" for ln in b.split("\n"))
                  for b in bodies if heads]  # fmt: skip
        texts = bodies + strewn + [_text(rng, lines, heads, 2 * target.lines) for _ in range(15)]
        matched = repeated = 0
        for text in texts:
            want = _every_start(target, text)
            assert _per_line(target, text) == want, (name, text)
            matched += bool(want)
            repeated += any(len(list(target.head.finditer(ln))) > 1 for ln in text.split("\n"))
        matching += matched > 0
        repeating += repeated > 0
        headed += bool(heads)
    assert matching >= 0.75 * len(SHAPED_TABLE), matching
    assert headed >= 0.75 * len(SHAPED_TABLE) and repeating >= headed - 2, (headed, repeating)


class _Tally:
    """A compiled regex that counts its `match` calls."""

    def __init__(self, regex: re.Pattern[str]) -> None:
        self.regex, self.calls = regex, 0

    def match(self, text: str, lo: int, hi: int) -> re.Match[str] | None:
        self.calls += 1
        return self.regex.match(text, lo, hi)


def _rocm_lines(width: int, last: str = MISS) -> str:
    line = ("ROCm " * (width // 5 + 1))[:width]
    return (line + "\n") * 15 + last + "\n"


def test_a_window_of_rocm_lines_is_tried_once_a_line() -> None:
    """The ONNX entry's first pattern over 15 lines of 4,000 characters of "ROCm ": one try a
    line (before: from each of the 12,000 "ROCm"s, each read on up to 15 lines)."""
    entry = TABLE.by_id[ONNX]
    ei = TABLE.entries.index(entry)
    real = Target(ei, 0, entry.patterns[0], entry.patterns[0].lines)
    tally = _Tally(real.regex)
    target = _Forced(real, real.head)  # type: ignore[arg-type]
    object.__setattr__(target, "regex", tally)
    text = _rocm_lines(4000)
    pos = text.index("Failed")
    assert list(window.starting_by(target, text, 0, len(text), pos, {})) == []
    assert tally.calls <= 16, tally.calls
    text = _rocm_lines(4000, MSG)
    found = list(window.starting_by(real, text, 0, len(text), pos, {}))
    assert [m.start() for m in found] == [0]  # and the match is still found, from the first


@pytest.mark.parametrize("last", [MISS, (MSG + " ") * 20])
def test_long_lines_before_an_anchor_cost_linear_in_their_length(last: str) -> None:
    """15 lines of L characters of "ROCm " then a line of the ONNX message that completes no
    match (the first pattern's shape), or lines of the message repeated along them (the
    second's, ANCHOR ... EVIDENCE): 4x the line length, well under 16x the CPU time (before:
    1,000 -> 4,000 characters, 0.16 -> 2.1 s and 0.09 -> 1.5 s)."""
    analyse("warm up")
    if last == MISS:
        assert_linear(lambda n: _rocm_lines(n), analyse, 1000)
    else:
        assert_linear(lambda n: ((last * (n // len(last) + 1))[:n] + "\n") * 16, analyse, 1000)


def _each_start(target: Any, text: str, calls: list[tuple[int, int, int]]) -> list[list[int]]:
    """starting_by's rule before session 30, over a run of hits sharing `tried`: every start
    of a call's own (up to its hit: its prefix's or first characters' places) tried, each read
    to its own lines' end or the window's."""
    out, tried = [], 0
    for lo, hi, pos in calls:
        found, final, start = [], True, max(lo, tried)
        limit = min(hi, pos + max(1, len(target.prefix)))
        while start < limit:
            if not (text.startswith(target.prefix, start) if target.prefix
                    else text[start] in target.firsts):  # fmt: skip
                start += 1
                continue
            stop = window.lines_end(text, start, target.lines, hi)
            m = target.regex.match(text, start, min(hi, stop))
            after = max(m.end(), start + 1) if m is not None else start + 1
            if final and stop <= hi:
                tried = after
            else:
                final = False
            if m is not None:
                found.append(m.start())
            start = after
        out.append(found)
    return out


def test_a_later_window_cut_shorter_tries_the_starts_past_the_first_hit() -> None:
    """A failed head settles the later starts of its line only for windows as long as its own:
    a later hit on an enormous next line has a window cut SPAN after it, where `\\b` matches at
    the cut ("gfx1100|0"); the starts past the first hit, on the line before, are still tried
    there, as they were before session 30 (the one-start-a-line rule had passed them over)."""
    entry = TABLE.by_id[ONNX]
    target = Target(TABLE.entries.index(entry), 1, entry.patterns[1], entry.patterns[1].lines)
    assert target.head is not None and target.prefix.startswith("Failed to load")
    first = MSG + " then " + MSG
    lead = "load library libonnxruntime_providers_ x "
    second = lead + "y" * (window.SPAN - 8 - len(lead)) + " gfx11000 " + "z" * 500
    text = first + "\n" + second + "\n"
    pos1, pos2 = first.index("load"), len(first) + 1
    assert text[pos2 + window.SPAN - 7 : pos2 + window.SPAN] == "gfx1100"
    calls = [(0, len(text), pos1), (0, pos2 + window.SPAN, pos2)]
    tried: dict[Target, int] = {}
    got = [[m.start() for m in window.starting_by(target, text, lo, hi, pos, tried)]
           for lo, hi, pos in calls]  # fmt: skip
    assert got == _each_start(target, text, calls) == [[], [first.rindex("Failed")]]


def test_runs_of_hits_give_what_trying_every_start_gives_synthetic() -> None:
    """Windows of random sizes, cut mid-line too, over runs of hits sharing `tried`."""
    rng = random.Random(31)
    for pattern in SHAPED:
        for prefix in ("", "a"):
            if prefix and not re.match(prefix, pattern):
                continue
            target = _Synthetic(pattern, prefix=prefix, firsts="" if prefix else "ab")
            for _ in range(300):
                text = "".join(rng.choice(["a", "b", " ", "\n", "ab", "\r\n"]) for _ in range(40))
                hits = sorted(rng.sample(range(len(text) + 1), 3))
                calls = [(rng.randint(0, p), rng.randint(p, len(text)), p) for p in hits]
                tried: dict[Any, int] = {}
                got = [[m.start() for m in window.starting_by(target, text, lo, hi, p, tried)]
                       for lo, hi, p in calls]  # fmt: skip
                assert got == _each_start(target, text, calls), (pattern, text, calls)


def test_a_line_lacking_a_needed_literal_is_looked_at_once(monkeypatch: Any) -> None:
    """Where a start's lines lack a literal every match holds (`needs`), so do those of the later
    starts on its line, whatever the pattern's shape (here one with no head): one look a line,
    not one a start (500 starts a line)."""
    looks: list[int] = []

    class Counting(window.Next):
        def within(self, start: int, upto: int) -> bool:
            looks.append(start)
            return super().within(start, upto)

    monkeypatch.setattr(window, "Next", Counting)
    target = _Synthetic(r"a(?:[^\n]*\n){0,2}?[^\n]*?zz", needs="zz", firsts="a")
    assert target.head is None
    text = ("a " * 500 + "\n") * 10
    assert list(window.starting_by(target, text, 0, len(text), len(text), {})) == []
    assert len(looks) == 10, len(looks)
