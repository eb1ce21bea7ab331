"""The scan's shortcuts for logs dense with anchor hits change no result (round 26: 120,000
Vulkan "vk::Queue::submit: ErrorDeviceLost" lines, 9 s before them; see
benchmarks/explain_bench.py --dense). A multi-line pattern is tried at its literal prefix after
leading zero-width assertions (`\\bring comp_` at "ring comp_", not at every "r"), and a start
is matched only where its window holds a literal every match needs (kb/regexshape.py,
required_literals), and a hit whose window lacks such a literal tries no start there
(kb/window.py, Ahead). Here the table is scanned with and without them: the same
entries, counts, lines, evidence and captures. No timing here (speed targets: the benchmark)."""

from __future__ import annotations

import dataclasses
import random
import re
from pathlib import Path
from re import _compiler as sre_compiler  # type: ignore[attr-defined]
from re import _parser as sre_parse  # type: ignore[attr-defined]

import pytest

from rocmprov.kb import load_table, regexshape, window
from rocmprov.kb import scan as kbscan
from rocmprov.kb.codes import load_codes
from rocmprov.kb.compiled import Compiled
from rocmprov.kb.target import Target

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "kb"
VULKAN = "llm.ggml-vulkan-device-lost-compute-timeout"


def _body(name: str) -> str:
    return (FIXTURES / f"{name}.txt").read_text(encoding="utf-8").partition("\n---\n")[2]


def _plain_prefix(pattern: str, flags: int) -> str:
    """The literal prefix as the regex engine gives it (none after a leading `\\b`)."""
    parsed = sre_parse.parse(pattern, flags)
    return "".join(map(chr, sre_compiler._get_literal_prefix(parsed, flags)[0]))


def _without_shortcuts(compiled: Compiled) -> Compiled:
    """`compiled` whose targets need no literal, take the engine's own literal prefix and have
    no head (regexshape.line_head: every start of a line tried, not one)."""
    # (the scan's `windows` shared by the targets of one hit stay: the same call either way)
    done: dict[int, Target] = {}

    def one(t: Target) -> Target:
        if id(t) not in done:
            new = dataclasses.replace(t)
            prefix = "" if t.source is None else _plain_prefix(t.regex.pattern, t.regex.flags)
            firsts = "" if prefix or t.source is None else regexshape.first_chars(
                t.regex.pattern, t.regex.flags
            )
            new.__dict__.update(
                {"needs": "", "musts": (), "prefix": prefix, "firsts": firsts, "head": None}
            )
            done[id(t)] = new
        return done[id(t)]

    targets = {a: tuple(one(t) for t in ts) for a, ts in compiled.targets.items()}
    return dataclasses.replace(compiled, targets=targets)


def _seen(found: dict[int, kbscan.Found]) -> dict[int, tuple]:
    return {i: (a.first_line, a.lines, a.evidence, a.captures, a.count) for i, a in found.items()}


def _texts() -> dict[str, str]:
    vulkan = _body(VULKAN)
    first = next(line for line in vulkan.splitlines() if line.strip())
    bodies = [_body(p.stem) for p in sorted(FIXTURES.glob("*.txt"))]
    lines = [line for body in bodies for line in body.splitlines() if line.strip()]
    rng = random.Random(26)
    return {
        "vulkan-first-line": (first + "\n") * 3000,
        "vulkan-fixture": vulkan * 600,
        "fixture-lines": "\n".join(rng.choice(lines) for _ in range(6000)) + "\n",
        "fixtures": "\n".join(bodies),
    }


TEXTS = _texts()


@pytest.mark.parametrize("name", sorted(TEXTS))
def test_dense_logs_get_the_same_matches_with_and_without_the_shortcuts(name: str) -> None:
    compiled = kbscan.compile_table(load_table(), load_codes())
    text = TEXTS[name]
    fast_lines: dict[int, tuple[int, str]] = {}
    plain_lines: dict[int, tuple[int, str]] = {}
    fast = kbscan.scan(text, compiled, fast_lines)
    plain = kbscan.scan(text, _without_shortcuts(compiled), plain_lines)
    assert _seen(fast) == _seen(plain)
    assert fast_lines == plain_lines
    if name == "vulkan-fixture":  # the entry is found there, up to its count's cap
        vulkan = load_table().by_id[VULKAN]
        assert fast[load_table().entries.index(vulkan)].count == kbscan.MAX_COUNT


def test_the_plain_scan_really_lacks_the_shortcuts() -> None:
    """The comparison above means something: the Vulkan entry's targets differ between them."""
    compiled = kbscan.compile_table(load_table(), load_codes())
    anchor = "vk::Queue::submit: ErrorDeviceLost"
    plain_compiled = _without_shortcuts(compiled)
    fast = [(t.prefix, t.needs, t.head is None) for t in compiled.targets[anchor]]
    plain = [(t.prefix, t.needs, t.head is None) for t in plain_compiled.targets[anchor]]
    assert fast == [(anchor, "ring comp_", True), ("ring comp_", anchor, False)]
    assert plain == [(anchor, "", True), ("", "", True)]


def test_a_literal_prefix_is_read_past_zero_width_assertions() -> None:
    assert regexshape.literal_prefix(r"\bring (?P<r>comp_\d+) timeout", 0) == "ring comp_"
    assert regexshape.literal_prefix(r"^\bERROR: x", re.MULTILINE) == "ERROR: x"
    assert regexshape.literal_prefix(r"(?:a|b)c", 0) == ""


def test_the_literals_every_match_needs() -> None:
    assert regexshape.required_literals(r"ab(?:x|y)cd[0-9]+(?P<g>efg)h", 0) == ("efgh", "ab", "cd")
    assert regexshape.required_literals(r"ab(?=zzz)c?d", 0) == ("ab", "d")  # a look-ahead: none
    assert regexshape.required_literals(r"(?i)abc", 0) == ()
    assert regexshape.required_literals(r"x(?i:abc)y", 0) == ("x", "y")


def test_the_places_of_a_literal_are_read_once_as_windows_move_on() -> None:
    text = "x" * 100 + "ab" + "y" * 100 + "ab"
    ahead = window.Ahead("ab")
    assert ahead.any_in(text, 0, 102) and not ahead.any_in(text, 0, 101)
    assert not ahead.any_in(text, 101, 150)
    assert ahead.any_in(text, 150, 204) and ahead.at == 202
    assert not ahead.any_in(text, 203, 400) and ahead.at == -1
    assert ahead.any_in(text, 0, 102)  # a window that moved back starts a new stretch
    assert not window.Ahead("ab").any_in(text, 300, 400)
