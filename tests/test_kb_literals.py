"""The scan's anchor finder (rocmprov/kb/literals.py): Hyperscan and the trie regex give the
same hits, in the same order, on real text and on generated text (chunk edges, characters of
every width, `endpos` cutting a word), and the whole scan finds the same causes with either."""

from __future__ import annotations

import dataclasses
import functools
import sys
import threading
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rocmprov.kb import literals, load_table
from rocmprov.kb import scan as kbscan
from rocmprov.kb.codes import load_codes

ROOT = Path(__file__).resolve().parent.parent
TABLE = load_table()
COMPILED = kbscan.compile_table(TABLE, load_codes())
ANCHORS = COMPILED.anchors
TEXTS = sorted(
    p for folder in ("kb", "kb-wordings", "healthy", "dmesg")
    for p in (ROOT / "tests" / "fixtures" / folder).glob("*.txt")
)  # fmt: skip


def _hits(found: literals.Finder, text: str, endpos: int | None = None) -> list[tuple[int, str]]:
    """Every hit, as the scan walks them: the next one from one past the last."""
    search = literals.over(found, text)
    endpos = len(text) if endpos is None else endpos
    out: list[tuple[int, str]] = []
    hit = search(text, 0, endpos)
    while hit is not None:
        out.append((hit.start(), hit.group()))
        hit = search(text, hit.start() + 1, endpos)
    return out


RE = literals.finder(ANCHORS, "re")


@functools.cache
def _hs(words: tuple[str, ...] = ANCHORS) -> literals.Finder:
    """A Hyperscan finder (built in the test, so that a machine without Hyperscan fails these
    tests, not the collection of every test)."""
    return literals.finder(words, "hyperscan")


def test_the_table_gets_hyperscan_where_it_is_installed() -> None:
    assert type(COMPILED.scan) is type(_hs()), type(COMPILED.scan)


def test_without_hyperscan_the_trie_regex_is_used(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "hyperscan", None)  # import fails, as with no wheel
    found = literals.finder(["abc", "abd"])
    assert isinstance(found, type(RE))
    assert _hits(found, "xxabdxabc") == [(2, "abd"), (6, "abc")]


def test_real_text_gives_the_same_hits() -> None:
    text = "\n".join(p.read_text(encoding="utf-8", errors="replace") for p in TEXTS)
    hits = _hits(_hs(), text)
    assert len(hits) > 1000
    assert hits == _hits(RE, text)


def test_a_word_across_a_chunk_edge_and_non_ascii_text_before_it() -> None:
    word = "hipErrorNoBinaryForGpu"
    assert word in ANCHORS or any(word.startswith(a) for a in ANCHORS)
    for filler in ("x", "é", "\u2018", "\U0001f600", "\udcff"):  # 1 to 4 UTF-8 bytes, a surrogate
        text = filler * (literals.CHUNK - 5) + word + filler * 3 + word
        hits = _hits(_hs(), text)
        assert hits == _hits(RE, text)
        assert [s for s, _ in hits] == [literals.CHUNK - 5, literals.CHUNK - 5 + len(word) + 3]


def test_endpos_takes_the_longest_word_that_fits() -> None:
    found_hs = literals.finder(["HSA_", "HSA_STATUS"], "hyperscan")
    found_re = literals.finder(["HSA_", "HSA_STATUS"], "re")
    text = "x HSA_STATUS y"
    for end in range(len(text) + 1):
        assert _hits(found_hs, text, end) == _hits(found_re, text, end), end
    assert _hits(found_hs, text, 8) == [(2, "HSA_")]


PIECES = [
    *sorted({a[:n] for a in ANCHORS[::7] for n in (1, 3, len(a))}),
    *(" ", "\n", "é", "\u2018", "\U0001f600", "x" * 50),
]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=60), st.integers(0, 400))
def test_generated_text_gives_the_same_hits(parts: list[str], cut: int) -> None:
    text = "".join(parts)
    assert _hits(_hs(), text) == _hits(RE, text)
    assert _hits(_hs(), text, cut) == _hits(RE, text, cut)


ALPHABET = st.sampled_from(["a", "b", "c", "é", "\u2018", "\U0001f600", "\udcff", "\n", " "])
WORDS = st.lists(st.text(ALPHABET, min_size=1, max_size=4), min_size=1, max_size=6, unique=True)


@settings(max_examples=400, deadline=None)
@given(WORDS, st.lists(ALPHABET, max_size=40), st.integers(1, 9), st.integers(1, 6),
       st.integers(-3, 45), st.integers(-3, 50))  # fmt: skip
