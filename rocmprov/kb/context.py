"""Facts seen anywhere in a log: the GPU's gfx target, the ROCm and kernel versions, a PCI address
and the GPU's name. They fill every matched entry's placeholders and choose its conditional fix,
also when the error itself is on another line (rocminfo at the top, the library error at the
bottom). Pure.

When a placeholder has no value at all, `hint(name)` says how to get it instead of printing a
bare placeholder.
"""

from __future__ import annotations

import heapq
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

# name -> regexes, most reliable first; group 1 is the value
_PATTERNS: dict[str, tuple[str, ...]] = {
    # every pattern starts with a literal (or names the literals inside it in _INNER): the search
    # skips in C to its occurrences
    # (a leading \b or character class would make it try every position); the word boundary
    # before the literal is checked afterwards (_BOUNDED)
    "gfx": (r"gfx((?:[0-9]{3,4}|[0-9]{2,3}[a-f]))(?![0-9a-z])",),
    "rocm_version": (
        r"/opt/rocm-(\d+\.\d+\.\d+)",
        # TheRock (ROCm Core SDK 7.12 onward, 10.x) installs to /opt/rocm/core-X.Y
        r"/opt/rocm/core-(\d+\.\d+(?:\.\d+)?)(?![\d.])",
        r"ROCm(?: [Vv]ersion)?[: ]+v?(\d+\.\d+(?:\.\d+)?)\b",
        r"\+rocm(\d+\.\d+(?:\.\d+)?)\b",
        r"ROCM_VERSION[=: ]+(\d+\.\d+(?:\.\d+)?)",
    ),
    "kernel": (
        r"Linux version (\d+\.\d+\.\d+[^\s]*)",
        r"Kernel(?: [Vv]ersion)?[: ]+(\d+\.\d+\.\d+-[^\s,;)]+)",
        # WSL's kernel as uname -r/-a prints it, wherever it stands: WSL2 from 5.10 on
        # ("5.15.153.1-microsoft-standard-WSL2"), WSL2 before ("4.19.128-microsoft-standard"),
        # WSL1, which has no Linux kernel and reports the Windows build ("4.4.0-19041-Microsoft")
        r"\b(\d+\.\d+\.\d+(?:\.\d+)?-(?:microsoft-standard(?:-WSL2?)?|\d+-Microsoft))\b",
    ),
    "pci": (r"0000:([0-9a-f]{2}:[0-9a-f]{2}\.[0-7])(?![0-9])",),
    "gpu": (
        r"Marketing Name:\s+(AMD [^\n]*?|Radeon [^\n]*?)\s*$",
        r"AMD (Instinct MI\d{2,3}[A-Z]{0,3})\b",
        r"AMD (Radeon (?:RX|PRO|Pro) [A-Z]?\d{3,4}[A-Z]?(?: XTX| XT| GRE)?)",
    ),
}
# how a captured group becomes the value (the literal prefix put back)
_VALUE = {
    "gfx": lambda v: f"gfx{v}",
    "pci": lambda v: f"0000:{v}",
}
_GPU_PREFIX = "AMD "
FACTS = tuple(_PATTERNS)  # the facts looked for, in a fixed order
_COMPILED = {
    name: tuple(re.compile(p, re.MULTILINE) for p in patterns)
    for name, patterns in _PATTERNS.items()
}
# Most frequent value wins for these (a log of many lines about one GPU); the others take the
# first match of their most reliable pattern.
_BY_COUNT = frozenset({"gfx", "pci"})
MAX_COUNTED = 1000  # matches counted per fact, at most

HINTS = {
    "gfx": "your GPU's gfx target (`rocminfo | grep -m1 -o 'gfx[0-9a-f]*'`)",
    "rocm_version": "your ROCm version (`cat /opt/rocm/.info/version`)",
    "kernel": "your kernel version (`uname -r`)",
    "pci": "the GPU's PCI address (`lspci -D -d 1002:`)",
    "gpu": "your GPU's model (`rocminfo | grep -m1 'Marketing Name'`)",
}


@dataclass(frozen=True)
class Fact:
    name: str
    value: str
    line: int  # 1-based line of the first occurrence of the value


