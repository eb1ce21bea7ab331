"""Line ends made plain once, before the matcher reads a text (kb/matcher.py, analyse). Pure.

A log saved on Windows ends its lines with \\r\\n, an old Mac file with \\r alone; both are
matched exactly as the same log with \\n: same line numbers, evidence without a \\r, and a
table pattern need not allow a \\r before its \\n.

A lone \\r inside a line (a text that has \\n line ends) is a terminal's carriage return, not a
line break: a progress bar (pip, tqdm, apt, curl, wget) redraws itself after a \\r, and a
message printed after a redraw is written from the line's start too. The line is taken as the
terminal showed it: each part after a \\r written over the line from its first column, so the
last part, then the tail of an earlier, longer part that it did not cover (a message longer
than the bar it follows shows whole; "x 10%\\rdone" shows "done%"). Treating \\r as a line break
instead would give one line per redraw: a tqdm bar of 10,000 steps would push every later
line's number 10,000 lines away from the number `grep -n`, `less -N` and an editor's
go-to-line give (they count \\n only), and put 10,000 stale bars between a message and the
lines an entry's `near`/`unless` reads around it. A \\r at a line's very end (before \\n or the
text's end) moves the cursor and erases nothing: it is dropped, so "text\\r\\r\\n" is "text".
The cost of the choice: text a later part overwrote is gone, as on the terminal (a message
printed without its own line end, then redrawn over by a bar on the same line).

A text with no \\n at all but with \\r is an old Mac file: there every \\r is a line break.

Linear in the text: each regex below reads a run of \\r or a line once (a match starts only at a
line's start or at a run's first \\r), and a line's parts are laid over each other last first,
each character copied once.
"""

from __future__ import annotations

import re

# \r before a line end (\n or the text's end): only from the run's first \r (the look-behind
# fails at once inside a run, so a 4 MiB run of \r is read once, not once per \r)
_TRAILING = re.compile(r"(?<!\r)\r+(?=\n|\Z)")
# a line holding a \r (possessive: a line without one is read once)
_REDRAWN = re.compile(r"^[^\n\r]*+\r[^\n]*+", re.MULTILINE)


def shown(line: str) -> str:
    """A line of parts written after \\r as a terminal shows it: the last part, then the tail of
    each earlier part longer than every part after it."""
    pieces: list[str] = []
    covered = 0
    for part in reversed(line.split("\r")):
        if len(part) > covered:
            pieces.append(part[covered:])
            covered = len(part)
    return "".join(pieces)


def normalise(text: str) -> str:
    """`text` with \\n line ends only: \\r\\n and a line's trailing \\r dropped to \\n, a line
    redrawn after \\r as a terminal shows it (`shown`), an old Mac file's \\r made \\n.
    The text itself when it holds no \\r."""
    if "\r" not in text:
        return text
    if "\n" not in text:
        return text.replace("\r", "\n")
    text = text.replace("\r\n", "\n")  # the common case, in C (a regex pass: 3x the time)
    if "\r" not in text:
        return text
    text = _TRAILING.sub("", text)
    return _REDRAWN.sub(lambda m: shown(m.group()), text) if "\r" in text else text
