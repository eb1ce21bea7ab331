"""What the matcher's scan (kb/scan.py) keeps of an entry it found: its first line, its
evidence lines (at most MAX_EVIDENCE, each cut at MAX_LINE characters), where each starts on
its line, its first captures and its count of distinct matches. Pure.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from rocmprov.kb.target import Target

MAX_EVIDENCE = 10  # evidence lines kept per entry
MAX_LINE = 4000  # characters of a line kept as evidence


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


def record(
    found: dict[int, Found], target: Target, m: re.Match[str], first: int, lines: list[str],
    at: tuple[int, int] = (-1, -1),
) -> None:  # fmt: skip
    """Counts the match `m` of `target` in `found` (once per span) and keeps its captures and
    `lines` (the first numbered `first`) as evidence. `at`: where the first of `lines` starts on
    its line, and where the match ends on it (the others start their lines)."""
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