def _first_line(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


def _bounded(text: str, start: int) -> bool:
    """No letter, digit or _ right before the match (the \b the pattern could not start with)."""
    if start == 0 or not (text[start].isalnum() or text[start] == "_"):
        return True  # a pattern that starts with "/" or "+" needs no boundary
    return not (text[start - 1].isalnum() or text[start - 1] == "_")


_URL_LOOKBACK = 2048  # characters searched back for the "://" of a URL around a match


def _in_url(text: str, start: int) -> bool:
    """The match is part of a URL (`https://repo.radeon.com/.../gfx906/...`): a link names a
    download or a page, not this machine's GPU or versions, so it is no context fact."""
    lo = max(0, start - _URL_LOOKBACK)
    token_start = max(text.rfind(c, lo, start) for c in (" ", "\t", "\n", '"', "'", "(", "<"))
    return "://" in text[max(lo, token_start + 1) : start]


def _value(name: str, m: re.Match[str]) -> str:
    raw = m.group(1).strip()
    if name in _VALUE:
        return _VALUE[name](raw)
    if name == "gpu" and not raw.startswith(("AMD", "Radeon")):
        return _GPU_PREFIX + raw
    return raw


def _literal_prefix(pattern: str) -> str:
    """The literal a pattern starts with (up to its first regex operator, escapes undone)."""
    out = []
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\" and i + 1 < len(pattern) and not pattern[i + 1].isalnum():
            out.append(pattern[i + 1])
            i += 2
            continue
        if ch in ".^$*+?{}[]()|\\":
            break
        out.append(ch)
        i += 1
    if out and i < len(pattern) and pattern[i] in "*+?{":
        out.pop()  # the last literal is quantified
    return "".join(out)


_PREFIXES = {name: tuple(_literal_prefix(p) for p in ps) for name, ps in _PATTERNS.items()}
# A pattern whose value comes before its literal (WSL's kernel: "5.15.153.1-microsoft-standard-
# WSL2") is found by the literals inside it, then searched around each. Without them the regex
# engine tries every position of the text: 13 such passes took 0.6 s on a 10 MB log (round 16).
# (name, index of the pattern) -> literals inside it; tests/test_kb_context.py requires one for
# every pattern without a literal prefix.
_INNER: dict[tuple[str, int], tuple[str, ...]] = {
    ("kernel", 2): ("microsoft-standard", "-Microsoft"),
}
_AROUND = 64  # characters searched on each side of an inner literal (a version is shorter)


def _positions(text: str, literal: str) -> Iterator[int]:
    pos = text.find(literal)
    while pos >= 0:
        yield pos
        pos = text.find(literal, pos + 1)


def _around(text: str, regex: re.Pattern[str], inner: tuple[str, ...]) -> Iterator[re.Match[str]]:
    """The matches of `regex` that hold one of `inner`, in order, each once."""
    done = -1
    for pos in heapq.merge(*(_positions(text, lit) for lit in inner)):
        if pos < done:
            continue
        hi = min(len(text), pos + _AROUND)
        for m in regex.finditer(text, max(0, pos - _AROUND), hi):
            if m.start() <= pos < m.end():
                done = m.end()
                yield m
                break


def _matches(
    text: str, regex: re.Pattern[str], prefix: str, inner: tuple[str, ...] = ()
) -> Iterator[re.Match[str]]:
    """regex.finditer, but found by str.find of its literal prefix (a C search that is several
    times faster than the regex engine's own scan for a literal), or of its inner literals."""
    if not prefix:
        yield from _around(text, regex, inner) if inner else regex.finditer(text)
        return
    pos = text.find(prefix)
    while pos >= 0:
        m = regex.match(text, pos)
        if m is not None:
            yield m
        pos = text.find(prefix, pos + 1)


def _best(text: str, name: str) -> tuple[str, int] | None:
    """The value of a fact from its most reliable pattern that matches: the most frequent of
    that pattern's values (gfx, pci) or the first."""
    for i, (regex, prefix) in enumerate(zip(_COMPILED[name], _PREFIXES[name], strict=True)):
        counts: Counter[str] = Counter()
        first: dict[str, int] = {}
        for m in _matches(text, regex, prefix, _INNER.get((name, i), ())):
            if not _bounded(text, m.start()) or _in_url(text, m.start()):
                continue
            value = _value(name, m)
            counts[value] += 1
            first.setdefault(value, m.start())
            if name not in _BY_COUNT or sum(counts.values()) >= MAX_COUNTED:
                break
        if counts:
            value = max(counts, key=lambda v: (counts[v], -first[v]))
            return value, first[value]
    return None


def extract(text: str, names: Iterable[str] = tuple(_PATTERNS)) -> list[Fact]:
    """The facts found in `text` (each at most once), in a fixed order."""
    facts = []
    for name in names:
        found = _best(text, name)
        if found is not None:
            value, pos = found
            facts.append(Fact(name, value, _first_line(text, pos)))
    return facts


def hint(name: str) -> str:
    """What to write where a placeholder has no value: how to get it."""
    return HINTS.get(name, f"the {name.replace('_', ' ')} shown in your log")
