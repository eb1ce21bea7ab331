"""Text as a terminal or a web page mangled it, put back: wrapped lines joined, spacing made
plain. Pure.

A message pasted from a terminal (or copied from a page that wraps long lines) arrives cut
into pieces of exactly the terminal's width: 80 columns, often 100, 120, 132, 160 or 200. A
pattern written from the whole line matches none of the pieces. `unwrap` joins each run of
lines whose every line but the last has exactly one of those widths back into one line and
says where each line of the result began in the original; the matcher scans that text too
(kb/matcher.py says when).

A message copied from a web page, a chat or a quoted reply also arrives with other spacing:
non-breaking or other Unicode spaces, tabs or runs of spaces where the program printed one,
and a Markdown quote (`> `) or an indentation before each line. `plain_spacing` makes every
run of spaces one ASCII space and drops the quote marks and indentation, line by line (line
numbers stay). A message logged as an escaped string (JSON logs, a Python exception's repr)
arrives on one line with `\\n` between its lines: `unescape` puts them back. A message copied
from a rendered page has its typography (curly quotes, an en dash for "--", an ellipsis for
"..."), from a page's source its HTML escapes, from a coloured terminal its colour codes (often
with their ESC byte lost on the way): `plain_marks` puts the program's plain text back, line by
line. `loosen` does all of it.
"""

from __future__ import annotations

import html
import re
from array import array
from collections.abc import Iterable
from functools import lru_cache
from itertools import repeat

# no-break, en/em and other Unicode spaces, tabs; a run of them (or of plain spaces) is one space
_ODD_SPACE = "\t\u00a0\u1680\u2000-\u200a\u202f\u205f\u3000"
_SPACES = re.compile(f"[ {_ODD_SPACE}]{{2,}}|[{_ODD_SPACE}]")
# "> ", "> > "; not ">>> " (a prompt); possessive: no backtracking state per quote mark
_QUOTE = re.compile(r"^(?:[ \t]*>(?=[ \t\r]|$)[ \t]?)++", re.MULTILINE)
_INDENT = re.compile(r"^[ \t]+", re.MULTILINE)
# an escaped string's \n, \r\n, \t, \", \', \\ and \uXXXX (one pass: \\n is a backslash and an n)
_ESCAPE = re.compile(r"\\(?:r\\n|[nt\"'\\]|u[0-9a-fA-F]{4})")
_ESCAPED = {"n": "\n", "t": "\t", '"': '"', "'": "'", "\\": "\\"}
# a terminal's control sequences (CSI), and its colour codes (SGR) when the ESC byte was lost
_TERMINAL = re.compile(r"\x1b\[[0-?]{0,32}[ -/]{0,4}[@-~]|\x1b|\[\d{1,3}(?:;\d{1,3}){0,7}m")
_ENTITY = re.compile(r"&(?:#\d{1,7}|#[xX][0-9a-fA-F]{1,6}|[a-zA-Z]{2,8});")
_TYPOGRAPHY = str.maketrans({
    "\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201b": "'", "\u2032": "'",
    "\u201c": '"', "\u201d": '"', "\u201e": '"', "\u201f": '"', "\u2033": '"',
    "\u2013": "--", "\u2014": "--", "\u2010": "-", "\u2011": "-", "\u2212": "-",
    "\u2026": "...",
})  # fmt: skip
_MARKS = re.compile(
    "[\x1b&" + re.escape("".join(map(chr, _TYPOGRAPHY))) + "]|\\[\\d{1,3}(?:;\\d{1,3}){0,7}m"
)  # a colour code without its ESC, not a dmesg time stamp ("[12.3456]")
WIDTHS = frozenset({80, 100, 120, 132, 160, 200})
MAX_RUN = 40  # lines joined into one, at most (a message, not a whole log)


def _lines(numbers: Iterable[int] = ()) -> array[int]:
    """1-based line numbers, one per line of a put-back text, as C ints: a 16 MiB text of
    escaped newlines has 8 million lines, and a list of Python ints would take ~300 MiB."""
    return array("I", numbers)


def unwrap(text: str) -> tuple[str, array[int]]:
    """(text with wrapped runs joined, 1-based original line number of each of its lines).
    The text comes back unchanged (and the list empty) when nothing was wrapped."""
    lines = text.split("\n")
    if not any(len(line.rstrip("\r")) in WIDTHS for line in lines):
        return text, _lines()  # nothing wrapped: no copy of every line
    out: list[str] = []
    starts = _lines()
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
    return ("\n".join(out), starts) if changed else (text, _lines())


