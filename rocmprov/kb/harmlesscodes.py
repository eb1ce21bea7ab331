"""Which status codes a harmless match explains (kb/matcher.py's look-up of the codes no entry
explained). Pure.

A harmless line can print a status code's name (rocBLAS 4.2.0's "hip error code:
'hipErrorContextIsDestroyed':709 at .../handle.hpp"): that occurrence is the harmless line's,
not a failure. Only it: the same code on another line, or printed after the harmless message
on its line (a flattened "... Error {e}", the same name too), is still looked up.
`harmless_codes` gives the spans found in place on each code line; `line_codes` the predicate
over (line number, code name) that kb/codes.py's `find_lines` passes over, so a code's next line
is its hit. It reads each code line on its own, with those spans and the found harmless
entries' single-line patterns (a line put back from an escaped or JSON one, one past the lines
the evidence keeps or past where the scan stopped reading the entry, alike); no rule explains
"every line after" one.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Callable
from typing import Any

from rocmprov.kb import codes as status_codes
from rocmprov.kb.found import Found
from rocmprov.kb.reflow import plain_marks, plain_spacing, unescape
from rocmprov.kb.target import line_match
from rocmprov.kb.window import Seen, context_ok


def harmless_codes(
    text: str, found: dict[int, Found], harmless: set[int],
    code_lines: dict[int, tuple[int, str]], index: status_codes.Codes,
) -> dict[int, tuple[set[str], list[tuple[int, int]]]]:  # fmt: skip
    """The harmless matches found in place on each code line (line number -> (the codes inside
    the matched spans of the entries `harmless` on that line, those spans on the line)). Only the
    code lines the scan found (`code_lines`: line start -> (number, line)) are read, each within
    a span."""
    starts = sorted(code_lines)
    out: dict[int, tuple[set[str], list[tuple[int, int]]]] = {}
    for i in harmless:
        acc = found[i]
        for lo, hi in acc.seen_spans:
            for s in starts[max(0, bisect_right(starts, lo) - 1) : bisect_left(starts, hi)]:
                number, line = code_lines[s]
                a, b = max(lo, s), min(hi, s + len(line))
                if a < b:
                    names, spans = out.setdefault(number, (set(), []))
                    spans.append((a - s, b - s))
                    names.update(hit.code.name for hit in status_codes.find(text[a:b], index)[0])
    return out


def _outside(line: str, name: str, spans: list[tuple[int, int]],
             index: status_codes.Codes, escaped: bool = False) -> bool:  # fmt: skip
    """The code `name` is written on `line` outside every span, in any spelling the look-up
    reads (its name, HIP's message, an HSA hex value): the spans blanked, the rest looked up;
    `escaped`: the rest also put back (a message before an escaped line break)."""
    chars = list(line)
    for a, b in spans:
        chars[a:b] = " " * (b - a)
    rest = "".join(chars)
    readings = [rest, *unescape(rest)[0].split("\n")] if escaped else [rest]
    return any(name in {h.code.name for h in status_codes.find(r, index)[0]} for r in readings)


# a harmless target's match on one form of a code line: (target, the codes it holds, its place
# in that form: the line as written, or one line put back)
_Held = tuple[Any, frozenset[str], tuple[int, int]]


def line_codes(
    text: str, code_lines: dict[int, tuple[int, str]], harmless: set[int], compiled: Any,
    index: status_codes.Codes, in_place: dict[int, tuple[set[str], list[tuple[int, int]]]],
) -> Callable[[int, str], bool]:  # fmt: skip
    """Whether a status code (line number, name) is a harmless line's: a harmless match on that
    line holds it (found in place, `in_place` from harmless_codes, or a found harmless entry's
    single-line pattern matching the line as written or put back: kb/reflow.py's escapes,
    entities, quote marks, spacing made plain, a JSON string's lines each), and the name is
    written nowhere on that reading of the line outside such a match. The pattern is tried by
    the scan's own check (target.line_match; a context's `unless`/`near` read around the user's
    line). A line past the entry's last evidence line or its MAX_COUNT is read the same way.
    Matches are cached by line text, the codes by match text (a log of one warning repeated, or
    with a time stamp before each, reads its codes once)."""
    own = (t for ts in compiled.targets.values() for t in ts if t.entry in harmless)
    targets = list({id(t): t for t in own if t.source is not None and t.lines == 1}.values())
    where = {number: (start, line) for start, (number, line) in code_lines.items()}
    seen: dict[re.Pattern[str], Seen] = {}
    cache: dict[tuple[str, bool], list[tuple[str, list[_Held]]]] = {}
    names: dict[str, frozenset[str]] = {}  # match text -> the codes it holds

    def held(match: str) -> frozenset[str]:
        if match not in names:
            names[match] = frozenset(h.code.name for h in status_codes.find(match, index)[0])
        return names[match]

    def readings(line: str, loose: bool) -> list[tuple[str, list[_Held]]]:
        """Each form of the line (itself, or the lines put back) with its harmless matches."""
        if (line, loose) not in cache:
            forms = [line]
            if loose:
                forms = [plain_spacing(plain_marks(p)) for p in unescape(line)[0].split("\n")]
            out = []
            for form in forms:
                ms = []
                for target in targets:
                    # the scan's own window: a match holds the anchor, so it starts at most
                    # target.before before a hit and ends within target.width of it
                    anchor, done = target.source.anchor, 0
                    hit = form.find(anchor)
                    while hit >= 0:
                        lo = max(done, hit - target.before)
                        hi = min(len(form), hit + len(anchor) + target.width)
                        m = line_match(target, form, 0, len(form), lo, hi)
                        if m is not None:
                            ms.append((target, held(m.group()), m.span()))
                            done = max(m.end(), hit + 1)
                        hit = form.find(anchor, max(done, hit + 1))
                out.append((form, ms))
            cache[line, loose] = out
        return cache[line, loose]

    plain = not any(t.around for t in targets)  # no context: a line's answer is its text's
    answers: dict[tuple[str, str], bool] = {}

    def check(number: int, name: str) -> bool:
        line = where[number][1]
        if not plain or number in in_place:
            return _check(number, name)
        if (line, name) not in answers:
            answers[line, name] = _check(number, name)
        return answers[line, name]

    def _check(number: int, name: str) -> bool:
        start, line = where[number]
        inside, spans = in_place.get(number, (set(), []))
        # an escaped or JSON line: what no match holds is also read put back (a second copy's
        # message before an escaped line break is unread as written)
        escaped = unescape(line)[0] != line
        for loose in (False, True):
            holds, outside = not loose and name in inside, False
            for form, ms in readings(line, loose):
                kept = [(names_, span) for target, names_, span in ms if context_ok(
                    text, target, *((start + span[0], start + span[1]) if not loose
                                    else (start, start + len(line))), seen)]  # fmt: skip
                holds = holds or any(name in names_ for names_, _ in kept)
                extra = [] if loose else spans
                outside = outside or _outside(
                    form, name, extra + [span for _, span in kept], index, escaped and not loose)
            if holds and not outside:
                return True
        return False

    return check
