"""The matcher's one pass over a text: anchors found in one pass (kb/literals.py: Hyperscan, or a
trie-shaped regex), the full regexes of the entries that own an anchor run only near its hits.
Pure.

Cost is linear in the text. Each line's bounds are found once (not once per hit). A single-line
regex is searched from the most characters its match can hold before its anchor (kb/anchors.py,
reach_before) to its longest possible match (at most _LINE_SPAN = 4 KiB) after an anchor hit and
_CHUNK beyond, and the hits that search covered are skipped; a multi-line one once per line,
within _SPAN a line around the hit, from each start once (kb/window.py). So a match longer than
4 KiB on a line is not found (no real error line is that long; evidence is cut at MAX_LINE), and
an enormous line's evidence is shown from just before its match, cut at MAX_LINE characters. A
pattern may not begin with an unbounded repeat (tests/test_kb_hygiene.py): the regex engine would
retry it from every position of a long run of its characters.

A log dense with hits of a multi-line pattern's anchor (every line, none completing a match)
costs little a line: a hit whose window lacks a literal its pattern needs (its prefix, or one
every match holds: window.required_literals) is passed over without trying a start there (the
literal's places are read once as the windows move on: window.Ahead), and a start is matched
only where its own lines hold that literal (120,000 Vulkan ErrorDeviceLost lines: 9 s -> about
2 s; benchmarks/explain_bench.py --dense).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from re import _parser as sre_parse  # type: ignore[attr-defined]

from rocmprov.kb import codes as status_codes
from rocmprov.kb.anchors import choose_anchors, reach_before
from rocmprov.kb.literals import Finder, finder, over
from rocmprov.kb.redact import redactable
from rocmprov.kb.table import Pattern, Table
from rocmprov.kb.window import SPAN as _SPAN
from rocmprov.kb.window import (
    Ahead,
    Seen,
    context_ok,
    first_chars,
    literal_prefix,
    required_literals,
    starting_by,
    widen,
)

MAX_EVIDENCE = 10  # evidence lines kept per entry
EVIDENCE = "evidence"  # a multi-line pattern's group naming the lines it shows
MAX_COUNT = 1000  # occurrences counted per entry; past that the entry's anchors leave the scan
MAX_LINE = 4000  # characters of a line kept as evidence
_LINE_SPAN = 4096  # the longest match of a single-line regex (_SPAN made a 4 MiB line 1.3x slower)
_CHUNK = 4096  # searched past a hit's own reach, so that the next hits on the line are skipped
_LONG = 65536  # a line this long gets its repeated anchors skipped by a narrower finder ...
# ... once this many of its hits were skipped one by one, then again after twice as many: a
# narrower finder costs every other anchor compiled again (~0.3 s as a regex trie), and a line of
# 300 different messages made one at each anchor done (156 on a 100 KB line, a minute in all)
_SKIPS = 1024
_LEAD = 100  # characters of an enormous line shown before its match
CODE_LINE = -1  # a scan target that marks a line for the status-code look-up
LOCALE_HIT = -2  # a scan target that marks a localised message's literal (kb/locale.py)
_NEVER = re.compile(r"(?!)")
# A line cut at a width (a terminal's 80 columns, an editor's or a formatter's wrap near 70-79,
# seen in real pastes) is long; a short line that ends where a pattern could be cut is whole.
# Below this length only the pattern as written counts, unless the line ends with an ellipsis.
MIN_CUT = 60


def _ellipsis(text: str, end: int) -> bool:
    tail = text[max(0, end - 4) : end].rstrip("\r")
    return tail.endswith(("...", "\u2026"))


def line_match(
    target: _Target, text: str, start: int, end: int, lo: int, hi: int
) -> re.Match[str] | None:
    """A single-line target's first match in text[lo:hi], on the line text[start:end]: the
    pattern as written on a line too short to be one a terminal cut (the scan's own check;
    kb/harmlesscodes.py reads a code line with it too). Its context (`unless`/`near`) is the
    caller's: window.context_ok."""
    regex = target.regex
    if target.whole is not None and end - start < MIN_CUT and not _ellipsis(text, end):
        regex = target.whole  # too short to be a line a terminal cut
    return regex.search(text, lo, hi)


