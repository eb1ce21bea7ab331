"""Where a pattern's regexes look around an anchor hit: the lines of a window, the lines a
pattern's `unless`/`near` context reads, and the starts a multi-line pattern is tried at; and
the analyses of a regex these need (literal prefix, first characters, line breaks). Pure; used
by kb/scan.py (and `newline_bound` by the table's hygiene test).
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Iterator
from functools import lru_cache
from re import _compiler as sre_compiler  # type: ignore[attr-defined]
from re import _constants as sre_constants  # type: ignore[attr-defined]
from re import _parser as sre_parse  # type: ignore[attr-defined]
from typing import Any, Protocol


class Target(Protocol):
    """What these functions read of a scan target (kb/target.py's Target)."""

    @property
    def lines(self) -> int: ...
    @property
    def around(self) -> int: ...
    @property
    def regex(self) -> re.Pattern[str]: ...
    @property
    def prefix(self) -> str: ...
    @property
    def unless(self) -> re.Pattern[str] | None: ...
    @property
    def near(self) -> re.Pattern[str] | None: ...
    @property
    def firsts(self) -> str: ...
    @property
    def needs(self) -> str: ...

SPAN = 8192  # a match is at most this long: how far around a hit a regex looks
AROUND = 1024  # characters per line of context a pattern's unless/near reads


def widen(text: str, start: int, end: int, extra: int, reach: int) -> tuple[int, int]:
    """Extend a line's bounds by `extra` lines before and after, looking at most `reach`
    characters beyond them (an enormous neighbouring line is cut there). A bound that already
    cuts its own line (an enormous one) stays: reading on to the "next lines" there gave a regex
    40 lines * SPAN of one line (1.2 s on one such line). So a multi-line match is found only
    where its anchor's line reaches at most SPAN either way of the hit, as a one-line match."""
    floor, ceiling = max(0, start - reach), min(len(text), end + reach)
    if start > 0 and text[start - 1] != "\n":
        floor = start
    if end < len(text) and text[end] != "\n":
        ceiling = end
    for _ in range(extra):
        if start <= floor:
            break
        start = max(text.rfind("\n", floor, start - 1) + 1, floor)
    for _ in range(extra):
        if end >= ceiling:
            break
        nxt = text.find("\n", end + 1, ceiling)
        end = ceiling if nxt < 0 else nxt
    return start, end


class Seen:
    """Where one context regex matched, over the stretch of text searched so far: a query next
    to or inside the stretch extends it, one far away starts a new stretch. Matches dense in a
    log cost one pass; a few far apart cost their own lines, not the whole text."""

    def __init__(self) -> None:
        self.lo = self.hi = 0
        self.starts: list[int] = []

    def any_in(self, regex: re.Pattern[str], text: str, lo: int, hi: int) -> bool:
        if lo > self.hi or hi < self.lo:  # far from the stretch: start a new one
            self.lo = self.hi = lo
            self.starts = []
        if lo < self.lo:
            self.starts[:0] = [m.start() for m in regex.finditer(text, lo, self.lo)]
            self.lo = lo
        if hi > self.hi:
            self.starts += [m.start() for m in regex.finditer(text, self.hi, hi)]
            self.hi = hi
        i = bisect_left(self.starts, lo)
        return i < len(self.starts) and self.starts[i] < hi


class Ahead:
    """Where one literal lies in the stretch of text read so far: asked about windows that move
    forward through the text (one Ahead per literal and window size), it reads each character of
    their union once; a window away from the stretch starts a new one (its own length read)."""

    def __init__(self, literal: str) -> None:
        self.literal = literal
        self.lo = self.hi = 0  # the stretch
        self.at = -1  # the first place in it at or after `lo` where the literal lies whole

    def any_in(self, text: str, lo: int, hi: int) -> bool:
        """Whether the literal lies whole in text[lo:hi]."""
        n = len(self.literal)
        if lo < self.lo or lo > self.hi:  # not next to the stretch: start a new one
            self.lo = self.hi = lo
            self.at = -1
        if 0 <= self.at < lo:  # the place found is behind: the next one, up to the stretch's end
            self.at = text.find(self.literal, max(lo, self.at + 1), self.hi)
        if self.at < 0 and hi > self.hi:  # none in the stretch: read on to `hi`
            self.at = text.find(self.literal, max(lo, self.hi - n + 1), hi)
        self.lo, self.hi = lo, max(hi, self.hi)
        return self.at >= 0 and self.at + n <= hi


def context_ok(
    text: str, target: Target, s: int, e: int, seen: dict[re.Pattern[str], Seen]
) -> bool:
    """The lines around a match (target.around either way, each read at most AROUND characters
    deep) hold no `unless` and do hold `near`. A context regex reads each stretch of the text
    once (`seen`), so a log of many such messages costs one pass, not one search of the lines
    around each."""
    if not target.around:
        return True
    # the match's own line, at most SPAN either way on an enormous one, and `around` lines
    # either way of that line however long it is (its bounds are found in C, not read by a regex)
    first = text.rfind("\n", 0, s) + 1
    last = text.find("\n", e)
    last = len(text) if last < 0 else last
    lo, hi = widen(text, first, last, target.around, target.around * AROUND)
    own = max(first, s - SPAN), min(last, e + SPAN)
    spans = [(lo, hi)] if own == (first, last) else [(lo, first), own, (last, hi)]
    for regex, wanted in ((target.unless, False), (target.near, True)):
        found = regex is None or any(
            seen.setdefault(regex, Seen()).any_in(regex, text, a, b) for a, b in spans if a < b
        )
        if regex is not None and found != wanted:
            return False
    return True


def starting_by(
    target: Target, text: str, lo: int, hi: int, pos: int, tried: dict[Target, int]
) -> Iterator[re.Match[str]]:
    """Matches of a multi-line target in text[lo:hi] in order, as finditer gives them. With a
    literal prefix or a short list of first characters (where a match can start), only those
    that start at or before `pos` and after the starts an earlier hit tried (`tried`: where the
    target's untried starts begin). A match from a start holds at most target.lines lines (a
    `\\s+` or `[^}]*` that could run on is cut there), so a start's answer does not depend on
    the hit once a window held all those lines: it is not tried again. One tried in a window cut
    shorter (enormous lines) is. In a log where every line holds the anchor, each line's window
    was tried from every line of it again (26 x 26 lines a line for a 26-line pattern)."""
    needs = target.needs  # a literal every match holds: where it is missing, nothing to try
    if not target.prefix and not target.firsts:
        if not needs or text.find(needs, lo, hi) >= 0:
            yield from target.regex.finditer(text, lo, hi)
        return
    final = True  # every start tried so far had a window that held all its lines
    after = max(lo, tried.get(target, 0))
    for start in _starts(target, text, after, min(hi, pos + max(1, len(target.prefix)))):
        if start < after:
            continue
        stop = lines_end(text, start, target.lines, hi)
        upto = min(hi, stop)
        m = (
            None
            if needs and text.find(needs, start, upto) < 0
            else target.regex.match(text, start, upto)
        )
        # finditer's next match starts after this one: a start inside it is not tried
        after = max(m.end(), start + 1) if m is not None else start + 1
        if final and stop <= hi:
            tried[target] = after  # its answer cannot change: not tried again
        else:  # a window cut short (enormous lines): a later hit's may hold the match
            final = False
        if m is not None:
            yield m


def _starts(target: Target, text: str, lo: int, limit: int) -> Iterator[int]:
    """Where a match of the target could start in text[lo:limit]: its literal prefix's places,
    or the places of the characters it can start with."""
    if target.prefix:
        start = text.find(target.prefix, lo, limit)
        while start >= 0:
            yield start
            start = text.find(target.prefix, start + 1, limit)
        return
    for m in _charset(target.firsts).finditer(text, lo, limit):
        yield m.start()


@lru_cache(maxsize=256)
def _charset(chars: str) -> re.Pattern[str]:
    return re.compile("[" + "".join(re.escape(c) for c in chars) + "]")


def lines_end(text: str, start: int, lines: int, limit: int) -> int:
    """Where the `lines` lines from `start` end (the text's end if it ends first), read no
    further than `limit`: past it, limit + 1."""
    end = start - 1
    for _ in range(lines):
        end = text.find("\n", end + 1, limit)
        if end < 0:
            return len(text) if limit >= len(text) else limit + 1
    return end


_UNBOUNDED = 1 << 30
_NEWLINE_CATEGORIES = frozenset(
    getattr(sre_constants, name)
    for name in ("CATEGORY_SPACE", "CATEGORY_NOT_DIGIT", "CATEGORY_NOT_WORD",
                 "CATEGORY_LINEBREAK", "CATEGORY_UNI_SPACE", "CATEGORY_UNI_NOT_DIGIT",
                 "CATEGORY_UNI_NOT_WORD", "CATEGORY_UNI_LINEBREAK")
)  # fmt: skip


def _class_has_newline(items: Any) -> bool:
    negate, hit = False, False
    for op, arg in items:
        if op is sre_constants.NEGATE:
            negate = True
        elif op is sre_constants.LITERAL:
            hit = hit or arg == 10
        elif op is sre_constants.RANGE:
            hit = hit or arg[0] <= 10 <= arg[1]
        elif op is sre_constants.CATEGORY:
            hit = hit or arg in _NEWLINE_CATEGORIES
        else:  # a charset bitmap: take it as holding a newline
            hit = True
    return hit != negate


def _newlines(items: Any, dotall: bool, groups: dict[int, int]) -> int:
    """The most line breaks a match of the parsed (sub)pattern can hold or look ahead over.
    `groups`: each capture group's count so far, which a back-reference to it repeats."""
    total = 0
    for op, arg in items:
        if op is sre_constants.LITERAL:
            total += arg == 10
        elif op is sre_constants.NOT_LITERAL:
            total += arg != 10
        elif op is sre_constants.ANY:
            total += dotall
        elif op is sre_constants.IN:
            total += _class_has_newline(arg)
        elif op in (sre_constants.MAX_REPEAT, sre_constants.MIN_REPEAT,
                    getattr(sre_constants, "POSSESSIVE_REPEAT", None)):  # fmt: skip
            width = _newlines(arg[2], dotall, groups)
            if width:
                total += _UNBOUNDED if arg[1] is sre_constants.MAXREPEAT else width * arg[1]
        elif op is sre_constants.SUBPATTERN:
            add, remove = arg[1], arg[2]
            inner = (dotall or bool(add & re.DOTALL)) and not remove & re.DOTALL
            count = _newlines(arg[3], inner, groups)
            if arg[0] is not None:
                groups[arg[0]] = max(groups.get(arg[0], 0), count)
            total += count
        elif op is sre_constants.BRANCH:
            total += max(_newlines(b, dotall, groups) for b in arg[1])
        elif op is getattr(sre_constants, "ATOMIC_GROUP", None):
            total += _newlines(arg, dotall, groups)
        elif op in (sre_constants.ASSERT, sre_constants.ASSERT_NOT):
            total += _newlines(arg[1], dotall, groups) if arg[0] > 0 else 0  # a lookahead reads on
        elif op is sre_constants.GROUPREF:  # a group defined before it (Python's rule)
            total += groups.get(arg, _UNBOUNDED)
        elif op is sre_constants.GROUPREF_EXISTS:  # (?(1)yes|no)
            total += max(_newlines(arg[1], dotall, groups),
                         _newlines(arg[2], dotall, groups) if arg[2] else 0)  # fmt: skip
    return min(total, _UNBOUNDED)


@lru_cache(maxsize=4096)
def newline_bound(pattern: str, flags: int) -> int:
    """The most line breaks a match of `pattern` can span (or look ahead over). The scan cuts a
    match at its declared lines (starting_by); the table's hygiene test checks that no pattern
    could run on further (tests/test_kb_hygiene.py)."""
    return _newlines(sre_parse.parse(pattern, flags), bool(flags & re.DOTALL), {})


MAX_FIRSTS = 40  # more possible first characters than this: the regex engine's own scan


def _firsts(items: Any) -> tuple[frozenset[str] | None, bool]:
    """(the characters a match of the parsed items can start with, or None when unknown; whether
    the items can match nothing). Zero-width items (\\b, ^, lookarounds) are passed over."""
    out: set[str] = set()
    for op, arg in items:
        if op is sre_constants.AT or op in (sre_constants.ASSERT, sre_constants.ASSERT_NOT):
            continue
        chars, empty = _first_of(op, arg)
        if chars is None:
            return None, False
        out |= chars
        if not empty:
            return frozenset(out), False
    return frozenset(out), True


def _first_of(op: Any, arg: Any) -> tuple[frozenset[str] | None, bool]:
    if op is sre_constants.LITERAL:
        return frozenset(chr(arg)), False
    if op is sre_constants.IN:
        if any(o is not sre_constants.LITERAL for o, _a in arg):
            return None, False  # a range, a category or a negated class: too broad to list
        return frozenset(chr(a) for _o, a in arg), False
    if op is sre_constants.SUBPATTERN:
        if arg[1] & re.IGNORECASE:
            return None, False
        return _firsts(arg[3])
    if op is getattr(sre_constants, "ATOMIC_GROUP", None):
        return _firsts(arg)
    if op is sre_constants.BRANCH:
        out: set[str] = set()
        empty = False
        for branch in arg[1]:
            chars, none = _firsts(branch)
            if chars is None:
                return None, False
            out |= chars
            empty = empty or none
        return frozenset(out), empty
    if op in (sre_constants.MAX_REPEAT, sre_constants.MIN_REPEAT,
              getattr(sre_constants, "POSSESSIVE_REPEAT", None)):  # fmt: skip
        chars, empty = _firsts(arg[2])
        return chars, empty or arg[0] == 0
    return None, False


@lru_cache(maxsize=4096)
def literal_prefix(pattern: str, flags: int) -> str:
    """The literal every match of `pattern` starts with ('' when it has none). Zero-width
    assertions before it (`\\b`, `^`) are passed over: a match still starts at the literal
    (`\\bring comp_...` is tried at each "ring ", not at every "r" of a line)."""
    parsed = sre_parse.parse(pattern, flags)
    skip = 0
    while skip < len(parsed) and parsed[skip][0] is sre_constants.AT:
        skip += 1
    chars, _skip, _all = sre_compiler._get_literal_prefix(parsed[skip:], flags)
    return "".join(map(chr, chars))


def _runs(items: Any, out: list[str], run: str) -> str:
    """Literal runs of the parsed items that every match consumes, into `out`; returns the run
    still open at their end."""
    for op, arg in items:
        if op is sre_constants.LITERAL:
            run += chr(arg)
        elif op is sre_constants.SUBPATTERN and not arg[1] and not arg[2]:  # a plain group
            run = _runs(arg[3], out, run)
        else:  # anything else may match other text (or nothing): the run ends
            out.append(run)
            run = ""
    return run


@lru_cache(maxsize=4096)
def required_literals(pattern: str, flags: int) -> tuple[str, ...]:
    """Literals that every match of `pattern` holds in its matched text (not in a look-around),
    longest first; none for a case-insensitive pattern. Where one is missing from a window, no
    match of the pattern can lie in that window."""
    parsed = sre_parse.parse(pattern, flags)
    if parsed.state.flags & re.IGNORECASE:
        return ()
    out: list[str] = []
    out.append(_runs(parsed, out, ""))
    return tuple(sorted((run for run in out if run), key=len, reverse=True))


@lru_cache(maxsize=4096)
def first_chars(pattern: str, flags: int) -> str:
    """The characters every match of `pattern` starts with, sorted ('' when not known, when it
    can match nothing, or when there are more than MAX_FIRSTS of them)."""
    if flags & re.IGNORECASE:
        return ""
    chars, empty = _firsts(sre_parse.parse(pattern, flags))
    if chars is None or empty or len(chars) > MAX_FIRSTS:
        return ""
    return "".join(sorted(chars))
