"""Line ends made plain once, before the matcher reads a text (kb/matcher.py, analyse). Pure.

The rule is conservative: every line keeps its text (only \\r, and blanks or escapes after a
trailing one, go), so nothing a pattern found before this step (bc7614b) is lost.

- \\r\\n (Windows) and \\n\\r (serial consoles) are \\n: two str.replace, in C, before any regex.
- A \\r followed only by blanks or ANSI escape sequences (a spinner's erase-line, \\x1b[K) up
  to the line's end is a trailing \\r: it is dropped with them, so "text\\r\\x1b[K\\n" is "text".
  A \\r at a line's start (after a \\n) moves the cursor nowhere: it is dropped (blanks after
  it stay); at the text's start it stays (an old Mac file's empty first line).
- Any other lone \\r stays in its line as it is: "x 10%\\rdone" and a message followed by a
  progress bar on the same line keep all their text. (A terminal would show the line redrawn,
  but no real capture of redraw bytes was available to check that rule against, and taking
  the line as the terminal showed it threw away text the matcher used to find.)
- Old Mac (or a tool writing \\r line ends): when the lone \\r left outnumber the \\n, and the
  lines holding one are at least as many as the \\n (every line but at most one holds a \\r),
  every lone \\r is a line break (strictly more \\r: one line with one \\r inside it, such as a
  message and a progress redraw, stays one line); so a \\r-separated log that got one final
  \\n (an editor, `echo >>`) or one \\n-ended line appended still splits into its lines.
  Lines, not only \\r, are counted so that one line of 300 progress redraws in a short log
  does not make it old Mac (that would put 300 lines between its message and the lines a
  `near` reads, tests/test_kb_review23.py).

Linear in the text: the one regex reads a run of \\r, blanks and escapes once from its first
\\r (possessive, and a search goes on after the run it matched).
"""

from __future__ import annotations

import re

# a \r and the blanks, \r and ANSI escape sequences (CSI: ESC [ params final) after it
_RUN = re.compile(r"\r(?:[ \t\r]|\x1b\[[0-?]*+[ -/]*+[@-~])*+")
# a line holding a \r (possessive: a line without one is read once)
_CR_LINE = re.compile(r"^[^\n\r]*+\r[^\n]*+", re.MULTILINE)


def _trailing(m: re.Match[str]) -> str:
    """The run dropped when only a line end (or the text's end) follows it; its \r dropped
    when it starts a line (the cursor is at the line's start already); else kept as it is."""
    text, start, end = m.string, m.start(), m.end()
    if end == len(text) or text[end] == "\n":
        return ""
    if start and text[start - 1] == "\n":
        return m.group().replace("\r", "")
    return m.group()


def normalise(text: str) -> str:
    """`text` with \\n line ends: \\r\\n and \\n\\r as \\n, a trailing \\r (with the blanks and
    ANSI escapes after it) and a line's leading \\r dropped, and the lone \\r left made \\n only
    where they outnumber the \\n and the lines holding them are as many (old Mac).
    Idempotent. The text itself when it holds no \\r."""
    if "\r" not in text:
        return text
    text = text.replace("\r\n", "\n")  # the common case, in C (a regex pass: 3x the time)
    if "\r" not in text:
        return text
    text = text.replace("\n\r", "\n")  # a serial console's line end
    if "\r" not in text:
        return text
    text = _RUN.sub(_trailing, text)
    ends = text.count("\n")
    if text.count("\r") > ends and len(_CR_LINE.findall(text)) >= ends:
        return text.replace("\r", "\n")
    return text