@dataclass(frozen=True, eq=False)  # by identity: one per (entry, pattern) of a compiled table
class _Target:
    """One pattern as the scan runs it. Its regexes are compiled on the first hit of its anchor,
    not when the table is: a log touches a few dozen of the table's patterns, and compiling all
    of them took seconds at every start of `rocmprov explain`."""

    entry: int
    pattern: int
    source: Pattern | None  # None: a status-code line marker (CODE_LINE) or LOCALE_HIT
    lines: int
    around: int = 0  # how many lines either way `unless` / `near` read

    @cached_property
    def regex(self) -> re.Pattern[str]:
        return _NEVER if self.source is None else self.source.compiled

    @cached_property
    def width(self) -> int:
        """The longest match the regex can make (at most _LINE_SPAN on one line, _SPAN on more)."""
        span = _LINE_SPAN if self.lines == 1 else _SPAN
        return min(span, sre_parse.parse(self.regex.pattern).getwidth()[1])

    @cached_property
    def before(self) -> int:
        """The most characters a match can hold before its anchor (at most `width`): a
        single-line regex is searched for from that far before a hit."""
        if self.source is None:
            return 0
        own = self.source.compiled  # and as written: `whole` (cut_at_line_end adds after it)
        reach = [reach_before(regex, self.source.anchor, own.flags)
                 for regex in {own.pattern, self.source.regex}]  # fmt: skip
        known = [r for r in reach if r is not None]
        return min(self.width, max(known)) if len(known) == len(reach) else self.width

    @cached_property
    def prefix(self) -> str:
        """The literal every match of `regex` starts with ('' when it has none): a multi-line
        pattern is tried only where it could start at or before its anchor's hit."""
        return "" if self.source is None else literal_prefix(self.regex.pattern, self.regex.flags)

    @cached_property
    def needs(self) -> str:
        """The longest literal every match holds besides its prefix ('' when none is known)."""
        if self.source is None:
            return ""
        own = self.source.compiled  # `regex` itself (read here, not through a wrapper of it)
        runs = required_literals(own.pattern, own.flags)
        return next((run for run in runs if run not in self.prefix), "")

    @cached_property
    def musts(self) -> tuple[str, ...]:
        """The literals every match holds (its prefix, `needs`): one missing near a hit rules
        out every match around it, before its window is even found."""
        return tuple(x for x in (self.prefix, self.needs) if x)

    @cached_property
    def firsts(self) -> str:
        """The characters a match can start with, where it has no literal prefix."""
        if self.source is None or self.prefix:
            return ""
        return first_chars(self.regex.pattern, self.regex.flags)

    @cached_property
    def whole(self) -> re.Pattern[str] | None:
        """The pattern as written (a blanked-out value allowed, kb/redact.py), where `regex` also
        takes a line cut after the anchor: used on a line too short to be one a terminal cut
        (kb/prefixes.py, cut_at_line_end)."""
        written = redactable(self.source.regex) if self.source is not None else ""
        if self.source is None or self.lines > 1 or self.regex.pattern == written:
            return None
        return re.compile(written)

    @cached_property
    def unless(self) -> re.Pattern[str] | None:
        """The lines around a match rule the cause out ..."""
        return re.compile(self.source.unless) if self.source and self.source.unless else None

    @cached_property
    def near(self) -> re.Pattern[str] | None:
        """... or must rule it in."""
        return re.compile(self.source.near) if self.source and self.source.near else None


@dataclass(frozen=True, eq=False)  # hashed by identity (it is cached, and keys a cache)
class _Compiled:
    scan: Finder
    targets: dict[str, tuple[_Target, ...]]  # anchor -> patterns it triggers (incl. prefixes)
    anchors: tuple[str, ...] = ()
    engine: str = "auto"  # what finds the anchors (kb/literals.py); "re" in tests


@lru_cache(maxsize=8)
def compile_table(
    table: Table, codes: status_codes.Codes | None = None, localised: tuple[str, ...] = ()
) -> _Compiled:
    """The table's anchors as one finder; `localised`: literals of messages in the user's
    language (kb/locale.py) that join the same pass, so that English text pays no pass of its
    own to learn it holds none (`scan`'s `localised`)."""
    own: dict[str, list[_Target]] = {}
    for ei, entry in enumerate(table.entries):
        for pi, pattern in enumerate(entry.patterns):
            target = _Target(ei, pi, pattern, pattern.lines, pattern.around)
            own.setdefault(pattern.anchor, []).append(target)
    if codes is not None:  # lines worth a look for status codes: their literals join the scan
        taken = {a[0] for a in own}
        for pi, anchor in enumerate(choose_anchors([list(r) for r in codes.anchor_runs], taken)):
            if anchor:
                own.setdefault(anchor, []).append(_Target(CODE_LINE, pi, None, 1))
    for word in localised:
        own.setdefault(word, []).append(_Target(LOCALE_HIT, 0, None, 1))
    anchors = sorted(own)
    # the trie returns the longest anchor at a position: a hit also fires its prefixes
    targets = {a: tuple(t for n in range(len(a)) for t in own.get(a[: n + 1], ())) for a in anchors}
    found = finder(anchors)  # the narrower finders use the engine that loaded here
    engine = "re" if isinstance(found, re.Pattern) else "auto"
    return _Compiled(scan=found, targets=targets, anchors=tuple(anchors), engine=engine)


