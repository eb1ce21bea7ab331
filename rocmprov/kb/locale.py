"""Messages in the user's language put back in English before matching. Pure (apart from reading
the packaged phrases once).

apt, dpkg and the dynamic loader (glibc) print their messages in the user's locale: "E: Paket
rocm-dkms kann nicht gefunden werden.", "libamdhip64.so.6: Kann die Shared-Object-Datei nicht
öffnen: Datei oder Verzeichnis nicht gefunden". The table's patterns are English; `english(text)`
replaces each localised phrase by its English message, from the programs' own translations
(rocmprov/data/kb/locales.json, made by kb/localefile.py from their po files at pinned commits,
twelve locales; its docstring says which msgids and which translations are kept).

The rule:
- A phrase is one line of a message: a localised msgstr line, its format placeholders (%s, %d,
  %1$s) matching any text on that line (MAX_ARG characters at most; one that starts the msgstr,
  or follows only such ones and spaces, matches one word; one followed by literal text, the text
  up to that literal's first place, tried once: no MAX_ARG ** 2 backtracking between two
  placeholders a space apart, "%s %s"), is replaced by its msgid line with
  the same arguments in the msgid's order. No line is added or removed: a match never crosses a
  line end, so the line numbers of matches are those of the user's text, and `translate` says
  which lines changed.
- Whole message phrases only: a short msgstr (apt's "Depends" = "依存", a strerror text) is
  replaced only inside the literal text its program prints around it (" : Hängt ab von: ",
  ": Keine Berechtigung"); a word alone ("Fehler") never is.
- Where two phrases could match at one place, the one with more literal text wins ("Could not
  get lock %s. It is held by process %d" over "Could not get lock %s"), even where the longer
  one's anchor lies later on the line: at a match, the phrases whose fixed text starts with the
  matched one's (`Phrase.longer`) are tried first at the same start, longest first.
- English text costs (almost) nothing: each phrase's longest literal (`Phrases.words`) joins the
  table's own anchors in kb/scan.py's one pass (kb/matcher.py), and only a text where one is
  found is translated. `translate` itself is one pass of a multi-literal finder (kb/literals.py:
  Hyperscan where it loads); only at a hit are the phrase's regexes tried, in a window of the
  hit's line (`Phrase.reach` before it, CHUNK after); each phrase's search of a line goes on
  from where its last one stopped (`_Cursor`), so every start of a line is searched about once
  per phrase however many hits make no message, and a message after them is still found.
  Linear in the text. A text without any hit is returned as it is (the same object).
"""

from __future__ import annotations

import json
import re
from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field, replace
from functools import lru_cache
from importlib import resources
from typing import Any

from rocmprov.kb.literals import Finder, finder, over

# a C format directive (%s, %.250s, %zu, %1$s, %m); %% is a literal percent sign
PLACEHOLDER = re.compile(
    r"%(?:(\d+)\$)?[-+ #0']*(?:\d+|\*)?(?:\.(?:\d+|\*))?(?:hh|h|ll|l|L|q|j|z|t)?[diouxXcspm]"
)
MAX_ARG = 256  # characters one placeholder matches, at most
CHUNK = 4096  # characters a phrase's regex searches past an anchor hit (kb/scan.py's _CHUNK)


@dataclass(frozen=True)
class Phrase:
    """One localised wording of one English message line."""

    english: tuple[str | int, ...]  # literal pieces and argument indexes, in the msgid's order
    regex: re.Pattern[str]
    groups: dict[int, int]  # argument index -> regex group
    before: int  # characters of literal context before the match (in the anchor, not replaced)
    after: int
    literal: int  # characters of literal text: the longer phrase wins at one place
    reach: int = 0  # characters a match (with its context) spans at most, either side of a hit
    head: str = ""  # `before` and the fixed text up to a trailing placeholder (NUL for the others)
    longer: tuple[Phrase, ...] = ()  # phrases whose fixed text starts with `head`, longest first

    def render(self, m: re.Match[str]) -> str:
        return "".join(p if isinstance(p, str) else m.group(self.groups[p]) for p in self.english)


@dataclass(frozen=True)
class Phrases:
    find: Finder
    candidates: dict[str, tuple[Phrase, ...]]  # anchor -> phrases to try there, longest first
    words: tuple[str, ...] = field(default=())  # the anchors (kb/scan.py's pass finds them too)


