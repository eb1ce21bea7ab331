"""What a regex's parsed form says about its matches, as the matcher's scan needs it: how many
line breaks a match can span (`newline_bound`, the table's hygiene test), the literal every
match starts with (`literal_prefix`), the literals every match holds (`required_literals`), the
characters a match can start with (`first_chars`) and the part of a match before it reads to
its line's end (`line_head`: one start a line is enough). Pure; read by kb/target.py (a pattern
as the scan runs it), whose windows and starts kb/window.py finds.
"""

from __future__ import annotations

import re
from functools import lru_cache
from re import _compiler as sre_compiler  # type: ignore[attr-defined]
from re import _constants as sre_constants  # type: ignore[attr-defined]
from re import _parser as sre_parse  # type: ignore[attr-defined]
from typing import Any

_UNBOUNDED = 1 << 30
_NEWLINE_CATEGORIES = frozenset(
    getattr(sre_constants, name)
    for name in ("CATEGORY_SPACE", "CATEGORY_NOT_DIGIT", "CATEGORY_NOT_WORD",
                 "CATEGORY_LINEBREAK", "CATEGORY_UNI_SPACE", "CATEGORY_UNI_NOT_DIGIT",
                 "CATEGORY_UNI_NOT_WORD", "CATEGORY_UNI_LINEBREAK")
)  # fmt: skip


def _class_has_newline(items: Any) -> bool:
    negate, hit = False, False
    for op, arg in items:
        if op is sre_constants.NEGATE:
            negate = True
        elif op is sre_constants.LITERAL:
            hit = hit or arg == 10
        elif op is sre_constants.RANGE:
            hit = hit or arg[0] <= 10 <= arg[1]
        elif op is sre_constants.CATEGORY:
            hit = hit or arg in _NEWLINE_CATEGORIES
        else:  # a charset bitmap: take it as holding a newline
            hit = True
    return hit != negate


def _newlines(items: Any, dotall: bool, groups: dict[int, int]) -> int:
    """The most line breaks a match of the parsed (sub)pattern can hold or look ahead over.
    `groups`: each capture group's count so far, which a back-reference to it repeats."""
    total = 0
    for op, arg in items:
        if op is sre_constants.LITERAL:
            total += arg == 10
        elif op is sre_constants.NOT_LITERAL:
            total += arg != 10
        elif op is sre_constants.ANY:
            total += dotall
        elif op is sre_constants.IN:
            total += _class_has_newline(arg)
        elif op in (sre_constants.MAX_REPEAT, sre_constants.MIN_REPEAT,
                    getattr(sre_constants, "POSSESSIVE_REPEAT", None)):  # fmt: skip
            width = _newlines(arg[2], dotall, groups)
            if width:
                total += _UNBOUNDED if arg[1] is sre_constants.MAXREPEAT else width * arg[1]
        elif op is sre_constants.SUBPATTERN:
            add, remove = arg[1], arg[2]
            inner = (dotall or bool(add & re.DOTALL)) and not remove & re.DOTALL
            count = _newlines(arg[3], inner, groups)
            if arg[0] is not None:
                groups[arg[0]] = max(groups.get(arg[0], 0), count)
            total += count
        elif op is sre_constants.BRANCH:
            total += max(_newlines(b, dotall, groups) for b in arg[1])
        elif op is getattr(sre_constants, "ATOMIC_GROUP", None):
            total += _newlines(arg, dotall, groups)
        elif op in (sre_constants.ASSERT, sre_constants.ASSERT_NOT):
            total += _newlines(arg[1], dotall, groups) if arg[0] > 0 else 0  # a lookahead reads on
        elif op is sre_constants.GROUPREF:  # a group defined before it (Python's rule)
            total += groups.get(arg, _UNBOUNDED)
        elif op is sre_constants.GROUPREF_EXISTS:  # (?(1)yes|no)
            total += max(_newlines(arg[1], dotall, groups),
                         _newlines(arg[2], dotall, groups) if arg[2] else 0)  # fmt: skip
    return min(total, _UNBOUNDED)


