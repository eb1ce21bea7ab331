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
  A chunk with more than DENSE hits (a hit every 16 characters) is searched by the regex, which
  costs less per hit than sorting them in Python.
- a regex shaped as a trie of the words, where Hyperscan is not installed or does not load (a
  platform without a wheel, a CPU without SSSE3, a word with a NUL its literal API cuts at).
"""

from __future__ import annotations

import re
import threading
from bisect import bisect_left
from collections.abc import Callable, Sequence
from typing import Any, Protocol

CHUNK = 65536  # characters of text whose hits are found and sorted at a time
DENSE = CHUNK // 16  # more hits than this in a chunk: the regex searches it


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
        self._regex: re.Pattern[str] | None = None
        self.failed = False  # a scan failed: the regex does the rest

    def regex(self) -> re.Pattern[str]:
        """The same words as a trie regex (dense chunks, and after a failed scan)."""
        if self._regex is None:
            self._regex = re.compile(trie_regex(self.words))
        return self._regex

    def scratch(self) -> Any:
        made = getattr(self._local, "scratch", None)
        if made is None:
            made = self._local.scratch = self.engine.Scratch(self.db)
        return made

    def hits(self, text: str, lo: int, hi: int) -> tuple[list[int], list[str]] | None:
        """The hits that start in [lo, hi): their starts, ascending, and their words (at one
        start, longest first); None when there are more than DENSE."""
        piece = text[lo : hi + self.longest - 1]
        data = piece.encode("utf-8", "surrogatepass")
        ends: list[tuple[int, int]] = []

        def on_hit(i: int, _from: int, to: int, _flags: int, _context: Any) -> bool:
            ends.append((to, i))
            return len(ends) > DENSE  # true: Hyperscan stops (ScanTerminated)

        try:
            self.db.scan(data, match_event_handler=on_hit, scratch=self.scratch())
        except self.engine.ScanTerminated:
            return None
        words, sizes = self.words, self.sizes
        if len(data) == len(piece):  # ASCII: a byte is a character
            found = [(lo + to - sizes[i], -sizes[i], words[i]) for to, i in ends]
        else:  # count the characters up to each hit's first byte, once along the piece
            found = []
            byte = char = 0
            for begin, i in sorted((to - sizes[i], i) for to, i in ends):
                char += len(data[byte:begin].decode("utf-8", "surrogatepass"))
                byte = begin
                found.append((lo + char, -sizes[i], words[i]))  # at one start: prefixes
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
        self.dense = False  # the chunk is searched by the regex

    def _read(self, text: str, pos: int) -> None:
        finder = self.finder
        try:
            found = finder.hits(text, pos, pos + CHUNK)
        except finder.engine.error:  # out of memory, say: the regex does the rest
            finder.failed = True
            found = None
        self.lo, self.hi = pos, min(self.size, pos + CHUNK)
        self.dense = found is None
        self.starts, self.words = found or ([], [])

    def search(self, text: str, pos: int = 0, endpos: int | None = None) -> Hit | None:
        finder = self.finder
        endpos = self.size if endpos is None else min(endpos, self.size)
        pos = max(pos, 0)
        while pos < endpos:
            if finder.failed:
                return finder.regex().search(text, pos, endpos)
            if not self.lo <= pos < self.hi:
                self._read(text, pos)
            if self.dense:  # a word that starts in the chunk ends by hi + longest - 1
                hit = finder.regex().search(text, pos, min(endpos, self.hi + finder.longest - 1))
                if hit is not None and hit.start() < self.hi:
                    return hit
            else:
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
    """The fastest finder that loads here for `words`; `engine` "re" forces the trie regex,
    "hyperscan" requires Hyperscan (tests compare the two)."""
    if not words:
        return re.compile(r"(?!)")
    if engine != "re" and all(w and "\x00" not in w for w in words):
        try:
            import hyperscan  # a C extension: imported only when a table is compiled

            failure: type[Exception] = hyperscan.error
        except (ImportError, OSError, AttributeError):  # not installed, or a broken install
            if engine == "hyperscan":
                raise
        else:
            try:
                return _Hyperscan(words, hyperscan)
            except (failure, AttributeError):  # a CPU it cannot run on: the regex does the job
                if engine == "hyperscan":
                    raise
    return re.compile(trie_regex(words))


def over(found: Finder, text: str) -> Search:
    """`found`'s search, bound to `text` (a Hyperscan finder keeps its last chunk of it)."""
    if isinstance(found, _Hyperscan):
        return _Cursor(found, text).search
    return found.search