def _without(compiled: _Compiled, full: set[int]) -> Finder | None:
    return _narrower(compiled, frozenset(full))


@lru_cache(maxsize=32)
def _narrower(
    compiled: _Compiled, full: frozenset[int], skip: frozenset[str] = frozenset()
) -> Finder | None:
    """The scan's finder without the anchors whose every target belongs to a saturated entry (a
    harmless line repeated on every other line of a log costs nothing more) and without the
    anchors in `skip`, or None when no anchor is left."""
    live = [
        a for a in compiled.anchors
        if a not in skip and any(t.entry not in full for t in compiled.targets[a])
    ]  # fmt: skip
    return finder(live, compiled.engine) if live else None


@dataclass
class Found:
    first_line: int
    lines: list[int] = field(default_factory=list)
    evidence: list[str] = field(default_factory=list)
    captures: dict[str, str] = field(default_factory=dict)
    count: int = 0
    seen_spans: set[tuple[int, int]] = field(default_factory=set)
    # beside each evidence line: where on its line it starts and where the match ends there
    # (-1: not known), so a localised line's own words are found without a search (matcher.py)
    at: list[tuple[int, int]] = field(default_factory=list)


def clip(line: str) -> str:
    line = line.rstrip("\r")
    return line if len(line) <= MAX_LINE else line[:MAX_LINE] + "..."


