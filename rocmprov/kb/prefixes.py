"""Log prefixes on the continuation lines of a multi-line pattern. Pure.

A message of several lines reaches `explain` with each line prefixed the same way when it went
through a log (the journal, dmesg, a timestamped service log, torchrun's per-rank output, docker
compose's or kubectl's per-container logs) and bare when pasted from a terminal. A table
pattern is written from one report's text; `continued(regex)` lets every line break of it (`\\n`
outside a character class) be followed by one such prefix, so that the pattern does not require,
nor fail on, the prefix its report happened to have. The prefix is possessive (`?+`): taken
whole when it is there, so that a `[^\n]*` after the break cannot take it too. Two ways through
every prefixed line made a pattern spanning 30 lines exponential when it failed (round 15: the
benchmark's 100 MB log never finished; tests/test_kb_linear.py).
"""

from __future__ import annotations

import re

from rocmprov.kb.redact import PLACEHOLDER
from rocmprov.kb.regexatoms import class_end, group_close

LOG_PREFIX = (
    r"(?:\[[ \t]*\d+\.\d+\] ?"  # dmesg: [   12.345678]
    r"|\[[A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \d{4}\] ?"  # dmesg -T
    # journal, syslog (journalctl -o short-precise: fractions of a second)
    r"|[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d(?:\.\d+)? \S+ [\w\-./@]+(?:\[\d+\])?: "
    r"|\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?:? ?"  # ISO time
    r"(?:\S+ (?:kernel|[\w\-./@]+\[\d+\]): )?"  # journalctl -o short-iso: host, tag
    r"(?:(?:INFO|WARNING|WARN|ERROR|DEBUG|CRITICAL|FATAL):? )?"  # and its level
    r"|\((?:\w+ )*pid=\d+\) "  # (VllmWorker rank=0 pid=12)
    # torchrun's per-rank prefix, "[{role}{local rank}]:" ([default0]:, [trainer0]:, [rank0]:)
    # or a template's ([0]:); possessive, as the next two: one way through, no backtracking
    r"|\[[A-Za-z_]{0,32}+\d{1,5}+\]: ?"
    r"|[\w.-]{1,64}+ +\| "  # docker compose: ollama-1  | , proj_ollama_1  | , ollama  |
    r"|\[pod/[^\]\s]{1,200}+\] "  # kubectl logs --prefix: [pod/vllm-0/vllm]
    r")"
)


def continued(regex: str) -> str:
    """`regex` with an optional LOG_PREFIX after each of its line breaks (a `\\n` outside a
    character class: classes are copied whole, kb/regexatoms.py)."""
    out: list[str] = []
    i = 0
    while i < len(regex):
        ch = regex[i]
        if ch == "\\" and i + 1 < len(regex):
            pair = regex[i : i + 2]
            if pair == r"\n":
                # a quantified break (`\n?`, `\n*`) keeps its quantifier: group it with its prefix
                quantified = regex[i + 2 : i + 3] in ("?", "*", "+", "{")
                out.append(f"(?:\\n{LOG_PREFIX}?+)" if quantified else f"\\n{LOG_PREFIX}?+")
            else:
                out.append(pair)
            i += 2
        elif ch == "[":
            end = class_end(regex, i)
            out.append(regex[i:end])
            i = end
        else:
            out.append(ch)
            i += 1
    return "".join(out)


# ---------------------------------------------------------------- a line cut at a terminal's width

# where a cut line may end: the line's end, after an ellipsis a pager or web page put there
_CUT_END = r"(?:\.\.\.|…)?\r?$"
_QUANTIFIER = re.compile(r"(?:[*+?]|\{\d*(?:,\d*)?\})[?+]?")


def _atom_end(regex: str, i: int) -> int | None:
    """The end of the atom at `i` (a character, an escape, a class or a group), or None for a
    top-level `|` (a pattern of alternatives is not cut)."""
    ch = regex[i]
    if ch == "\\":
        return i + {"x": 4, "u": 6, "U": 10}.get(regex[i + 1 : i + 2], 2)
    if ch == "|":
        return None
    if ch == "[":
        return class_end(regex, i)
    if ch == "(":
        close = group_close(regex, i + 1)
        return len(regex) if close < 0 else close + 1
    return i + 1


def atoms(regex: str) -> list[str] | None:
    """The top-level atoms of `regex`, each with its quantifier; None when it has a top-level
    `|` or cannot be split."""
    out: list[str] = []
    i = 0
    while i < len(regex):
        j = _atom_end(regex, i)
        if j is None or j > len(regex):
            return None
        q = _QUANTIFIER.match(regex, j)
        j = q.end() if q else j
        out.append(regex[i:j])
        i = j
    return out


