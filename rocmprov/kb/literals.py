"""Where the scan's anchors occur in a text. Pure.

`finder(words)` gives what the one-pass scan (kb/scan.py) asks of its anchors: the leftmost
position at or after `pos` where one of `words` starts, with the longest word there that ends by
`endpos`, as an object with a match's `start()` and `group()`. `over(finder, text)` binds it to
one text, with the signature of a compiled regex's `search(text, pos, endpos)`.

Two engines give the same answers (tests/test_kb_literals.py):
- Hyperscan (the `hyperscan` package, a C multi-literal matcher), where it loads: the text is
  read CHUNK characters at a time, each chunk's hits sorted by start. Python's regex engine
  starts a match attempt at every character that begins some anchor, about a quarter of a log's
  characters with ~1,000 anchors; this reads every character once, in C (docs/benchmarks.md).
- a regex shaped as a trie of the words, where Hyperscan is not installed or does not load (a
  platform without a wheel, a CPU without SSSE3).
"""

from __future__ import annotations

import re
import threading
from bisect import bisect_left
from collections.abc import Callable, Sequence
from typing import Any, Protocol

CHUNK = 65536  # characters of text whose hits are found and sorted at a time


class Hit(Protocol):
    def start(self) -> int: ...

    def group(self) -> str: ...


Search = Callable[..., Hit | None]  # (text, pos=0, endpos=len(text)) -> the first hit


class _Hit:
    """A hit as the scan reads it (a match's start() and group())."""

    __slots__ = ("at", "word")

    def __init__(self, at: int, word: str) -> None:
        self.at, self.word = at, word

    def start(self) -> int:
        return self.at

    def group(self) -> str:
        return self.word


def trie_regex(words: Sequence[str]) -> str:
    """One regex that matches any of `words`, shaped as a trie so that at each position the
    engine tries one branch per distinct next character (not one per word). Longest first."""
    root: dict[str, Any] = {}
    for word in words:
        node = root
        for ch in word:
            node = node.setdefault(ch, {})
        node[""] = {}

    def emit(node: dict[str, Any]) -> str:
        alts = [re.escape(ch) + emit(child) for ch, child in sorted(node.items()) if ch]
        if not alts:
            return ""
        body = alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"
        if "" in node:
            return "(?:" + "|".join(alts) + ")?"
        return body

    return emit(root)


class _Hyperscan:
    """The words as one Hyperscan database of their UTF-8 bytes. UTF-8 is self-synchronising, so
    a word's bytes match only where its first character starts. A scan needs scratch memory of
    its own: one per thread (two threads on one scratch fail with ScratchInUseError)."""

    def __init__(self, words: Sequence[str], engine: Any) -> None:
        self.words = tuple(words)
        self.engine = engine
        self.longest = max(map(len, self.words))
        data = [word.encode("utf-8", "surrogatepass") for word in self.words]
        self.sizes = [len(b) for b in data]  # a word's bytes, where a character is not one
        self.db = engine.Database(mode=engine.HS_MODE_BLOCK)
        self.db.compile(expressions=data, ids=list(range(len(data))), elements=len(data),
                        flags=0, literal=True)  # fmt: skip
        self._local = threading.local()
        self.fallback: re.Pattern[str] | None = None  # set if a scan ever fails

    def scratch(self) -> Any:
        made = getattr(self._local, "scratch", None)
        if made is None:
            made = self._local.scratch = self.engine.Scratch(self.db)
        return made

    def hits(self, text: str, lo: int, hi: int) -> tuple[list[int], list[str]]:
        """The hits that start in [lo, hi): their starts, ascending, and their words (at one
        start, longest first)."""
        piece = text[lo : hi + self.longest - 1]
        data = piece.encode("utf-8", "surrogatepass")
        ends: list[tuple[int, int]] = []
        self.db.scan(data, match_event_handler=lambda i, _f, to, _x, _c: ends.append((to, i)),
                     scratch=self.scratch())  # fmt: skip
        words, sizes = self.words, self.sizes
        if len(data) == len(piece):  # ASCII: a byte is a character
            found = [(lo + to - sizes[i], -sizes[i], words[i]) for to, i in ends]
        else:  # count the characters up to each hit's first byte, once along the piece
            found = []
            byte = char = 0
            for begin, i in sorted((to - sizes[i], i) for to, i in ends):
                char += len(data[byte:begin].decode("utf-8", "surrogatepass"))
                byte = begin
                found.append((lo + char, -len(words[i]), words[i]))
        found.sort()
        cut = bisect_left(found, (hi,))
        return [f[0] for f in found[:cut]], [f[2] for f in found[:cut]]


class _Cursor:
    """A _Hyperscan finder bound to one text: the chunk last read, kept for the next search."""

    def __init__(self, finder: _Hyperscan, text: str) -> None:
        self.finder, self.size = finder, len(text)
        self.lo = self.hi = 0
        self.starts: list[int] = []
        self.words: list[str] = []

    def search(self, text: str, pos: int = 0, endpos: int | None = None) -> _Hit | None:
        endpos = self.size if endpos is None else min(endpos, self.size)
        pos = max(pos, 0)
        while pos < endpos:
            if self.finder.fallback is not None:
                return self.finder.fallback.search(text, pos, endpos)
            if not self.lo <= pos < self.hi:
                try:
                    self.starts, self.words = self.finder.hits(text, pos, pos + CHUNK)
                except self.finder.engine.error:  # out of memory, say: the regex goes on
                    self.finder.fallback = re.compile(trie_regex(self.finder.words))
                    continue
                self.lo, self.hi = pos, min(self.size, pos + CHUNK)
            starts, words = self.starts, self.words
            for i in range(bisect_left(starts, pos), len(starts)):
                start = starts[i]
                if start >= endpos:
                    return None
                if start + len(words[i]) <= endpos:  # else a shorter word there may fit
                    return _Hit(start, words[i])
            pos = self.hi
        return None


Finder = re.Pattern[str] | _Hyperscan


def finder(words: Sequence[str], engine: str = "auto") -> Finder:
    """The fastest finder that loads here for `words` (non-empty); `engine` "re" forces the
    trie regex, "hyperscan" requires Hyperscan (tests compare the two)."""
    if engine != "re":
        try:
            import hyperscan  # a C extension: imported only when a table is compiled
        except ImportError:  # not installed (or no wheel for this platform)
            if engine == "hyperscan":
                raise
        else:
            try:
                return _Hyperscan(words, hyperscan)
            except hyperscan.error:  # a CPU it cannot run on: the regex does the job
                if engine == "hyperscan":
                    raise
    return re.compile(trie_regex(words))


def over(found: Finder, text: str) -> Search:
    """`found`'s search, bound to `text` (a Hyperscan finder keeps its last chunk of it)."""
    if isinstance(found, _Hyperscan):
        return _Cursor(found, text).search
    return found.search