@dataclass(frozen=True)
class Translation:
    """`text` with English messages; `lines`: 1-based number -> the user's own line, for every
    line that changed (the same number of lines either way); `original`: the user's text;
    `edits`: each changed line's replacements, (start, end) in the user's line and the English
    put there, in order (what `english_line` and `own_offset` read). Each changed line's English
    reading and its edits' English starts are worked out once (at the first call that needs
    them): `own_offset` is then a bisect, however many results ask about one long line."""

    text: str
    lines: dict[int, str]
    original: str = ""
    edits: dict[int, tuple[tuple[int, int, str], ...]] = field(default_factory=dict)
    _read: dict[int, _Line] = field(default_factory=dict, init=False, repr=False, compare=False)

    def _line(self, number: int) -> _Line:
        read = self._read.get(number)
        if read is None:
            read = self._read[number] = _Line.of(self.lines[number], self.edits[number])
        return read

    def english_line(self, number: int) -> str:
        """Line `number` (a changed one) as it reads in English."""
        return self._line(number).english

    def own_offset(self, number: int, at: int, end: bool = False) -> int:
        """Where the character at `at` of line `number`'s English reading is in the user's line
        (inside a replaced message: that message's start, or with `end` its end)."""
        read, edits = self._line(number), self.edits[number]
        k = (bisect_left if end else bisect_right)(read.starts, at)  # edits starting before
        if k and at < read.starts[k - 1] + len(edits[k - 1][2]):
            return edits[k - 1][1] if end else edits[k - 1][0]
        return at - read.shifts[k]


@dataclass(frozen=True)
class _Line:
    """One changed line read once: its English text; `starts[k]`: where edit k's English starts
    in it; `shifts[k]`: English characters less the user's before edit k (one more at the end)."""

    english: str
    starts: tuple[int, ...]
    shifts: tuple[int, ...]

    @staticmethod
    def of(own: str, edits: tuple[tuple[int, int, str], ...]) -> _Line:
        out, at, shift, starts, shifts = [], 0, 0, [], [0]
        for start, end, english in edits:
            out += [own[at:start], english]
            starts.append(start + shift)
            shift += len(english) - (end - start)
            shifts.append(shift)
            at = end
        return _Line("".join(out) + own[at:], tuple(starts), tuple(shifts))


def _split(fmt: str) -> list[str | int]:
    """`fmt` as literal pieces and argument indexes (sequential, or %N$ positions)."""
    out: list[str | int] = []
    at = 0
    for seq, m in enumerate(PLACEHOLDER.finditer(fmt)):
        out.append(fmt[at : m.start()])
        out.append(int(m.group(1)) - 1 if m.group(1) else seq)
        at = m.end()
    out.append(fmt[at:])
    return [p for p in out if p != ""]


def compile_phrase(english: str, local: str, before: str = "", after: str = "") -> Phrase:
    """The Phrase that puts `english` where `local` (one msgstr line) is printed."""
    parts = _split(local)
    body: list[str] = []
    groups: dict[int, int] = {}
    leading = True  # only placeholders and spaces so far
    for n, part in enumerate(parts):
        if isinstance(part, str):
            body.append(re.escape(part))
            leading = leading and part.isspace()
        else:
            groups[part] = len(groups) + 1
            if leading:  # first ones: a word each (not everything before the message, nor the
                body.append(rf"(?<!\S)(\S{{1,{MAX_ARG}}}+)")  # line's first word), at its start
            elif n == len(parts) - 1:
                body.append(rf"([^\n]{{0,{MAX_ARG}}})")
            elif isinstance(parts[n + 1], str):  # up to the next literal's first place, no
                stop = re.escape(parts[n + 1])  # further: tried once per start (possessive)
                body.append(rf"((?:(?!{stop})[^\n]){{0,{MAX_ARG}}}+)")
            else:
                body.append(rf"([^\n]{{0,{MAX_ARG}}}?)")
    pattern = "".join(body)
    if before:
        pattern = f"(?<={re.escape(before)})" + pattern
    if after:
        pattern += f"(?={re.escape(after)})"
    literal = sum(len(p) for p in parts if isinstance(p, str))
    reach = len(before) + literal + len(after) + MAX_ARG * len(groups)
    head = _shape(before, parts + ([after] if after else []))
    return Phrase(tuple(_split(english)), re.compile(pattern), groups, len(before), len(after),
                  literal, reach, head)  # fmt: skip


