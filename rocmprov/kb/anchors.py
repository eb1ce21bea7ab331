"""Anchors: the literal each pattern is found by in the matcher's one-pass scan. Pure.

Where Hyperscan loads, the scan reads every character once whatever the anchors (kb/literals.py);
a hit costs the same whichever anchor it is. Without it the scan is one regex, a trie of every
anchor: Python's regex engine skips in C over every character that cannot start an anchor and
enters the trie at each one that can, so its speed is set by how often the *first characters*
of the anchors occur in a log. Anchors are therefore
chosen for the whole table at once (`choose_anchors`): each pattern's anchor starts, where it
can, with a character another anchor already starts with, and otherwise with the rarest one in
real logs; and it is at least PREFERRED characters long where the pattern has such a literal
(a short one is often a common word such as "kernel" and hits on healthy lines).

Any substring of a literal that every match contains is itself such a literal, so an anchor
may be any suffix of one (a given `anchor:` of an entry is one as well).
"""

from __future__ import annotations

from re import _constants as sre_constants  # type: ignore[attr-defined]
from re import _parser as sre_parse  # type: ignore[attr-defined]
from typing import Any

MIN_ANCHOR = 4
MIN_MID_ANCHOR = 6  # an anchor that starts inside a word is at least this long
PREFERRED = 8

# Percent of characters in real logs: the captures in tests/fixtures/{dmesg,rocminfo,amd-smi,
# rocm-smi} (38 files, 63 kB of dmesg, rocminfo and smi output), measured 2026-12-01. A
# character not listed is rarer than 0.05 %.
CHAR_PERCENT = {
    " ": 36.54, "0": 5.00, "=": 3.86, "e": 3.19, ":": 2.60, "a": 2.10, "o": 1.77, "r": 1.67,
    "d": 1.65, "i": 1.61, "m": 1.52, "t": 1.49, "1": 1.48, '"': 1.39, "n": 1.35, "u": 1.32,
    "c": 1.22, "l": 1.19, "p": 1.13, "s": 1.13, ".": 1.07, "2": 0.99, "g": 0.97, "4": 0.91,
    "f": 0.90, "A": 0.81, "_": 0.78, "6": 0.78, "3": 0.77, "S": 0.69, "5": 0.69, "R": 0.67,
    "M": 0.62, "9": 0.62, "[": 0.60, "7": 0.60, "]": 0.60, "F": 0.58, "E": 0.57, "x": 0.57,
    "I": 0.55, ",": 0.51, "8": 0.50, "D": 0.48, "N": 0.47, "P": 0.45, "b": 0.41, "C": 0.41,
    "h": 0.39, "v": 0.36, "O": 0.35, "T": 0.33, "G": 0.33, "U": 0.32, "W": 0.31, "(": 0.30,
    ")": 0.30, "B": 0.27, "k": 0.27, "-": 0.26, "y": 0.25, "/": 0.24, "z": 0.23, "*": 0.22,
    "L": 0.21, "w": 0.19, "V": 0.19, "K": 0.13, "%": 0.11, "{": 0.11, "H": 0.11, "}": 0.10,
    "X": 0.08, "\t": 1.0,
}  # fmt: skip
RARE = 0.03


def literal_runs(items: Any) -> list[str]:
    """Literal substrings that every match of the parsed (sub)pattern contains."""
    runs: list[str] = []
    current: list[str] = []

    def flush() -> None:
        if current:
            runs.append("".join(current))
            current.clear()

    for op, arg in items:
        if op is sre_constants.LITERAL:
            current.append(chr(arg))
        elif op is sre_constants.SUBPATTERN:
            # (?P<x>...) or (?:...) without quantifier: its literals are required, in sequence
            _group, add_flags, del_flags, sub = arg
            body = list(sub)
            if add_flags or del_flags:
                flush()
            elif body and all(o is sre_constants.LITERAL for o, _a in body):
                current.extend(chr(a) for _o, a in body)
            else:
                flush()
                runs.extend(literal_runs(body))
        elif op is sre_constants.MAX_REPEAT or op is sre_constants.MIN_REPEAT:
            low, _high, sub = arg
            flush()
            if low >= 1:
                runs.extend(literal_runs(sub))
        elif op is sre_constants.AT:
            continue  # ^ $ \b take no characters
        else:
            flush()
    flush()
    return runs


