"""A pattern's `unless` / `near` context (kb/table.py, kb/scan.py): the lines around a match
rule its cause out or in. Round 18 replaced regexes that read 15-40 lines around every match
(a log of 800 CTranslate2 lines took 36 s) with this: each context regex runs once per text."""

from __future__ import annotations

import re
from typing import Any

import pytest

from rocmprov.kb import match
from rocmprov.kb import scan as kbscan
from rocmprov.kb.table import TableError, parse_table
from tests.kbcases import wrapped


def _table(**pattern: Any) -> Any:
    entry = {"id": "t.ctx", "title": "t", "category": "rocm", "kind": "root-cause",
             "cause": "c" * 50, "fix": "f", "sources": ["https://example.org/a"],
             "patterns": [{"regex": "driver version is insufficient", **pattern}]}  # fmt: skip
    return parse_table({"schema": "rocmprov.kb/1", "entries": [entry]})


def _text(before: int, after: int, veto_at: int | None) -> str:
    lines = ["filler line"] * before + ["CUDA driver version is insufficient"] + ["more"] * after
    if veto_at is not None:
        lines[veto_at] = "| NVIDIA-SMI 550.54 |"
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("lines", [1, 3])
def test_unless_within_around_lines_either_way_silences_and_beyond_does_not(lines: int) -> None:
    table = _table(unless="NVIDIA-SMI", around=5, lines=lines)
    # the message is line index 10; 5 lines either way are indexes 5..15
    for veto_at, silent in ((5, True), (15, True), (4, False), (16, False), (None, False)):
        found = match(_text(10, 10, veto_at), table=table, codes=False)
        assert (found == []) is silent, (veto_at, found)


def test_near_must_be_within_around_lines() -> None:
    table = _table(near=r"\bRadeon RX\b", around=3)
    base = ["x"] * 10 + ["driver version is insufficient"] + ["y"] * 10
    for at, fires in ((7, True), (13, True), (6, False), (14, False)):
        lines = list(base)
        lines[at] = "GPU: AMD Radeon RX 7900 XTX"
        assert bool(match("\n".join(lines), table=table, codes=False)) is fires, at


@pytest.mark.parametrize(
    "pattern",
    [{"unless": "x{2}"}, {"around": 3}, {"near": "(", "around": 3}, {"unless": "ab", "around": 99}],
)
def test_context_needs_a_valid_regex_and_a_bounded_around(pattern: dict) -> None:
    with pytest.raises(TableError):
        _table(**pattern)


class _Counting:
    """A context regex that adds up the characters it is asked to search."""

    def __init__(self, regex: re.Pattern[str], tally: list[int]) -> None:
        self.regex, self.tally = regex, tally

    def finditer(self, text: str, pos: int = 0, endpos: int | None = None) -> Any:
        endpos = len(text) if endpos is None else endpos
        self.tally[0] += endpos - pos
        return self.regex.finditer(text, pos, endpos)

    def search(self, text: str, pos: int = 0, endpos: int | None = None) -> Any:
        endpos = len(text) if endpos is None else endpos
        self.tally[0] += endpos - pos
        return self.regex.search(text, pos, endpos)


def test_a_log_of_many_such_messages_reads_the_context_once() -> None:
    table = _table(unless="NVIDIA-SMI", near="Radeon", around=30)
    compiled = kbscan.compile_table(table)
    tally = [0]
    counting = wrapped(compiled, lambda r: _Counting(r, tally), "unless", "near")
    # every message is ruled out (a vetoed match is never counted, so nothing stops the scan
    # early): the old way searched the 61 lines around each of the 1,900 messages
    block = "| NVIDIA-SMI 550.54 | AMD Radeon RX 6800\n" + "driver version is insufficient\n" * 19
    text = block * 100
    assert kbscan.scan(text, counting) == {}
    assert tally[0] <= 2 * len(text), tally  # each context regex once over the text


def test_a_few_messages_far_apart_read_only_their_own_lines() -> None:
    """...and a long log with one such message does not read the whole log for it."""
    table = _table(unless="NVIDIA-SMI", around=5)
    compiled = kbscan.compile_table(table)
    tally = [0]
    counting = wrapped(compiled, lambda r: _Counting(r, tally), "unless")
    filler = "an ordinary log line of some length\n" * 5000
    text = filler + "driver version is insufficient\n" + filler
    assert kbscan.scan(text, counting)
    assert tally[0] < 2000, tally  # about 11 lines, not 10,000