def scan(
    text: str, compiled: _Compiled, code_lines: dict[int, tuple[int, str]] | None = None,
    localised: list[int] | None = None,
) -> dict[int, Found]:  # fmt: skip
    """Entries found in `text`; lines with a status code's literal go into `code_lines`
    (line start -> (line number, line)); where a localised message's literal is (compile_table's
    `localised`) goes into `localised` (its first place only: that one says to translate)."""
    found: dict[int, Found] = {}
    seen: dict[re.Pattern[str], Seen] = {}  # where each context regex matched (unless/near)
    ahead: dict[tuple[str, int], Ahead] = {}  # where literals that matches need lie
    searched: set[tuple[int, int, int]] = set()  # (entry, pattern, line start): done once
    tried: dict[_Target, int] = {}  # a multi-line target's starts tried so far (starting_by)
    covered: dict[tuple[int, int], tuple[int, int]] = {}  # (entry, pattern) -> (line, up to)
    done_on_line: set[str] = set()  # anchors with nothing left to do on the current line
    windows: dict[tuple[int, int, int], tuple[int, int]] = {}  # the current line's (widen)
    full: set[int] = set()  # entries counted MAX_COUNT times: not searched any more
    search = over(compiled.scan, text)
    line_no, counted_to = 1, 0
    start, end = 0, -1  # the current line's bounds: found once per line, not once per hit
    skipped, jump_at = 0, _SKIPS  # hits of done anchors skipped on the line; when to jump
    hit = search(text)
    while hit is not None:
        pos = hit.start()
        line_no += text.count("\n", counted_to, pos)
        counted_to = pos
        if pos > end:  # a new line: look back only as far as the previous line's end
            start = text.rfind("\n", max(end, 0), pos) + 1
            nxt = text.find("\n", pos)
            end = len(text) if nxt < 0 else nxt
            done_on_line.clear()
            windows.clear()
            skipped, jump_at = 0, _SKIPS
        anchor = hit.group()
        if anchor in done_on_line:  # every target of it is done for this line
            hit = search(text, pos + 1)
            skipped += 1
            if hit is not None and hit.start() < end and end - pos > _LONG and skipped >= jump_at:
                # anchors repeated along an enormous line: skip their hits there in C
                jump_at *= 2
                rest = _narrower(compiled, frozenset(full), frozenset(done_on_line))
                hit = over(rest, text)(text, pos + 1, end) if rest is not None else None
                hit = hit or search(text, end)
            continue
        targets = compiled.targets[anchor]
        rest_done = True
        for target in targets:
            if target.entry == CODE_LINE:
                if code_lines is not None and start not in code_lines:
                    code_lines[start] = (line_no, text[start : min(end, start + MAX_LINE)])
                continue
            if target.entry == LOCALE_HIT:
                if localised is not None and not localised:
                    localised.append(pos)
                continue
            if target.entry in full:
                continue
            if target.lines == 1:
                # a match holds the anchor, so it starts at most target.before before the hit and
                # ends within target.width of it: search there and CHUNK beyond, then skip the
                # hits whose matches that search covered
                key1 = (target.entry, target.pattern)
                line, upto = covered.get(key1, (-1, -1))
                if line == start and pos <= upto:
                    rest_done = rest_done and upto == end
                    continue
                lo, hi = max(start, pos - target.before), min(end, pos + target.width + _CHUNK)
                m = line_match(target, text, start, end, lo, hi)
                if m is not None and not context_ok(text, target, m.start(), m.end(), seen):
                    covered[key1] = (start, end)  # the context rules this line's match out
                    continue
                if m is None:
                    covered[key1] = (start, end if hi == end else hi - target.width)
                    rest_done = rest_done and hi == end
                    continue
                covered[key1] = (start, end)  # one match a line is counted
                a = start if m.end() - start <= MAX_LINE else max(start, m.start() - _LEAD)
                shown = [text[a : min(end, a + MAX_LINE + 1)]]
                _record(found, target, m, line_no, shown, (a - start, m.end() - start))
            else:
                key = (target.entry, target.pattern, start)
                if key in searched:
                    continue
                searched.add(key)
                # each line of a match is at most _SPAN long, the anchor's own line too: an
                # enormous line gives the regex _SPAN either way of the hit, not lines * _SPAN
                bounds = (max(start, pos - _SPAN), min(end, pos + _SPAN), target.lines)
                window = windows.get(bounds)
                if window is None:  # the targets of one hit with as many lines share it
                    reach = target.lines * _SPAN
                    window = windows[bounds] = widen(text, *bounds[:2], target.lines - 1, reach)
                lo, hi = window
                if not _holds(ahead, target, text, lo, hi):
                    continue  # a literal every match holds is not in the window: nothing to try
                for m in starting_by(target, text, lo, hi, pos, tried):
                    if m.start() > pos:
                        break
                    if pos < m.end():  # the match covers this anchor hit
                        if not context_ok(text, target, m.start(), m.end(), seen):
                            break
                        # a pattern that reads lines around its message only to rule a
                        # context out shows just its `evidence` group's lines
                        s0, e0 = m.span(EVIDENCE) if EVIDENCE in m.re.groupindex else m.span()
                        s0, e0 = (m.start(), m.end()) if s0 < 0 else (s0, e0)
                        first = line_no - text.count("\n", s0, pos) + text.count("\n", pos, s0)
                        a = text.rfind("\n", lo, s0) + 1 or lo
                        b = text.find("\n", max(e0 - 1, s0), hi)
                        own = 0 if text[a - 1 : a] in "\n" else a - start if a >= start else -1
                        shown = text[a : hi if b < 0 else b].split("\n")
                        _record(found, target, m, first, shown, (own, -1))
                        break
            if found.get(target.entry) is not None and found[target.entry].count >= MAX_COUNT:
                full.add(target.entry)
                if all(t.entry in full for t in targets):
                    narrower = _without(compiled, full)
                    if narrower is None:
                        return found
                    search = over(narrower, text)
        if rest_done:
            done_on_line.add(anchor)
        hit = search(text, pos + 1)
    return found


def _holds(ahead: dict[tuple[str, int], Ahead], target: _Target, text: str, lo: int,
           hi: int) -> bool:  # fmt: skip
    """text[lo:hi] holds every literal that a match of `target` holds (each literal's places are
    read once as windows of its size move on: `ahead`, one per literal and window size)."""
    for literal in target.musts:
        near = ahead.get((literal, target.lines))
        if near is None:
            near = ahead[literal, target.lines] = Ahead(literal)
        if not near.any_in(text, lo, hi):
            return False
    return True


def _record(
    found: dict[int, Found], target: _Target, m: re.Match[str], first: int, lines: list[str],
    at: tuple[int, int] = (-1, -1),
) -> None:  # fmt: skip
    """`at`: where the first of `lines` starts on its line, and where the match ends on it (the
    others start their lines)."""
    acc = found.get(target.entry)
    if acc is None:
        acc = found[target.entry] = Found(first_line=first)
    span = (m.start(), m.end())
    if span in acc.seen_spans:
        return
    acc.seen_spans.add(span)
    acc.count += 1
    for key, value in m.groupdict().items():
        if value is not None and key not in acc.captures:
            acc.captures[key] = value
    for offset, line in enumerate(lines):
        number = first + offset
        if len(acc.lines) >= MAX_EVIDENCE:
            break
        if number not in acc.lines:
            acc.lines.append(number)
            acc.evidence.append(clip(line))
            acc.at.append(at if offset == 0 else (0, -1))