@lru_cache(maxsize=4096)
def newline_bound(pattern: str, flags: int) -> int:
    """The most line breaks a match of `pattern` can span (or look ahead over). The scan cuts a
    match at its declared lines (starting_by); the table's hygiene test checks that no pattern
    could run on further (tests/test_kb_hygiene.py)."""
    return _newlines(sre_parse.parse(pattern, flags), bool(flags & re.DOTALL), {})


MAX_FIRSTS = 40  # more possible first characters than this: the regex engine's own scan


def _firsts(items: Any) -> tuple[frozenset[str] | None, bool]:
    """(the characters a match of the parsed items can start with, or None when unknown; whether
    the items can match nothing). Zero-width items (\\b, ^, lookarounds) are passed over."""
    out: set[str] = set()
    for op, arg in items:
        if op is sre_constants.AT or op in (sre_constants.ASSERT, sre_constants.ASSERT_NOT):
            continue
        chars, empty = _first_of(op, arg)
        if chars is None:
            return None, False
        out |= chars
        if not empty:
            return frozenset(out), False
    return frozenset(out), True


def _first_of(op: Any, arg: Any) -> tuple[frozenset[str] | None, bool]:
    if op is sre_constants.LITERAL:
        return frozenset(chr(arg)), False
    if op is sre_constants.IN:
        if any(o is not sre_constants.LITERAL for o, _a in arg):
            return None, False  # a range, a category or a negated class: too broad to list
        return frozenset(chr(a) for _o, a in arg), False
    if op is sre_constants.SUBPATTERN:
        if arg[1] & re.IGNORECASE:
            return None, False
        return _firsts(arg[3])
    if op is getattr(sre_constants, "ATOMIC_GROUP", None):
        return _firsts(arg)
    if op is sre_constants.BRANCH:
        out: set[str] = set()
        empty = False
        for branch in arg[1]:
            chars, none = _firsts(branch)
            if chars is None:
                return None, False
            out |= chars
            empty = empty or none
        return frozenset(out), empty
    if op in (sre_constants.MAX_REPEAT, sre_constants.MIN_REPEAT,
              getattr(sre_constants, "POSSESSIVE_REPEAT", None)):  # fmt: skip
        chars, empty = _firsts(arg[2])
        return chars, empty or arg[0] == 0
    return None, False


@lru_cache(maxsize=4096)
def literal_prefix(pattern: str, flags: int) -> str:
    """The literal every match of `pattern` starts with ('' when it has none). Zero-width
    assertions before it (`\\b`, `^`) are passed over: a match still starts at the literal
    (`\\bring comp_...` is tried at each "ring ", not at every "r" of a line)."""
    parsed = sre_parse.parse(pattern, flags)
    skip = 0
    while skip < len(parsed) and parsed[skip][0] is sre_constants.AT:
        skip += 1
    chars, _skip, _all = sre_compiler._get_literal_prefix(parsed[skip:], flags)
    return "".join(map(chr, chars))


def _runs(items: Any, out: list[str], run: str) -> str:
    """Literal runs of the parsed items that every match consumes, into `out`; returns the run
    still open at their end."""
    for op, arg in items:
        if op is sre_constants.LITERAL:
            run += chr(arg)
        elif op is sre_constants.SUBPATTERN and not arg[1] and not arg[2]:  # a plain group
            run = _runs(arg[3], out, run)
        else:  # anything else may match other text (or nothing): the run ends
            out.append(run)
            run = ""
    return run


@lru_cache(maxsize=4096)
def required_literals(pattern: str, flags: int) -> tuple[str, ...]:
    """Literals that every match of `pattern` holds in its matched text (not in a look-around),
    longest first; none for a case-insensitive pattern. Where one is missing from a window, no
    match of the pattern can lie in that window."""
    parsed = sre_parse.parse(pattern, flags)
    if parsed.state.flags & re.IGNORECASE:
        return ()
    out: list[str] = []
    out.append(_runs(parsed, out, ""))
    return tuple(sorted((run for run in out if run), key=len, reverse=True))