# the escapes a page's source holds most, put back in C (none of them is inside an escaped
# "&amp;...", so the order is safe); "&amp;" itself last, in one pass with any rarer one
_COMMON = (("&quot;", '"'), ("&#34;", '"'), ("&#39;", "'"), ("&#x27;", "'"), ("&apos;", "'"),
           ("&lt;", "<"), ("&gt;", ">"), ("&nbsp;", " "))  # fmt: skip
_RARE_ENTITY = re.compile("&(?!amp;)" + _ENTITY.pattern[1:])  # any escape but "&amp;"


@lru_cache(maxsize=1024)
def _unescaped_name(entity: str) -> str:
    return html.unescape(entity)


def _unescaped_entity(m: re.Match[str]) -> str:
    entity = m.group()
    if entity[1] != "#":
        return _unescaped_name(entity)
    number = int(entity[3:-1], 16) if entity[2] in "xX" else int(entity[2:-1])
    if number in (10, 13):
        return entity  # a line break stays where it was
    if number < 160 or 0xD800 <= number <= 0xDFFF or number >= 0x110000:
        # as a browser reads them (128-159 as Windows-1252: &#146; is a quote, &#150; a dash)
        return _unescaped_name(entity)
    return chr(number)


def _entities(text: str) -> str:
    for escaped, plain in _COMMON:
        text = text.replace(escaped, plain)
    if _RARE_ENTITY.search(text) is None:
        return text.replace("&amp;", "&")
    return _ENTITY.sub(_unescaped_entity, text)


def plain_marks(text: str) -> str:
    """A terminal's colour codes dropped, HTML escapes and a web page's typography (curly
    quotes, dashes, ellipsis) back to the plain characters a program prints. Lines stay where
    they were. The text itself when it holds none of them."""
    if _MARKS.search(text) is None:
        return text
    text = _TERMINAL.sub("", text)
    return (_entities(text) if "&" in text else text).translate(_TYPOGRAPHY)


def plain_spacing(text: str) -> str:
    """Every run of spaces (of any kind) one ASCII space, a line's Markdown quote marks and
    indentation dropped. Lines stay where they were."""
    return _SPACES.sub(" ", _INDENT.sub("", _QUOTE.sub("", text)))


def _unescaped(m: re.Match[str]) -> str:
    escape = m.group()
    return chr(int(escape[2:], 16)) if escape[1] == "u" else _ESCAPED[escape[-1]]


def _paired(text: str) -> str:
    """Surrogate pairs from \\uD83D\\uDE80 escapes (how json.dumps writes an emoji) joined; a lone
    surrogate becomes U+FFFD (it cannot be printed or encoded)."""
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def unescape(text: str) -> tuple[str, array[int]]:
    """A message held as an escaped string on one log line (a JSON log's "log" field, Python's
    repr of an exception) with its \\n, \\t, \\" and \\uXXXX put back: (text, 1-based original
    line number of each of its lines), or (text, empty) when it holds no `\\n` sequence."""
    if "\\n" not in text:
        return text, _lines()
    out: list[str] = []
    starts = _lines()
    for number, line in enumerate(text.split("\n"), 1):
        if "\\" in line:
            line = _ESCAPE.sub(_unescaped, line)
            if "\\u" in line or any("\ud800" <= ch <= "\udfff" for ch in line):
                line = _paired(line)
        out.append(line)
        starts.extend(repeat(number, line.count("\n") + 1))
    return "\n".join(out), starts


def _through(outer: array[int], inner: array[int]) -> array[int]:
    """Line numbers of a text made in two steps: `outer` maps into the first step's text,
    `inner` from there into the original (empty = lines did not move)."""
    if not inner or not outer:
        return outer or inner
    return _lines(inner[n - 1] for n in outer)


def loosen(text: str) -> list[tuple[str, array[int]]]:
    """The text put back, each way that changes it: (text, 1-based original line number of each
    of its lines, or empty when they did not move). From the text and, when it holds escaped
    newlines, from it `unescape`d: `unwrap` of the lines without their quote marks (terminal
    output pasted into a quote) and, for a quoted text, of the lines as they are (a quote
    wrapped with its marks), each then `plain_marks` and `plain_spacing`."""
    bases = [(text, _lines())]
    unescaped, lines = unescape(text)
    if lines:
        bases.append((unescaped, lines))
    out: list[tuple[str, array[int]]] = []
    for base, base_lines in bases:
        unquoted = _QUOTE.sub("", base)
        ways = [unwrap(unquoted)] + ([unwrap(base)] if unquoted != base else [])
        for joined, starts in ways:
            plain = plain_spacing(plain_marks(joined))  # after unwrap: a mark changes widths
            if plain != text and all(plain != seen for seen, _ in out):
                out.append((plain, _through(starts, base_lines)))
    return out
