"""Which lines of a text look like a problem, for explain's answer when no entry knows it: with
none, explain says nothing looks like an error and guesses no family (a healthy `ldconfig -p` or
`pip list`), yet keeps the general tracker for a failure worded in none of these words; with
some, the family a text is about is read from these lines first (kb/families.py). Pure.

The notion is the similarity tier's own (kb/similar.py `informative`: an error, a failure, a
warning, "not found"... in a line once its names are left out, kb/names.py), so the tier never
compares a line explain says does not look like a problem.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from rocmprov.kb.names import masked
from rocmprov.kb.similar import MAX_CHARS, read

__all__ = ["Problems", "masked", "problem_lines"]


@dataclass(frozen=True)
class Problems:
    lines: tuple[tuple[int, str], ...]  # (1-based line number, the line stripped, cut at MAX_CHARS)
    unread: bool = False  # the reader stopped at similar.MAX_READ lines: the rest was never read

    @property
    def any(self) -> bool:
        """Whether anything may look like a problem: a problem line, or lines never read."""
        return bool(self.lines) or self.unread


def problem_lines(
    text: str, skip: Collection[int] = (), unless: Sequence[re.Pattern[str]] = ()
) -> Problems:
    """The lines of `text` that look like a problem (module doc); the line numbers in `skip` and
    the lines one of `unless` finds are left out (harmless lines, answered already:
    kb/similar.py `covered`). At most similar.MAX_LINES lines; a line that is only a name does
    not count towards them, so the lines after many names are still read, up to similar.MAX_READ
    lines that hold a problem word (then `unread`: the text is taken to look like a problem)."""
    found, unread = read(text, skip, unless)
    return Problems(tuple((n, line[:MAX_CHARS]) for n, line in found), unread)
