"""Values a user blanked out before pasting. Pure.

People hide what they take for private or noise before they post a log: a key id becomes
`[key]` or `XXXXXXXX`, an address `0x...`, a serial number `****` or `<redacted>`. A pattern
that reads such a value as a number or a hex string then misses the message although every
word of it is there.

`redactable(regex)` lets a number or hex value the regex reads on its own match a placeholder
instead: a named group whose whole body is such a value (`(?P<agent>0x[0-9a-f]+)`,
`(?P<t>\\d{9,11})`; the group then captures nothing and the answer lacks that value), or an
unnamed run (`\\d+`, `0x[0-9a-f]+`, `[0-9A-F]{16}`) between a literal space or punctuation
and another. It stays as written where the value is not a private detail but part of what the
entry reads:

- a piece of a word or a version (`gfx[0-9a-f]+`, `gfx1[01][0-9a-f]{2}`, `sm_\\d+`,
  `\\d+\\.\\d+`, anything next to a quantifier, a class or a dot), and any value inside a
  named group that holds more than the value (a gfx target, a library name);
- a number whose range is the point (`[1-9]\\d*`: not zero; `[2-9]\\d* GiB`: two or more);
- a group a backreference reads again, and every regex with a conditional or a numbered
  backreference; lookarounds.

A placeholder is what people write in a value's place, never a word of a log: a bracketed or
angled word from a short list (`[key]`, `<hostname>`, `[REDACTED]`, `<user>`, not `[drm]`,
`[INFO]` or `<module>`), `0x` followed by dots or x's, three dots or an ellipsis, a run of
three or more `*`, `X` or `x` standing alone.

The line-cut rule (kb/prefixes.py) reads the value inside such a group as written; the anchors
are taken from the rewritten regex (kb/table.py).
"""

from __future__ import annotations

import re

from rocmprov.kb.regexatoms import class_end, group_close, structure

_WORDS = (
    r"(?i:redacted|removed|hidden|masked|snip(?:ped)?|private|key(?:[ _-]?id)?|uuid|serial"
    r"|host(?:name)?|user(?:name)?|ip|address|addr|number|num|value|pid|email|token|hash)"
)
PLACEHOLDER = (
    rf"(?:[\[<]{_WORDS}[\]>]"
    r"|0x(?:\.{2,3}|\u2026|[Xx]{2,16})|\.{3}|\u2026"
    r"|(?<![\w*])\*{3,16}(?![\w*])|(?<!\w)[Xx]{3,16}(?!\w))"
)
# one item of a number or hex shape: \d, a digit or hex class, a literal colon, each with an
# optional quantifier; `-` or `-?` first, `0x` first (no dot: a version's or a decimal's part)
_ITEM = (
    r"(?:\\d|\[(?:\\d|[0-9]-[0-9]|[a-fA-F]-[a-fA-F]|[:0-9a-fA-F])+\]|:)(?:[+*?]|\{\d+(?:,\d*)?\})?"
)
_VALUE = re.compile(rf"(?:-\??)?(?:0x)?(?:{_ITEM})+")
# an unnamed value where the regex reads one: digits or hex digits repeated (\d+, \d{9,11},
# 0x[0-9a-f]+, [0-9A-F]{16}), lazy or possessive or not; a single digit or an optional run
# (\d, \d*, \d?) is a part of a word, not a value
_ATOM = re.compile(
    r"(?:-\??)?(?:0x)?(?:\\d|\[(?:\\d|[0-9]-[0-9]|[a-fA-F]-[a-fA-F])+\])"
    r"(?:\+|\{[1-9]\d*(?:,\d*)?\})[?+]?"
)
_RANGED = re.compile(r"\[[1-9]")  # [1-9]\d*, [2-9]\d*: the number's range is the point
_NAMED = re.compile(r"\(\?P<(\w+)>")
_LOOKAROUND = ("(?<=", "(?<!", "(?=", "(?!")
_UNSAFE = re.compile(r"\(\?\(|\\[1-9]")  # a conditional, a numbered backreference
_OPENER = re.compile(r"(?:\((?:\?(?::|>|P<\w+>))?)+$")
_BOUNDARY = "\\b"


def _run(body: str) -> bool:
    """A group's body reads a number or hex value: of that shape, repeated (one digit tells a
    device or an index apart) and of any value (not `[1-9]\\d*`)."""
    repeated = re.search(r"[+*]|\{\d*,|\{[2-9]|\{\d\d", body)
    return bool(_VALUE.fullmatch(body)) and bool(repeated) and not _RANGED.search(body)