def _literal(atom: str) -> str | None:
    if len(atom) == 1 and atom not in ".^$*+?{}[]()|\\":
        return atom
    if len(atom) == 2 and atom[0] == "\\" and not atom[1].isalnum():
        return atom[1]
    return None


def cut_at_line_end(regex: str, anchor: str) -> str:
    """`regex` that also matches a line cut (at a terminal's or a web page's width) anywhere
    after its anchor: every atom after the anchor is either matched or the line ends there
    (`(?:a(?:b(?:c|$)|$)|$)`). Unchanged when the anchor is not a top-level literal run or
    nothing follows it, and for a pattern of several lines (a cut line there ends a line that
    the pattern needs the next one of)."""
    parts = atoms(regex)
    if parts is None or "\\n" in regex:
        return regex
    run, end = "", -1
    for k, atom in enumerate(parts):
        lit = _literal(atom)
        run = run + lit if lit is not None else ""
        if anchor and run.endswith(anchor):
            end = k
            break
    if end < 0 or end == len(parts) - 1:
        return regex
    return "".join(parts[: end + 1]) + _cut_tail(parts[end + 1 :], parts[end])


_GROUP_OPEN = re.compile(r"\((?:\?P<\w+>|\?:)?")


def _cut_atom(atom: str) -> str:
    """An atom that may itself end at the line's end part-way: a group without a quantifier
    and without a top-level `|` has its own atoms cut the same way."""
    opener = _GROUP_OPEN.match(atom)
    if opener is None or not atom.endswith(")") or atom.startswith(("(?=", "(?!", "(?<")):
        return atom
    if _redacted(atom):  # (?:VALUE|PLACEHOLDER): cut inside the value as written (kb/redact.py)
        value = _REDACTED_VALUE.match(atom)
        inner = atoms(value.group(1)) if value else None
        if not inner:
            return atom
        return "(?:" + _cut_atom(inner[0]) + _cut_tail(inner[1:], inner[0]) + atom[value.end(1) :]
    inner = atoms(atom[opener.end() : -1])
    if not inner or atoms(atom) != [atom]:
        return atom
    return atom[: opener.end()] + inner[0] + _cut_tail(inner[1:], inner[0]) + ")"


_OPEN_ENDED = re.compile(r"(?:[*+]|\{\d*,\})[?+]?$")
_OPTIONAL = re.compile(r"(?:[?*]|\{0?,\d*\})[?+]?$")


def _redacted(atom: str) -> bool:
    """`(?:VALUE|PLACEHOLDER)`: a value kb/redact.py let a placeholder stand for."""
    return atom.endswith(_REDACTED_END)


_REDACTED_END = "|" + PLACEHOLDER + ")"
# (?:VALUE|PLACEHOLDER) as kb/redact.py writes it; VALUE (group 1) holds no top-level `|`
_REDACTED_VALUE = re.compile(r"\(\?:((?:\\.|[^|\\])*)\|")


def _open_ended(atom: str) -> bool:
    """An atom that ends open-ended; a redacted value as its value as written does."""
    if _redacted(atom):
        value = _REDACTED_VALUE.match(atom)
        inner = atoms(value.group(1)) if value else None
        return bool(inner) and _open_ended(inner[-1])
    return _OPEN_ENDED.search(atom) is not None


def _cut_tail(parts: list[str], before: str) -> str:
    """`(?:a(?:b(?:c|END)|END)|END)` over `parts` (`before`: the atom just before them),
    groups cut inside as well. No END right after an open-ended atom (`\\w+`, `\\S*`, or one
    followed only by optional atoms): a line that ends there is whole, not cut
    (`undefined symbol: hip\\w+R0600` must not take any `undefined symbol: hipFoo` for a cut
    `...R0600`). A group ending in one is not looked into: its captures (`(?P<path>\\S+)`) are
    where a terminal cuts a long line, and those cut lines are kept."""
    # opened[k]: the atoms before parts[k] end open-ended (opened[0]: `before` does)
    opened = [_open_ended(before)]
    for atom in parts[:-1]:
        optional_after_open = opened[-1] and _OPTIONAL.search(atom) is not None
        opened.append(_open_ended(atom) or optional_after_open)
    tail = ""
    for k in range(len(parts) - 1, -1, -1):
        end = "" if opened[k] else f"|{_CUT_END}"
        tail = f"(?:{_cut_atom(parts[k])}{tail}{end})"
    return tail