def test_small_chunks_random_words_and_bounds_give_the_same_hits(
    words: list[str], parts: list[str], chunk: int, dense: int, pos: int, endpos: int
) -> None:
    """Chunks of 1-9 characters, a dense limit of 1-6 hits: every hit is near a chunk's edge,
    and both the sorted and the dense (regex) path run; one cursor answers every query."""
    text = "".join(parts)
    found, regex = literals.finder(words, "hyperscan"), literals.finder(words, "re")
    patch = pytest.MonkeyPatch()
    patch.setattr(literals, "CHUNK", chunk)
    patch.setattr(literals, "DENSE", dense)
    try:
        assert _hits(found, text) == _hits(regex, text)
        search = literals.over(found, text)
        for p, e in ((pos, endpos), (0, endpos), (pos, len(text)), (max(pos, 0), endpos)):
            got, want = search(text, p, e), regex.search(text, max(p, 0), max(e, 0))
            assert (got and (got.start(), got.group())) == (want and (want.start(), want.group()))
    finally:
        patch.undo()


def test_a_word_with_a_nul_is_left_to_the_regex() -> None:
    """Hyperscan's literal API cuts a word at a NUL: such a list is not given to it."""
    found = literals.finder(["a\x00b", "zz"])
    assert isinstance(found, type(RE))
    assert _hits(found, "xa yab\x00 a\x00b") == [(8, "a\x00b")]


def test_a_dense_chunk_is_searched_by_the_regex_and_gives_the_same_hits() -> None:
    text = "hipErrorNoBinaryForGpu HSA_ " * 20_000 + "tail HSA_STATUS_ERROR_OUT_OF_RESOURCES"
    assert _hits(_hs(), text) == _hits(RE, text)


def _scan_both(text: str) -> None:
    by_re = dataclasses.replace(COMPILED, scan=RE, engine="re")
    lines_hs: dict[int, tuple[int, str]] = {}
    lines_re: dict[int, tuple[int, str]] = {}
    assert kbscan.scan(text, COMPILED, lines_hs) == kbscan.scan(text, by_re, lines_re)
    assert lines_hs == lines_re


def test_saturated_entries_and_enormous_lines_scan_the_same() -> None:
    """The scan's narrower finders: entries counted MAX_COUNT times leave it, and anchors done
    on an enormous line are skipped by a finder without them."""
    firsts = [
        next((x for x in p.read_text(encoding="utf-8").splitlines() if len(x) > 20), "")
        for p in sorted((ROOT / "tests" / "fixtures" / "kb").glob("*.txt"))
    ]  # fmt: skip
    saturating = "\n".join(firsts[:40]) + "\n"
    _scan_both(saturating * (kbscan.MAX_COUNT + 50))
    _scan_both(" ".join(firsts) * 3)  # one line of 300 KB: the skip and its narrower finders
    _scan_both((" ".join(firsts[:5]) + " ") * 3000 + "\r\n" + saturating * 20)


@pytest.mark.parametrize("folder", ["kb", "kb-wordings", "healthy"])
def test_the_scan_finds_the_same_with_either_engine(folder: str) -> None:
    by_re = dataclasses.replace(COMPILED, scan=RE, engine="re")
    paths = sorted((ROOT / "tests" / "fixtures" / folder).glob("*.txt"))
    for path in paths:
        text = path.read_text(encoding="utf-8", errors="replace")
        lines_hs: dict[int, tuple[int, str]] = {}
        lines_re: dict[int, tuple[int, str]] = {}
        assert kbscan.scan(text, COMPILED, lines_hs) == kbscan.scan(text, by_re, lines_re), path
        assert lines_hs == lines_re, path


def test_threads_scanning_at_once_each_get_their_hits() -> None:
    """One Hyperscan scratch for two threads fails (ScratchInUseError): each thread has its own."""
    # a hit on every line: each chunk's scan calls back into Python over a thousand times, and
    # another thread may run in between
    text = "[drm] amdgpu kernel modesetting enabled.\n" * 40_000
    want = _hits(RE, text)
    got: list[object] = []

    def run() -> None:
        try:
            got.append(_hits(_hs(), text))
        except Exception as exc:  # the test reports any failure of a thread
            got.append(exc)

    threads = [threading.Thread(target=run) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert got == [want] * 6
    assert not _hs().failed  # no scan failed (a failure would have gone on with the regex)


def test_a_scan_that_fails_goes_on_with_the_regex(monkeypatch: pytest.MonkeyPatch) -> None:
    found = literals.finder(ANCHORS, "hyperscan")
    text = "\n".join(p.read_text(encoding="utf-8", errors="replace") for p in TEXTS[:50])
    first = _hits(found, text[:1000])

    def broken(*_args: object, **_kwargs: object) -> None:
        raise found.engine.error("no memory")  # type: ignore[union-attr]

    monkeypatch.setattr(found, "db", type("Db", (), {"scan": staticmethod(broken)})())
    assert _hits(found, text) == _hits(RE, text)
    assert first == _hits(RE, text[:1000])