def _escaped(regex: str, i: int) -> bool:
    """regex[i] is escaped by an odd run of backslashes."""
    run = 0
    while i - run - 1 >= 0 and regex[i - run - 1] == "\\":
        run += 1
    return run % 2 == 1


def _enclosing(regex: str, i: int) -> tuple[int, int]:
    """(start, end) of the innermost group around index `i` (its `(` and the index after its
    `)`), or (-1, -1) at the top level."""
    stack: list[int] = []
    for j in structure(regex):
        ch = regex[j]
        if ch == "(":
            stack.append(j)
        elif ch == ")":
            opened = stack.pop() if stack else -1
            if opened < i <= j:
                return opened, j + 1
    return -1, -1


def _separator_before(regex: str, start: int) -> bool:
    """What the regex reads right before `start` (through the groups it opens) is the text's
    start, a literal space or punctuation, or an escaped one (`\\(`, `\\s`, `\\b`): not a
    letter, a digit, an underscore or a dot, and not a quantifier, a class, a group's end or an
    alternation, whose letter or digit the value would be a piece of."""
    opened = _OPENER.search(regex, 0, start)
    start = opened.start() if opened else start
    if start == 0 or (regex[start - 1] == "^" and not _escaped(regex, start - 1)):
        return True
    ch = regex[start - 1]
    if _escaped(regex, start - 1):
        return ch in "sb" or not (ch.isalnum() or ch == ".")
    return not (ch.isalnum() or ch in "_.?*+}])|")


def _separator_after(regex: str, end: int) -> bool:
    """The same after `end` (through the groups it closes): the regex's end, `$`, a literal
    space or punctuation, or an escaped one; not a quantifier on the group, a class, a dot, a
    group or an alternation."""
    while regex.startswith(")", end):
        end += 1
    if end >= len(regex):
        return True
    ch = regex[end]
    if ch == "|":  # an alternative's end: what follows the group
        _, after = _enclosing(regex, end)
        return after < 0 or _separator_after(regex, after)
    if ch == "\\":
        nxt = regex[end + 1 : end + 2]
        return nxt in "sbn" or not (nxt.isalnum() or nxt == ".")
    return not (ch.isalnum() or ch in "_.?*+{[(")


def _either(out: list[str], value: str, regex: str, after: int) -> int:
    """Append `value` or a placeholder to `out`; a word boundary right before or after the
    value goes with the value (a placeholder such as `0x...` or `[key]` has none there).
    Returns where the regex goes on."""
    before = ""
    if out and out[-1] == _BOUNDARY:
        out.pop()
        before = _BOUNDARY
    tail = ""
    if regex.startswith(_BOUNDARY, after):
        tail, after = _BOUNDARY, after + len(_BOUNDARY)
    out.append(f"(?:{before}{value}{tail}|{PLACEHOLDER})")
    return after


def _verbatim(out: list[str], regex: str, start: int, end: int) -> int:
    out.append(regex[start:end])
    return end


def redactable(regex: str) -> str:
    """`regex` with each number or hex value it reads on its own also matching a placeholder
    (the module's rule)."""
    if _UNSAFE.search(regex):
        return regex
    out: list[str] = []
    i = 0
    while i < len(regex):
        ch = regex[i]
        if ch == "(" and regex.startswith(_LOOKAROUND, i):  # as written: lookbehinds keep widths
            end = group_close(regex, i + 1)
            i = _verbatim(out, regex, i, len(regex) if end < 0 else end + 1)
            continue
        named = _NAMED.match(regex, i) if ch == "(" else None
        if named:
            end = group_close(regex, named.end())
            if end < 0:
                i = _verbatim(out, regex, i, len(regex))
                continue
            body = regex[named.end() : end]
            free = f"(?P={named.group(1)})" not in regex
            if (
                free
                and _run(body)
                and _separator_before(regex, i)
                and _separator_after(regex, end + 1)
            ):
                i = _either(out, regex[i : end + 1], regex, end + 1)
            else:  # a value read again, or a group that holds more than the value: as written
                i = _verbatim(out, regex, i, end + 1)
            continue
        atom = _ATOM.match(regex, i) if ch in "\\[0-" else None
        if (
            atom
            and not _RANGED.search(atom.group())
            and _separator_before(regex, i)
            and _separator_after(regex, atom.end())
        ):
            i = _either(out, atom.group(), regex, atom.end())
            continue
        if ch == "\\":
            out.append(regex[i : i + 2])
            i += 2
        elif ch == "[":
            i = _verbatim(out, regex, i, class_end(regex, i))
        else:
            out.append(ch)
            i += 1
    return "".join(out)