def regex_runs(regex: str) -> list[str]:
    """The one-line required literals of a regex."""
    return [part for run in literal_runs(sre_parse.parse(regex)) for part in run.split("\n")]


def _options(runs: list[str]) -> list[tuple[str, bool]]:
    """(suffix, starts at a word boundary) of the runs, at least 4 characters at a word start
    and 6 inside a word."""
    allowed: list[tuple[str, bool]] = []
    for run in runs:
        for i in range(len(run)):
            word_start = i == 0 or not run[i - 1].isalnum() or run[i].isupper()
            if len(run) - i >= (MIN_ANCHOR if word_start else MIN_MID_ANCHOR):
                allowed.append((run[i:], word_start))
    return allowed


SHORT_PENALTY = 0.5  # percent-equivalent cost of an anchor shorter than PREFERRED


def _cost(option: tuple[str, bool], starts: set[str]) -> tuple[float, float, int]:
    anchor, word_start = option
    percent = CHAR_PERCENT.get(anchor[0], RARE)
    new = 0.0 if anchor[0] in starts else percent
    if len(anchor) < PREFERRED or anchor.strip().isalpha():
        # short, or one bare word ("filesystem", "firmware"): such words are on healthy lines
        # too (EXT4's "mounted filesystem"), and every hit there costs a regex run
        new += SHORT_PENALTY
    # then: the rarer first character, a word start, the longer literal
    return new, percent + (0.0 if word_start else 1.0), -min(len(anchor), 24)


def choose_anchors(patterns: list[list[str]], starts: set[str] | None = None) -> list[str]:
    """One anchor per pattern (given as its runs), chosen jointly: the patterns with the fewest
    options first, each taking the option that adds the least first-character frequency to
    the scan (`starts`: first characters already in it). '' for a pattern without any literal
    of MIN_ANCHOR characters."""
    options = [_options(runs) for runs in patterns]
    order = sorted(range(len(patterns)), key=lambda k: (len(options[k]), k))
    starts = set(starts or ())
    chosen = [""] * len(patterns)
    for k in order:
        if not options[k]:
            continue
        anchor = min(options[k], key=lambda o: _cost(o, starts))[0]
        chosen[k] = anchor
        starts.add(anchor[0])
    return chosen


def derive_anchor(regex: str) -> str:
    """The anchor of one regex on its own (no other anchors chosen yet)."""
    return choose_anchors([regex_runs(regex)])[0]


def _flat(items: Any, out: list[str | int]) -> None:
    """The top-level sequence of a parsed regex as characters (its literals) and ints (the
    most characters an item between them can take); plain groups are opened in place."""
    for op, arg in items:
        if op is sre_constants.LITERAL:
            out.append(chr(arg))
        elif op is sre_constants.SUBPATTERN and not (arg[1] or arg[2]):
            _flat(arg[3], out)
        elif op is not sre_constants.AT:
            out.append(sre_parse.SubPattern(items.state, [(op, arg)]).getwidth()[1])


def reach_before(regex: str, anchor: str, flags: int = 0) -> int | None:
    """The most characters a match of `regex` can hold before the `anchor` it is found by, or
    None where the anchor is not one of its top-level literals (inside a repeat or an
    alternative). A match is then searched for from that far before a hit of its anchor, not
    from its whole width before (kb/scan.py)."""
    if not anchor:
        return None
    seq: list[str | int] = []
    _flat(sre_parse.parse(regex, flags), seq)
    reach: int | None = None
    offset, run, run_at = 0, "", 0
    for item in [*seq, 0]:
        if isinstance(item, str):
            run, run_at = (run + item, run_at) if run else (item, offset)
            offset += 1
            continue
        at = run.find(anchor)
        while at >= 0:
            reach = max(reach or 0, run_at + at)
            at = run.find(anchor, at + 1)
        run = ""
        offset += item
    return reach
