"""Values a user blanked out before pasting. Pure.

People hide what they take for private or noise before they post a log: a key id becomes
`[key]` or `XXXXXXXX`, an address `0x...`, a serial number `****` or `<redacted>`. A pattern
that captures such a value as a number or a hex string then misses the message although every
word of it is there.

`redactable(regex)` lets each named group whose body is a plain number or hex shape (`\\d+`,
`0x[0-9a-f]+`, `[0-9A-F]{16}`, a PCI address...) match a placeholder instead: the group then
captures nothing, and the answer says how to find the value (matcher.fill's hint), as it does
for a value the text lacks. Only such groups: a group that names a program, a library or a gfx
target tells one cause from another and stays as written; a group that a backreference reads
again (`(?P=name)`) stays too, because a comparison with a value that is not there would not
mean what the entry says.

A placeholder is what people write in its place, never a word of a message: a bracketed or
angled word (`[key]`, `<hostname>`, `[REDACTED]`), `0x` followed by dots or x's, three dots
or an ellipsis, a run of three or more `*`, `X` or `x`.
"""

from __future__ import annotations

import re

PLACEHOLDER = (
    r"(?:\[[A-Za-z][\w .-]{0,23}\]|<[A-Za-z][\w .-]{0,23}>"
    r"|0x(?:\.{2,3}|\u2026|[Xx]{2,16})|\.{3}|\u2026|\*{3,16}|[Xx]{3,16})"
)
# one item of a number or hex shape: \d, a digit or hex class (with . or : inside), a literal
# dot or colon, each with an optional quantifier; `-` or `-?` first, `0x` first
_ITEM = (
    r"(?:\\d|\[(?:\\d|[0-9]-[0-9]|[a-fA-F]-[a-fA-F]|\\\.|[.:0-9a-fA-F])+\]|\\\.|:)"
    r"(?:[+*?]|\{\d+(?:,\d*)?\})?"
)
_VALUE = re.compile(rf"(?:-\??)?(?:0x)?(?:{_ITEM})+")
# an unnamed value where the regex reads one: digits or hex digits repeated (\d+, \d{9,11},
# 0x[0-9a-f]+, [0-9A-F]{16}), lazy or possessive or not; a single digit or an optional run
# (\d, \d*, \d?) is a part of a word, not a value
_ATOM = re.compile(
    r"(?:0x)?(?:\\d|\[(?:\\d|[0-9]-[0-9]|[a-fA-F]-[a-fA-F])+\])"
    r"(?:\+|\{[1-9]\d*(?:,\d*)?\})[?+]?"
)
_NAMED = re.compile(r"\(\?P<(\w+)>")
_LOOKAROUND = ("(?<=", "(?<!", "(?=", "(?!")
_BOUNDARY = "\\b"


def _run(body: str) -> bool:
    """A group's body reads a number or hex value: of that shape, and repeated (one digit,
    `[1-9]`, tells a device or an index apart: as written)."""
    return bool(_VALUE.fullmatch(body)) and bool(re.search(r"[+*]|\{\d*,|\{[2-9]|\{\d\d", body))


def _class_end(regex: str, i: int) -> int:
    """The index after the character class that starts at regex[i] == '['."""
    i += 1
    if regex[i : i + 1] == "^":
        i += 1
    if regex[i : i + 1] == "]":
        i += 1
    while i < len(regex) and regex[i] != "]":
        i += 2 if regex[i] == "\\" else 1
    return i + 1


def _body_end(regex: str, start: int) -> int:
    """The index of the `)` that closes the group whose body starts at `start` (escapes and
    character classes skipped), or -1."""
    depth, i = 1, start
    while i < len(regex):
        ch = regex[i]
        if ch == "\\":
            i += 2
            continue
        if ch == "[":
            i = _class_end(regex, i)
            continue
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if not depth:
                return i
        i += 1
    return -1


_OPENER = re.compile(r"(?:\((?:\?(?::|>|P<\w+>))?)+$")


def _standalone(regex: str, start: int, end: int) -> bool:
    """A value on its own: no literal letter, digit, underscore or dot of the regex right
    before or after it, through the groups it opens or closes (`gfx[0-9a-f]+`,
    `gfx(?:(?P<d>\\d+)`, `sm_\\d+`, `\\d+d us` and `\\d+\\.\\d+` are parts of a word or
    a version: a user blanks out a whole value, not a piece of one)."""
    opened = _OPENER.search(regex, 0, start)
    start = opened.start() if opened else start
    while regex.startswith(")", end):
        end += 1
    before = regex[start - 1 : start]
    escaped = start >= 2 and regex[start - 2] == "\\"
    after = regex[end : end + 2]
    word_before = bool(before) and (before.isalnum() or before == "_") and not escaped
    word_after = bool(after) and (after[0].isalnum() or after[0] == "_")
    dotted = (escaped and before == ".") or after == "\\."  # a version's or a decimal's part
    return not (word_before or word_after or dotted)


def _either(out: list[str], value: str, regex: str, after: int) -> int:
    """Append `value` or a placeholder to `out`; a word boundary right before or after the
    value goes with the value (a placeholder such as `0x...` or `[key]` has none there).
    Returns where the regex goes on."""
    before = ""
    if out and out[-1].endswith(_BOUNDARY) and not out[-1].endswith("\\" + _BOUNDARY):
        out[-1] = out[-1][: -len(_BOUNDARY)]
        before = _BOUNDARY
    tail = ""
    if regex.startswith(_BOUNDARY, after):
        tail, after = _BOUNDARY, after + len(_BOUNDARY)
    out.append(f"(?:{before}{value}{tail}|{PLACEHOLDER})")
    return after


def redactable(regex: str) -> str:
    """`regex` with each number or hex value it reads (a named group of that shape, or an
    unnamed run of digits or hex digits) also matching a placeholder."""
    out: list[str] = []
    i = 0
    while i < len(regex):
        ch = regex[i]
        if regex.startswith(_LOOKAROUND, i):  # as written: a lookbehind keeps its fixed width
            end = _body_end(regex, i + 1)
            end = len(regex) if end < 0 else end + 1
            out.append(regex[i:end])
            i = end
            continue
        named = _NAMED.match(regex, i) if ch == "(" else None
        if named:
            end = _body_end(regex, named.end())
            body = regex[named.end() : end]
            if end > 0 and f"(?P={named.group(1)})" in regex:  # read again: as written
                out.append(regex[i : end + 1])
                i = end + 1
                continue
            if end > 0 and _run(body) and _standalone(regex, i, end + 1):
                i = _either(out, regex[i : end + 1], regex, end + 1)
                continue
        atom = _ATOM.match(regex, i) if ch in "\\[0" else None
        if atom and _standalone(regex, i, atom.end()):
            i = _either(out, atom.group(), regex, atom.end())
            continue
        if ch == "\\":
            out.append(regex[i : i + 2])
            i += 2
        elif ch == "[":
            end = _class_end(regex, i)
            out.append(regex[i:end])
            i = end
        else:
            out.append(ch)
            i += 1
    return "".join(out)
