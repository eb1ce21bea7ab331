"""Where a pattern's regexes look around an anchor hit: the lines of a window, the lines a
pattern's `unless`/`near` context reads, and the starts a multi-line pattern is tried at (the
analyses of a regex these read, its literal prefix, first characters and line breaks, are
kb/regexshape.py's). Pure; used by kb/scan.py.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Iterator
from functools import lru_cache
from typing import Protocol


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
    @property
    def head(self) -> re.Pattern[str] | None: ...

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
    was tried from every line of it again (26 x 26 lines a line for a 26-line pattern).
    Every start on one line has the same lines (to the same line end), so where they lack a
    literal every match holds, or where a `head` target failed from a start at which its head
    matched (regexshape.line_head), the rest of that line is passed over: 15 lines of 8,000
    characters of "ROCm " had 24,000 starts each read on up to 15 lines (session 30). A later
    hit still tries that line's starts past this hit's (a failed head only settles them for
    windows as long as this one: tests/test_kb_line_heads.py)."""
    needs, head = target.needs, target.head  # needs: a literal every match holds
    if not target.prefix and not target.firsts:
        if not needs or text.find(needs, lo, hi) >= 0:
            yield from (target.regex.finditer(text, lo, hi) if head is None
                        else _by_head(target.regex, head, text, lo, hi))  # fmt: skip
        return
    final = True  # every start tried so far had a window that held all its lines
    after = max(lo, tried.get(target, 0))
    ends, held = LineEnds(text, after, hi), Next(text, needs, hi)
    limit = min(hi, pos + max(1, len(target.prefix)))
    last = limit - max(1, len(target.prefix)) + 1  # past this hit's last start
    start = _next_start(target, text, after, limit)
    while start >= 0:
        stop = ends.end(start, target.lines)
        upto = min(hi, stop)
        lacks = bool(needs) and not held.within(start, upto)
        if lacks:  # nor in the lines of a later start on this line, in any window
            m, rest_of_line = None, True
        elif head is not None and head.match(text, start, upto) is None:
            m, rest_of_line = None, False  # no match starts where its head does not
        else:  # a head target that fails here fails from every later start on the line
            m = target.regex.match(text, start, upto)
            rest_of_line = m is None and head is not None
        # finditer's next match starts after this one: a start inside it is not tried
        after = max(m.end(), start + 1) if m is not None else start + 1
        settled = after
        if rest_of_line:
            after = max(after, ends.end(start, 1) + 1)
            # a failed head settles the line's later starts for windows reaching `upto` only:
            # a later hit's window cut shorter (an enormous line) ends the regex elsewhere
            # (`\b`, `$` at the cut), so starts past this hit's are left to it, as before
            settled = after if lacks else min(after, last)
        if final and stop <= hi:
            tried[target] = settled  # its answer cannot change: not tried again
        else:  # a window cut short (enormous lines): a later hit's may hold the match
            final = False
        if m is not None:
            yield m
        start = _next_start(target, text, after, limit)


def _by_head(
    regex: re.Pattern[str], head: re.Pattern[str], text: str, lo: int, hi: int
) -> Iterator[re.Match[str]]:
    """regex.finditer(text, lo, hi) for a regex with a line_head: tried where its head matches,
    once a line where it fails there."""
    at = lo
    while (h := head.search(text, at, hi)) is not None:
        m = regex.match(text, h.start(), hi)
        if m is not None:
            yield m
            at = max(m.end(), h.start() + 1)
        else:
            at = text.find("\n", h.start(), hi) + 1
            if at <= 0:
                return


def _next_start(target: Target, text: str, after: int, limit: int) -> int:
    """Where a match of the target could next start in text[after:limit] (-1: nowhere): its
    literal prefix's next place, or the next of the characters it can start with."""
    if target.prefix:
        return text.find(target.prefix, after, limit)
    m = _charset(target.firsts).search(text, after, limit)
    return -1 if m is None else m.start()


@lru_cache(maxsize=256)
def _charset(chars: str) -> re.Pattern[str]:
    return re.compile("[" + "".join(re.escape(c) for c in chars) + "]")


class LineEnds:
    """lines_end for the ascending starts of one window: the window's line ends are read once.
    Each start read on to its own `lines`-th line end (and to the next place of the literal its
    matches need, Next): lines x the line length a start, 16 lines of 8,000 characters at every
    "a" of a window for a pattern that can start with one (docs/benchmarks.md, session 30)."""

    def __init__(self, text: str, lo: int, limit: int) -> None:
        self.text, self.limit = text, limit
        self.ends: list[int] = []  # the line ends read, ascending
        self.read = lo  # every line end in [lo, read) is in `ends`
        self.first = 0  # where the last start's line ends began in `ends`

    def end(self, start: int, lines: int) -> int:
        """lines_end(text, start, lines, limit), for a start at or after the last one."""
        ends = self.ends
        self.first = i = bisect_left(ends, start, self.first)
        self.read = max(self.read, start)
        while len(ends) < i + lines and self.read < self.limit:
            nxt = self.text.find("\n", self.read, self.limit)
            self.read = self.limit if nxt < 0 else nxt + 1
            if nxt >= 0:
                ends.append(nxt)
        if len(ends) >= i + lines:
            return ends[i + lines - 1]
        return len(self.text) if self.limit >= len(self.text) else self.limit + 1


class Next:
    """Where a literal next lies, for ascending starts (read once along the window, as Ahead)."""

    def __init__(self, text: str, literal: str, limit: int) -> None:
        self.text, self.literal, self.limit = text, literal, limit
        self.at = -2  # the first place at or after the last start read from (-1: none by limit)

    def within(self, start: int, upto: int) -> bool:
        """Whether the literal lies whole in text[start:upto] (upto <= limit)."""
        if self.at == -2 or 0 <= self.at < start:
            self.at = self.text.find(self.literal, start, self.limit)
        return self.at >= 0 and self.at + len(self.literal) <= upto


def lines_end(text: str, start: int, lines: int, limit: int) -> int:
    """Where the `lines` lines from `start` end (the text's end if it ends first), read no
    further than `limit`: past it, limit + 1."""
    return LineEnds(text, start, limit).end(start, lines)
