"""Lines a terminal or a web page wrapped at its width, joined back. Pure.

A message pasted from a terminal (or copied from a page that wraps long lines) arrives cut
into pieces of exactly the terminal's width: 80 columns, often 100, 120, 132, 160 or 200. A
pattern written from the whole line matches none of the pieces. `unwrap` joins each run of
lines whose every line but the last has exactly one of those widths back into one line and
says where each line of the result began in the original; the matcher scans that text too
(kb/matcher.py says when).
"""

from __future__ import annotations

WIDTHS = frozenset({80, 100, 120, 132, 160, 200})
MAX_RUN = 40  # lines joined into one, at most (a message, not a whole log)


def unwrap(text: str) -> tuple[str, list[int]]:
    """(text with wrapped runs joined, 1-based original line number of each of its lines).
    The text comes back unchanged (and the list empty) when nothing was wrapped."""
    lines = text.split("\n")
    out: list[str] = []
    starts: list[int] = []
    i, n, changed = 0, len(lines), False
    while i < n:
        width = len(lines[i].rstrip("\r"))
        j = i
        if width in WIDTHS:
            while j + 1 < n and j - i < MAX_RUN and lines[j + 1].rstrip("\r"):
                j += 1
                if len(lines[j].rstrip("\r")) != width:
                    break
        if j > i:
            out.append("".join(line.rstrip("\r") for line in lines[i : j + 1]))
            changed = True
        else:
            out.append(lines[i])
        starts.append(i + 1)
        i = j + 1
    return ("\n".join(out), starts) if changed else (text, [])