def _shape(before: str, parts: list[str | int]) -> str:
    """`before` + the pieces, each placeholder as NUL, less a trailing placeholder (it matches
    whatever a longer phrase has there)."""
    if parts and not isinstance(parts[-1], str):
        parts = parts[:-1]
    return before + "\x01" + "".join(p if isinstance(p, str) else "\x00" for p in parts)


def _with_longer(phrases: list[Phrase]) -> dict[int, Phrase]:
    """Each phrase (by id) with the phrases that extend it: same context before, fixed text that
    starts with its own, more literal text. At a match these are tried first, at its start."""
    out = {}
    for p in phrases:
        longer = [q for q in phrases if q.literal > p.literal and q.head.startswith(p.head)]
        out[id(p)] = replace(p, longer=tuple(sorted(longer, key=lambda q: -q.literal)))
    return out


def anchor(local: str, before: str = "", after: str = "") -> str:
    """The longest literal run of the phrase with its context: what the finder looks for."""
    runs = PLACEHOLDER.split(before + local + after)
    return max((r for r in runs if r is not None), key=len)


def phrases_from(document: dict[str, Any]) -> Phrases:
    compiled: list[tuple[str, Phrase]] = []
    for item in document["phrases"]:
        for wordings in item["locales"].values():
            for local in wordings:
                word = anchor(local, item["before"], item["after"])
                phrase = compile_phrase(item["english"], local, item["before"], item["after"])
                compiled.append((word, phrase))
    final = _with_longer([p for _, p in compiled])
    by_anchor: dict[str, list[Phrase]] = {}
    for word, phrase in compiled:
        by_anchor.setdefault(word, []).append(final[id(phrase)])
    candidates = {}
    for word in by_anchor:
        # an anchor that starts another at the same place is found as the longer one
        found = [p for w, ps in by_anchor.items() if word.startswith(w) for p in ps]
        candidates[word] = tuple(sorted(found, key=lambda p: -p.literal))
    words = tuple(sorted(by_anchor))
    return Phrases(finder(words), candidates, words)


@lru_cache(maxsize=1)
def load_document() -> dict[str, Any]:
    """rocmprov/data/kb/locales.json as read."""
    text = resources.files("rocmprov.data.kb").joinpath("locales.json").read_text("utf-8")
    return dict(json.loads(text))


@lru_cache(maxsize=1)
def load_phrases() -> Phrases:
    return phrases_from(load_document())


def localising(document: dict[str, Any], locale: str, variant: int = 0) -> Phrases | None:
    """Phrases that put English messages into `locale` (its `variant`-th wording of each): the
    po data read backwards, for the tests and the benchmark (a table fixture as a user of that
    locale would have pasted it). None when the locale has no such wording."""
    items = [
        {"english": p["locales"][locale][variant], "before": p["before"], "after": p["after"],
         "locales": {"en": [p["english"]]}}
        for p in document["phrases"] if len(p["locales"].get(locale, [])) > variant
    ]  # fmt: skip
    return phrases_from({"phrases": items}) if items else None


