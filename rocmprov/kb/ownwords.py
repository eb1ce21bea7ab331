"""The user's own words as evidence where kb/locale.py put a line in English. Pure.

A localised line is scanned in its English reading; what `explain` shows is the user's line,
with that reading beside it. Of an enormous line, the evidence is the user's text of the span
the English window (kb/scan.py's cut around the match) shows.
"""

from __future__ import annotations

from collections.abc import Sequence

from rocmprov.kb.found import MAX_LINE, clip
from rocmprov.kb.locale import Translation


def own_evidence(
    translation: Translation, lines: Sequence[int], evidence: Sequence[str],
    at: Sequence[tuple[int, int]],
) -> tuple[tuple[str, ...], tuple[str, ...]]:  # fmt: skip
    """(evidence, english) of a match on `lines`: the user's own line where it was put in
    English, and that English reading beside it ("" where the line was English already).
    `at`: per line, where kb/scan.py's window starts and where the match ends (empty when the
    scan could not say)."""
    own = translation.lines
    english = tuple(ev if n in own else "" for n, ev in zip(lines, evidence, strict=True))
    places = at or ((-1, -1),) * len(lines)
    rows = zip(lines, evidence, places, strict=True)
    shown = tuple(own_line(translation, n, ev, p) if n in own else ev for n, ev, p in rows)
    return shown, english


def own_line(translation: Translation, number: int, shown: str, at: tuple[int, int]) -> str:
    """The user's line `number` as evidence: of an enormous one, the user's text of the span
    that `shown` (kb/scan.py's cut of its English reading, around the match) shows, starting
    where `at` says (searched for only where kb/scan.py could not say), cut at MAX_LINE
    characters unless that cuts the matched message (a localised message can be longer)."""
    own = translation.lines[number]
    if len(own) <= MAX_LINE:
        return clip(own)
    body = shown[:MAX_LINE]
    begin, matched = at
    if begin < 0:
        begin = translation.english_line(number).find(body)
        if begin < 0:
            return clip(own)
    start = translation.own_offset(number, begin)
    stop = translation.own_offset(number, begin + len(body), end=True)
    message = translation.own_offset(number, matched, end=True) if matched >= 0 else 0
    stop = min(stop, max(start + MAX_LINE, message))
    return own[start:stop] + ("..." if stop < len(own) else "")
