"""Which lines of a text look like a problem, for explain's answer when no entry knows it: with
none, explain says nothing looks like an error and guesses no family (a healthy `ldconfig -p` or
`pip list`), yet keeps the general tracker for a failure worded in none of these words; with
some, the family a text is about is read from these lines first (kb/families.py). Pure.

The notion is the similarity tier's (kb/similar.py `informative`: an error, a failure, a
warning, "not found"...), read with names left out: a word joined to another by a hyphen is
part of a name (libgpg-error.so.0 in `ldconfig -p`, pytest-timeout in `pip list`,
errors=remount-ro in a mount line), and so is the key of a key=value (panic=1 on a kernel
command line). A status-code name (HSA_STATUS_ERROR_..., hipErrorNoDevice) is not a name here:
underscores and camelCase are left as they are.

Only the lines `informative` finds are read again (a healthy log of 16 MiB costs one pass of its
literal finder); when it stops at MAX_LINES and every one of them was only a name, the text is
taken to look like a problem (the lines after them were never read).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from rocmprov.kb.similar import MAX_CHARS, MAX_LINES, informative

# a run of letters joined to a letter or digit by a hyphen, either side; each alternative starts
# only where a run starts (lookbehind), so a line is read in linear time
_HYPHENATED = re.compile(r"(?<=[A-Za-z0-9]-)[A-Za-z]+|(?<![A-Za-z])[A-Za-z]+(?=-[A-Za-z0-9])")
_KEY = re.compile(r"(?<!\S)[^\s=]+=")  # the key of key=value, at the start of a word


@dataclass(frozen=True)
class Problems:
    lines: tuple[tuple[int, str], ...]  # (1-based line number, the line stripped, cut at MAX_CHARS)
    unread: bool = False  # informative stopped at MAX_LINES before a line that was not a name

    @property
    def any(self) -> bool:
        return bool(self.lines) or self.unread


def masked(line: str) -> str:
    """`line` with its names blanked (same length, so columns stay where they were)."""
    line = _KEY.sub(lambda m: " " * len(m.group()), line)
    return _HYPHENATED.sub(lambda m: " " * len(m.group()), line)


def problem_lines(
    text: str, skip: Collection[int] = (), unless: Sequence[re.Pattern[str]] = ()
) -> Problems:
    """The lines of `text` that look like a problem once names are left out (module doc); the
    line numbers in `skip` and the lines one of `unless` finds are left out (harmless lines,
    answered already: kb/similar.py `covered`)."""
    found = informative(text, skip)
    if not found:
        return Problems(())
    lines = text.split("\n")
    out: list[tuple[int, str]] = []
    for number, _ in found:
        full = lines[number - 1]
        if any(r.search(full) for r in unless):
            continue
        if informative(masked(full[:MAX_CHARS])):
            out.append((number, full.strip()[:MAX_CHARS]))
    return Problems(tuple(out), unread=not out and len(found) >= MAX_LINES)
