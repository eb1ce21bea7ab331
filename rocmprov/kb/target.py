"""One pattern of the table as the matcher's scan (kb/scan.py) runs it: its regexes, compiled
on the first hit of its anchor, and what the scan reads of them (how far a match reaches either
way of its anchor, the literals every match holds, the characters a match can start with), and
the check of a single-line pattern on one line. Pure.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property
from re import _parser as sre_parse  # type: ignore[attr-defined]

from rocmprov.kb.anchors import reach_before
from rocmprov.kb.redact import redactable
from rocmprov.kb.regexshape import first_chars, line_head, literal_prefix, required_literals
from rocmprov.kb.table import Pattern
from rocmprov.kb.window import SPAN

LINE_SPAN = 4096  # the longest match of a single-line regex (SPAN made a 4 MiB line 1.3x slower)
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
    target: Target, text: str, start: int, end: int, lo: int, hi: int
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
class Target:
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
        """The longest match the regex can make (at most LINE_SPAN on one line, SPAN on more)."""
        span = LINE_SPAN if self.lines == 1 else SPAN
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
    def head(self) -> re.Pattern[str] | None:
        """A multi-line regex's part before it reads to its line's end, compiled alone, where
        that makes one start a line enough (regexshape.line_head; None for any other)."""
        if self.source is None or self.lines == 1:
            return None
        own = self.source.compiled  # `regex` itself (read here, not through a wrapper of it)
        return line_head(own.pattern, own.flags)

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
