"""The matcher's one pass over a text: anchors found in one pass (kb/compiled.py: one finder of
every anchor, kb/literals.py: Hyperscan, or a trie-shaped regex), the full regexes of the
entries that own an anchor (kb/target.py) run only near its hits; what it finds is kept in a
Found per entry (kb/found.py). Pure.

Cost is linear in the text. Each line's bounds are found once (not once per hit). A single-line
regex is searched from the most characters its match can hold before its anchor (kb/anchors.py,
reach_before) to its longest possible match (at most target.LINE_SPAN = 4 KiB) after an anchor
hit and _CHUNK beyond, and the hits that search covered are skipped; a multi-line one once per
line, within _SPAN a line around the hit, from each start once (kb/window.py). So a match longer
than 4 KiB on a line is not found (no real error line is that long; evidence is cut at MAX_LINE),
and an enormous line's evidence is shown from just before its match, cut at MAX_LINE characters.
A pattern may not begin with an unbounded repeat (tests/test_kb_hygiene.py): the regex engine
would retry it from every position of a long run of its characters.

A log dense with hits of a multi-line pattern's anchor (every line, none completing a match)
costs little a line: a hit whose window lacks a literal its pattern needs (its prefix, or one
every match holds: regexshape.required_literals) is passed over without trying a start there (the
literal's places are read once as the windows move on: window.Ahead), and a start is matched
only where its own lines hold that literal (120,000 Vulkan ErrorDeviceLost lines: 9 s -> about
2 s; benchmarks/explain_bench.py --dense).
"""

from __future__ import annotations

import re

from rocmprov.kb.compiled import Compiled, compile_table, narrower, without
from rocmprov.kb.found import MAX_EVIDENCE, MAX_LINE, Found, clip, record
from rocmprov.kb.literals import over
from rocmprov.kb.target import CODE_LINE, LOCALE_HIT, Target, line_match
from rocmprov.kb.window import SPAN as _SPAN
from rocmprov.kb.window import Ahead, Seen, context_ok, starting_by, widen

# what other modules and tests import from here
__all__ = [
    "CODE_LINE", "LOCALE_HIT", "MAX_COUNT", "MAX_EVIDENCE", "MAX_LINE", "Found", "clip",
    "compile_table", "line_match", "scan",
]  # fmt: skip

EVIDENCE = "evidence"  # a multi-line pattern's group naming the lines it shows
MAX_COUNT = 1000  # occurrences counted per entry; past that the entry's anchors leave the scan
_CHUNK = 4096  # searched past a hit's own reach, so that the next hits on the line are skipped
_LONG = 65536  # a line this long gets its repeated anchors skipped by a narrower finder ...
# ... once this many of its hits were skipped one by one, then again after twice as many: a
# narrower finder costs every other anchor compiled again (~0.3 s as a regex trie), and a line of
# 300 different messages made one at each anchor done (156 on a 100 KB line, a minute in all)
_SKIPS = 1024
_LEAD = 100  # characters of an enormous line shown before its match


def scan(
    text: str, compiled: Compiled, code_lines: dict[int, tuple[int, str]] | None = None,
    localised: list[int] | None = None,
) -> dict[int, Found]:  # fmt: skip
    """Entries found in `text`; lines with a status code's literal go into `code_lines`
    (line start -> (line number, line)); where a localised message's literal is (compile_table's
    `localised`) goes into `localised` (its first place only: that one says to translate)."""
    found: dict[int, Found] = {}
    seen: dict[re.Pattern[str], Seen] = {}  # where each context regex matched (unless/near)
    ahead: dict[tuple[str, int], Ahead] = {}  # where literals that matches need lie
    searched: set[tuple[int, int, int]] = set()  # (entry, pattern, line start): done once
    tried: dict[Target, int] = {}  # a multi-line target's starts tried so far (starting_by)
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
                rest = narrower(compiled, frozenset(full), frozenset(done_on_line))
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
                record(found, target, m, line_no, shown, (a - start, m.end() - start))
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
                        record(found, target, m, first, shown, (own, -1))
                        break
            if found.get(target.entry) is not None and found[target.entry].count >= MAX_COUNT:
                full.add(target.entry)
                if all(t.entry in full for t in targets):
                    live = without(compiled, full)
                    if live is None:
                        return found
                    search = over(live, text)
        if rest_done:
            done_on_line.add(anchor)
        hit = search(text, pos + 1)
    return found


def _holds(ahead: dict[tuple[str, int], Ahead], target: Target, text: str, lo: int,
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