@lru_cache(maxsize=4096)
def first_chars(pattern: str, flags: int) -> str:
    """The characters every match of `pattern` starts with, sorted ('' when not known, when it
    can match nothing, or when there are more than MAX_FIRSTS of them)."""
    if flags & re.IGNORECASE:
        return ""
    chars, empty = _firsts(sre_parse.parse(pattern, flags))
    if chars is None or empty or len(chars) > MAX_FIRSTS:
        return ""
    return "".join(sorted(chars))


# ------------------------------------------------- a head, then the rest of its line (line_head)

_REPEATS = tuple(
    op
    for op in (sre_constants.MAX_REPEAT, sre_constants.MIN_REPEAT,
               getattr(sre_constants, "POSSESSIVE_REPEAT", None))
    if op
)  # fmt: skip
_REFS = (sre_constants.GROUPREF, sre_constants.GROUPREF_EXISTS)


def _to_line_end(items: Any, dotall: bool) -> bool:
    """Whether every match of the items begins by reading to the first line break on and over
    it, wherever on the line they start: `[^\\n]*` (or `.*`; greedy, lazy or possessive) then
    what can only begin with that break (`\\n`, `(?:\\n[^\\n]*){0,6}?\\n`), or a repeat of at least
    once of something that begins so, or a group that does. Wherever on a line the items start,
    they go on from the same place, the next line's start."""
    if not items:
        return False
    op, arg = items[0]
    if op is sre_constants.SUBPATTERN:  # a group's content, then what follows it
        inner = (dotall or bool(arg[1] & re.DOTALL)) and not arg[2] & re.DOTALL
        return inner == dotall and _to_line_end([*arg[3], *items[1:]], dotall)
    if op not in _REPEATS:
        return False
    if arg[0] >= 1 and _to_line_end(list(arg[2]), dotall):
        return True  # its first time reads to the break
    run = list(arg[2])
    rest_of_line = run == [(sre_constants.NOT_LITERAL, 10)] or (
        len(run) == 1 and run[0][0] is sre_constants.ANY and not dotall
    )
    if not rest_of_line or arg[0] != 0 or arg[1] is not sre_constants.MAXREPEAT:
        return False
    chars, empty = _firsts(items[1:])  # the only break the run reaches is its line's own
    return chars == frozenset("\n") and not empty


def _refers(items: Any) -> bool:
    """Whether the parsed items hold a back-reference or a (?(group)...) anywhere."""
    for op, arg in items:
        if op in _REFS:
            return True
        parts = arg if isinstance(arg, (tuple, list)) else (arg,)
        for part in parts:
            subs = part if isinstance(part, list) else [part]  # a branch's alternatives
            if any(isinstance(sub, sre_parse.SubPattern) and _refers(sub) for sub in subs):
                return True
    return False


@lru_cache(maxsize=4096)
def line_head(pattern: str, flags: int) -> re.Pattern[str] | None:
    """HEAD of a pattern shaped HEAD REST, compiled on its own, where HEAD never reads past its
    line's break and REST begins by reading to that break (`(?:[^\\n]*\\n){m,n}` with m >= 1,
    lazy or greedy, or `[^\\n]*\\n`) and refers to no group. REST then goes on from the next
    line's start wherever on its line HEAD ended, and the text a start's lines end at is the
    same for every start on a line (kb/window.py): where a match failed from a start at which
    HEAD matched, no later start on that line can match, and starting_by tries one a line for
    these. None for any other pattern. 60 of the table's 192 multi-line patterns have this
    shape (session 30); one of them tried from every "ROCm" of 15 lines of 8,000 characters read
    on up to 15 lines from each: the square of the lines' length."""
    parsed = sre_parse.parse(pattern, flags)
    dotall = bool(parsed.state.flags & re.DOTALL)
    items = list(parsed)
    for k in range(1, len(items)):
        if not _to_line_end(items[k:], dotall):
            continue
        head = items[:k]
        if _newlines(head, dotall, {}) or _refers(items[k:]):
            return None
        try:  # the head alone, compiled as re.compile compiles a parsed pattern (a private
            # API: where it fails, every start is tried)
            alone = sre_parse.SubPattern(parsed.state, head)
            return sre_compiler.compile(alone, flags)  # type: ignore[no-any-return]
        except Exception:
            return None
    return None
