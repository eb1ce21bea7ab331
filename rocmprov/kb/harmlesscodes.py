"""Which status codes a harmless match explains (kb/matcher.py's look-up of the codes no entry
explained). Pure.

A harmless line can print a status code's name (rocBLAS 4.2.0's "hip error code:
'hipErrorContextIsDestroyed':709 at .../handle.hpp"): that occurrence is the harmless line's,
not a failure. Only it: the same code on another line, or printed after the harmless message
on its line (a flattened "... Error {e}"), is still looked up. Each function returns a
predicate over (line number, code name) that kb/codes.py's `find_lines` passes over, so a
code's next line is its hit. A code line no in-place span explains (a line put back from an
escaped or JSON one, one past the lines the evidence keeps or past where the scan stopped
reading the entry) is read on its own: a found harmless entry's single-line pattern must match
it, with the code inside the match (`line_codes`); no rule explains "every line after" one.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Callable
from typing import Any

from rocmprov.kb import codes as status_codes
from rocmprov.kb.reflow import plain_marks, plain_spacing, unescape
from rocmprov.kb.scan import Found, line_match
from rocmprov.kb.window import Seen, context_ok


def harmless_codes(
    text: str, found: dict[int, Found], harmless: set[int],
    code_lines: dict[int, tuple[int, str]], index: status_codes.Codes,
) -> Callable[[int, str], bool]:  # fmt: skip
    """Whether a status code (line number, name) is explained by a harmless match found in
    place: it is inside one of the matched spans of the entries `harmless` on that line (a code
    printed after the message, e.g. a flattened "... Error {e}", or the same code on another
    line, stays). Only the code lines the scan found
    (`code_lines`: line start -> (number, line)) are read, each within a span."""
    starts = sorted(code_lines)
    inside: set[tuple[int, str]] = set()
    for i in harmless:
        acc = found[i]
        for lo, hi in acc.seen_spans:
            for s in starts[max(0, bisect_right(starts, lo) - 1) : bisect_left(starts, hi)]:
                number, line = code_lines[s]
                a, b = max(lo, s), min(hi, s + len(line))
                for hit in status_codes.find(text[a:b], index)[0] if a < b else ():
                    inside.add((number, hit.code.name))
    return lambda number, name: (number, name) in inside


# a harmless target's match on a code line: (target, the codes it holds, its place on the line
# as written; None on a line put back)
_Held = tuple[Any, frozenset[str], tuple[int, int] | None]


def line_codes(
    text: str, code_lines: dict[int, tuple[int, str]], harmless: set[int], compiled: Any,
    index: status_codes.Codes,
) -> Callable[[int, str], bool]:  # fmt: skip
    """Whether a status code (line number, name) on a line no in-place span explains is a found
    harmless entry's: one of its single-line patterns matches that line, as written or put back
    (kb/reflow.py: escapes, entities, quote marks, spacing made plain; a JSON string's lines
    each), by the scan's own check (scan.line_match, a context's `unless`/`near` read around the
    user's line), and the match holds the code. A line past the entry's last evidence line or
    its MAX_COUNT is read the same way; the same line put back elsewhere too. The matches are
    cached by line text, the codes by match text (a log of one warning repeated, or with a
    time stamp before each, reads its codes once)."""
    own = (t for ts in compiled.targets.values() for t in ts if t.entry in harmless)
    targets = list({id(t): t for t in own if t.source is not None and t.lines == 1}.values())
    where = {number: (start, line) for start, (number, line) in code_lines.items()}
    seen: dict[re.Pattern[str], Seen] = {}
    cache: dict[tuple[str, bool], list[_Held]] = {}
    names: dict[str, frozenset[str]] = {}  # match text -> the codes it holds

    def held(match: str) -> frozenset[str]:
        if match not in names:
            names[match] = frozenset(h.code.name for h in status_codes.find(match, index)[0])
        return names[match]

    def matches(line: str, loose: bool) -> list[_Held]:
        """(target, the codes its match holds, its place on the line: None put back)."""
        if (line, loose) not in cache:
            forms = [line]
            if loose:
                forms = [plain_spacing(plain_marks(p)) for p in unescape(line)[0].split("\n")]
            out = []
            for form in forms:
                for target in targets:
                    m = line_match(target, form, 0, len(form), 0, len(form))
                    if m is not None:
                        out.append((target, held(m.group()), None if loose else m.span()))
            cache[line, loose] = out
        return cache[line, loose]

    def check(number: int, name: str) -> bool:
        start, line = where[number]
        for loose in (False, True):
            for target, names, span in matches(line, loose):
                a, b = (start + span[0], start + span[1]) if span else (start, start + len(line))
                if name in names and context_ok(text, target, a, b, seen):
                    return True
        return False

    return check