def translate(text: str, phrases: Phrases | None = None) -> Translation:
    """`text` with every localised phrase replaced by its English message (module docstring)."""
    if not text:
        return Translation(text, {}, text)
    phrases = phrases or load_phrases()
    search = over(phrases.find, text)
    out: list[str] = []
    lines: dict[int, str] = {}
    edits: dict[int, list[tuple[int, int, str]]] = {}
    done = 0  # text before this is in `out` (or replaced)
    line_no, counted = 1, 0
    start, end = 0, -1  # the current line's bounds, found once per line
    cursors: dict[int, _Cursor] = {}  # per phrase (by id), on the current line
    quiet: dict[str, int] = {}  # per anchor, on the current line: its hits before make none
    hit = search(text, 0)
    while hit is not None:
        pos, word = hit.start(), hit.group()
        if pos > end:  # a new line: look back only as far as the previous line's end
            start = text.rfind("\n", max(end, 0), pos) + 1
            nxt = text.find("\n", pos)
            end, cursors, quiet = (len(text) if nxt < 0 else nxt), {}, {}
        if pos >= done and pos >= quiet.get(word, 0):
            m, phrase, calm = _match(phrases.candidates[word], text, max(start, done), pos,
                                     len(word), end, cursors)  # fmt: skip
            quiet[word] = calm
            if m is not None and phrase is not None:
                line_no += text.count("\n", counted, start)
                counted = start
                if line_no not in lines:  # copied once: not once per message on a long line
                    lines[line_no] = text[start:end]
                english = phrase.render(m)
                edits.setdefault(line_no, []).append((m.start() - start, m.end() - start, english))
                out.append(text[done : m.start()])
                out.append(english)
                done = m.end()
        hit = search(text, pos + 1)
    if not lines:
        return Translation(text, {}, text)
    out.append(text[done:])
    return Translation("".join(out), lines, text, {n: tuple(e) for n, e in edits.items()})


@dataclass
class _Cursor:
    """How far one phrase's regex was searched on the current line: `m`, the leftmost match
    that starts at or after the last search's start (at `at`), or None: no match starts before
    `at` (searched with room for a whole match). A start is searched about once per phrase."""

    at: int
    m: re.Match[str] | None = None


def _next(phrase: Phrase, text: str, x: int, pos: int, end: int) -> _Cursor:
    """The leftmost match of `phrase` starting at or after `x`, searched up to CHUNK past the
    hit at `pos`: starts closer than `phrase.reach` to where the search stopped are left for
    the next search (a match there could run past it)."""
    hi = min(end, max(x, pos) + CHUNK + 2 * phrase.reach)
    m = phrase.regex.search(text, x, hi)
    safe = end if hi == end else hi - phrase.reach
    if m is None or (m.start() >= safe and hi < end):
        return _Cursor(max(x, safe), None)
    return _Cursor(m.start(), m)


def _match(
    candidates: tuple[Phrase, ...], text: str, lo: int, pos: int, width: int, end: int,
    cursors: dict[int, _Cursor],
) -> tuple[re.Match[str] | None, Phrase | None, int]:  # fmt: skip
    """The first phrase (longest first) with a match holding the anchor hit at `pos`, starting
    at or after `lo`, or the longest phrase extending it at the same start (before the line's
    `end`). `cursors` keeps each phrase's search of the line: a start is searched once. On a
    miss, also where the next hit could first make one (no phrase's next match starts sooner:
    the hits before it are misses too, even after a replacement moves `lo`)."""
    calm = end
    for phrase in candidates:
        near = max(lo, pos - phrase.reach)  # a match starting before this ends before the hit
        cur = cursors.get(id(phrase)) or _Cursor(near)
        while True:
            if cur.m is None or cur.m.start() < near:
                at = near if cur.m is not None else max(cur.at, near)
                if at - phrase.before > pos or at >= end:
                    calm = min(calm, at - phrase.before)
                    break  # no match starts near enough
                cur = cursors[id(phrase)] = _next(phrase, text, at, pos, end)
                continue
            m = cur.m
            if m.start() - phrase.before > pos:
                calm = min(calm, m.start() - phrase.before)
                break  # the leftmost match left starts after the hit
            if m.end() + phrase.after >= pos + width and m.end() > m.start():
                return (*_longest(phrase, m, text, end), 0)
            # it ends before the hit: the next one starts after its start
            cur = cursors[id(phrase)] = _next(phrase, text, max(m.start() + 1, near), pos, end)
    return None, None, calm


def _longest(phrase: Phrase, m: re.Match[str], text: str, end: int) -> tuple[re.Match[str], Phrase]:
    """The longest phrase that extends `phrase` (`Phrase.longer`) and matches where `m` starts,
    else `phrase` and `m`: a shorter phrase's trailing placeholder never takes a longer one's
    text ("Impossible d'obtenir le verrou %s" inside "... %s. Il est occupé par ...")."""
    for longer in phrase.longer:
        if (n := longer.regex.match(text, m.start(), end)) is not None and n.end() > m.start():
            return n, longer
    return m, phrase


def english(text: str) -> str:
    """`text` with English messages in place of localised ones, line for line (`translate`)."""
    return translate(text).text
