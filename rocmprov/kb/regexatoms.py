"""Where the pieces of a regex's source end: a character class, a group. Pure, no imports.

kb/redact.py (which values a pattern reads on their own) and kb/prefixes.py (a pattern's
top-level atoms, to cut it at a line's end; its line breaks outside classes, to let a log prefix
follow them) walk a pattern's source skipping escapes and character classes; this is that walk,
once. prefixes.py imports redact.py, so it lives in a
module of its own (no import circle: tests/test_architecture.py). It reads the source as text:
a pattern that does not compile gets an answer, not an error (an unclosed group runs to the
end).
"""

from __future__ import annotations

from collections.abc import Iterator


def class_end(regex: str, i: int) -> int:
    """The index after the character class that starts at regex[i] == '[' (a `]` first in it,
    or after its `^`, is a member, not its end)."""
    i += 1
    if regex[i : i + 1] == "^":
        i += 1
    if regex[i : i + 1] == "]":
        i += 1
    while i < len(regex) and regex[i] != "]":
        i += 2 if regex[i] == "\\" else 1
    return i + 1


def structure(regex: str, start: int = 0) -> Iterator[int]:
    """The indexes of regex[start:]'s characters outside escapes and character classes (a
    class's `[` is given, its members skipped): where a `(`, `)` or `|` is the pattern's own."""
    i = start
    while i < len(regex):
        ch = regex[i]
        if ch == "\\":
            i += 2
            continue
        yield i
        i = class_end(regex, i) if ch == "[" else i + 1


def group_close(regex: str, start: int) -> int:
    """The index of the `)` that closes the group whose body starts at `start`, or -1."""
    depth = 1
    for i in structure(regex, start):
        ch = regex[i]
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if not depth:
                return i
    return -1
