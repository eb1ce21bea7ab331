"""Which status codes a harmless match explains (kb/matcher.py's look-up of the codes no entry
explained). Pure.

A harmless line can print a status code's name (rocBLAS 4.2.0's "hip error code:
'hipErrorContextIsDestroyed':709 at .../handle.hpp"): that occurrence is the harmless line's,
not a failure. Only it: the same code on another line, or printed after the harmless message
on its line (a flattened "... Error {e}"), is still looked up. Each function returns a
predicate over (line number, code name) that kb/codes.py's `find_lines` passes over, so a
code's next line is its hit. Past where the scan stopped reading an entry, or past the lines
its evidence keeps, its codes are explained on every later line too.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable

from rocmprov.kb import codes as status_codes
from rocmprov.kb.scan import MAX_COUNT, MAX_EVIDENCE, Found


def harmless_codes(
    text: str, found: dict[int, Found], harmless: set[int],
    code_lines: dict[int, tuple[int, str]], index: status_codes.Codes,
) -> Callable[[int, str], bool]:  # fmt: skip
    """Whether a status code (line number, name) is explained by a harmless match found in
    place: it is inside one of the matched spans of the entries `harmless` on that line (a code
    printed after the message, e.g. a flattened "... Error {e}", or the same code on another
    line, stays). An entry counted MAX_COUNT times was no longer looked for: the codes its spans
    hold are explained on every line after its last one too. Only the code lines the scan found
    (`code_lines`: line start -> (number, line)) are read, each within a span."""
    starts = sorted(code_lines)
    inside: set[tuple[int, str]] = set()
    after: dict[str, int] = {}  # name -> explained on every line after this one
    for i in harmless:
        acc = found[i]
        for lo, hi in acc.seen_spans:
            for s in starts[max(0, bisect_right(starts, lo) - 1) : bisect_left(starts, hi)]:
                number, line = code_lines[s]
                a, b = max(lo, s), min(hi, s + len(line))
                for hit in status_codes.find(text[a:b], index)[0] if a < b else ():
                    inside.add((number, hit.code.name))
                    if acc.count >= MAX_COUNT:
                        after[hit.code.name] = max(after.get(hit.code.name, 0), number)
    return lambda number, name: (number, name) in inside or number > after.get(name, number)


def put_back_codes(found: dict[int, Found], put_back: set[int]) -> Callable[[int, str], bool]:
    """Whether a status code (line number, name) is explained by a harmless line put back from a
    longer one (a JSON log line, kb/reflow.py): its evidence on that line names the code; where
    it matched more lines than its evidence keeps (MAX_EVIDENCE), on every line after the last
    one kept too (several matches on one original line are not that). Not the
    name on every line of the text (35bba64: a real code before such a line vanished)."""
    shown: dict[int, list[str]] = {}
    after: list[tuple[int, str]] = []  # (last evidence line, its evidence) of a longer match
    for i in put_back:
        acc = found[i]
        for number, line in zip(acc.lines, acc.evidence, strict=True):
            shown.setdefault(number, []).append(line)
        if len(acc.lines) >= MAX_EVIDENCE and acc.count > len(acc.lines):  # lines not kept
            after.append((max(acc.lines), "\n".join(acc.evidence)))
    return lambda number, name: (
        any(name in line for line in shown.get(number, ()))
        or any(number > last and name in evidence for last, evidence in after)
    )
