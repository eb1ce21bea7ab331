"""The matcher's cost is linear in its input (issue 28, item 6; review r05).

A line of several MiB full of table anchors took 16 s (2 MiB) and 157 s (4 MiB): every anchor hit
looked back to the line's start. A pattern that begins with an unbounded repeat (`\\w+ quantization
...`) was retried from every position of a long word run. Speed targets live in
benchmarks/explain_bench.py; here: the work the entries' regexes are given, and checks of how
the CPU time grows with the input (tests/growth.py: 4x the input well under 16x the time) or
compares with a log that lacks the costly anchor, which the quadratic or retrying code failed by
far on any machine.
"""

from __future__ import annotations

import re
from pathlib import Path
from re import _constants as sre_constants  # type: ignore[attr-defined]
from re import _parser as sre_parse  # type: ignore[attr-defined]
from typing import Any

import pytest

from rocmprov.kb import compiled as compiled_table
from rocmprov.kb import load_table, regexshape, window
from rocmprov.kb import scan as kbscan
from rocmprov.kb.codes import load_codes
from rocmprov.kb.matcher import analyse
from rocmprov.kb.table import parse_table
from tests.growth import assert_linear, cpu_ratio
from tests.kbcases import wrapped

TABLE = load_table()
ROOT = Path(__file__).resolve().parent.parent
MIB = 1024 * 1024
FIXTURES = ROOT / "tests" / "fixtures" / "kb"
WORDINGS = ROOT / "tests" / "fixtures" / "kb-wordings"
# units repeated along one line: anchors of the scan, a status code's literal, a fact's prefix
UNITS = [
    "HSA_ ",
    "hipError ",
    "gfx1030 ",
    "Marketing Name: AMD ",
    "https://",
    "rocblas_status_",
    # perl's message: a lazy span from here to " at ...roc-obj-ls" was quadratic (14 s)
    "Can't locate ",
    "Can't locate File/Which.pm in @INC at ",
]


class _Counting:
    """A compiled regex that adds up the characters it is asked to search."""

    def __init__(self, regex: re.Pattern[str], tally: list[int]) -> None:
        self.regex, self.tally = regex, tally

    def search(self, text: str, lo: int = 0, hi: int | None = None) -> Any:
        self.tally[0] += (len(text) if hi is None else hi) - lo
        return self.regex.search(text, lo, len(text) if hi is None else hi)

    def finditer(self, text: str, lo: int = 0, hi: int | None = None) -> Any:
        self.tally[0] += (len(text) if hi is None else hi) - lo
        return self.regex.finditer(text, lo, len(text) if hi is None else hi)

    def match(self, text: str, lo: int = 0, hi: int | None = None) -> Any:
        self.tally[0] += (len(text) if hi is None else hi) - lo
        return self.regex.match(text, lo, len(text) if hi is None else hi)


def _searched(text: str) -> int:
    """Characters handed to the entries' regexes while scanning `text`."""
    tally = [0]
    compiled = kbscan.compile_table(TABLE, load_codes())
    kbscan.scan(text, wrapped(compiled, lambda r: _Counting(r, tally), "regex"), {})
    return tally[0]


def _line(unit: str, size: int) -> str:
    return (unit * (size // len(unit) + 1))[:size]


@pytest.mark.parametrize("unit", UNITS)
def test_regex_work_on_one_enormous_line_is_a_few_times_its_length(unit: str) -> None:
    size = 4 * MIB
    work = _searched(_line(unit, size))
    # each search covers new ground: at most (2 * width + CHUNK) / CHUNK times the line
    assert work <= (1 + 4 * kbscan._SPAN // kbscan._CHUNK) * size, work


@pytest.mark.parametrize("unit", UNITS)
def test_analysing_an_enormous_line_grows_linearly_not_quadratically(unit: str) -> None:
    """The quadratic scan took 16 s for 2 MiB of HSA_ and 157 s for 4 MiB: 4x the line (512
    KiB -> 2 MiB) must take well under 16x the CPU time (from 128 KiB the old code scored only
    10.3 against 8: its lines grow less than linearly at small sizes)."""
    analyse("warm up")
    assert_linear(lambda n: _line(unit, n), analyse, 512 * 1024)


def test_a_line_of_many_different_messages_builds_few_narrower_regexes() -> None:
    """The first line of 300 of the table's real fixtures, four times, as one long line:
    each anchor done on the line made a narrower scan regex of its own (a trie of ~1,000
    anchors, 0.3 s each), 156 of them and a minute in all. Now the skip waits for 1,024 hits
    skipped one by one, then twice as many, so such a line builds none or a few."""
    fixtures = sorted((ROOT / "tests/fixtures/kb").glob("*.txt"))[:300]
    firsts = [
        next((x for x in f.read_text().splitlines() if len(x) > 20 and "://" not in x), "")
        for f in fixtures
    ]  # fmt: skip
    text = " ".join(firsts) * 4
    assert len(text) > kbscan._LONG and "\n" not in text
    compiled_table.narrower.cache_clear()
    analyse(text)
    assert compiled_table.narrower.cache_info().misses <= 4, compiled_table.narrower.cache_info()


def _mixed_line(size: int, sep: str = " ") -> str:
    """The first line of every fixture of the table, joined into one line of `size` characters
    (`sep` "\\n": the same text as a log of those lines)."""
    bodies = [f.read_text().partition("\n---\n")[2] for f in sorted(FIXTURES.glob("*.txt"))]
    firsts = [
        next((x for x in b.splitlines() if len(x) > 20 and "://" not in x), "") for b in bodies
    ]
    block = sep.join(firsts)
    return (block * (size // len(block) + 1))[:size]


class _Widest(_Counting):
    """Keeps the widest stretch one multi-line search (finditer, match) was given."""

    def search(self, text: str, lo: int = 0, hi: int | None = None) -> Any:
        return self.regex.search(text, lo, len(text) if hi is None else hi)

    def finditer(self, text: str, lo: int = 0, hi: int | None = None) -> Any:
        self.tally[0] = max(self.tally[0], (len(text) if hi is None else hi) - lo)
        return self.regex.finditer(text, lo, len(text) if hi is None else hi)

    def match(self, text: str, lo: int = 0, hi: int | None = None) -> Any:
        self.tally[0] = max(self.tally[0], (len(text) if hi is None else hi) - lo)
        return self.regex.match(text, lo, len(text) if hi is None else hi)


def test_a_multi_line_pattern_reads_one_span_either_way_of_its_hit_on_an_enormous_line() -> None:
    """A multi-line pattern's window on an enormous line went on to its "next lines" within the
    same line: 40 lines * _SPAN (327 KB) either way, where one pattern's regex took 1.2 s.
    A match whose line is longer than _SPAN is not found anyway, so the window stops there."""
    widest = [0]
    compiled = kbscan.compile_table(TABLE, load_codes())
    text = _mixed_line(MIB)
    kbscan.scan(text, wrapped(compiled, lambda r: _Widest(r, widest), "regex"), {})
    assert 0 < widest[0] <= 2 * kbscan._SPAN, widest[0]


def test_a_line_of_the_tables_own_messages_costs_what_they_cost_as_lines() -> None:
    """4 MiB of the fixtures' messages on one line took 10.7 s of CPU (30 s on a loaded
    machine): the window above, an Ollama pattern whose optional groups retried every pair of
    their occurrences, a library-name repeat tried inside every word. Now about 1.5 s on a
    slow 2-core machine (docs/benchmarks.md). Here 1 MiB of them on one line costs about what
    the same messages cost as a log of lines: ~1x now, 46x before the fix (e707d37)."""
    one, lines = _mixed_line(MIB), _mixed_line(MIB, "\n")
    analyse("warm up")
    assert len(analyse(one).matches) > 100 and analyse(lines).matches  # still found
    ratio = cpu_ratio(lambda: analyse(one), lambda: analyse(lines))
    assert ratio < 4, ratio


def _costs_about_a_log_without_the_anchor(text: str, anchor: str, broken: str) -> float:
    """CPU time of analysing `text` over that of the same log with its anchor broken."""
    assert anchor in text
    plain = text.replace(anchor, broken)
    analyse("warm up")
    return cpu_ratio(lambda: analyse(text), lambda: analyse(plain))


def test_a_log_whose_every_line_holds_a_multi_line_anchor_costs_a_few_times_one_without() -> None:
    """Every line starts the Ollama iGPU pattern (26 lines) and none completes it: each line's
    window was tried from every line of it again, 26 x 26 lines a line (20.8 s for 4 MiB, and
    118 s with a costlier log prefix); now each start is tried once (kb/window.py, starting_by). A
    reviewer's input: a near-miss docker compose prefix glued to the anchor. The cost is
    compared with the same log whose lines lack the anchor: about 5x now, ~270x before."""
    unit = "a-1" * 21 + "-1 dropping integrated GPU\n"
    text = (unit * (MIB // 2 // len(unit) + 1))[: MIB // 2]
    ratio = _costs_about_a_log_without_the_anchor(text, "integrated GPU", "integrated CPU")
    assert ratio < 15, ratio


def test_a_start_is_tried_once_and_its_answer_holds_its_declared_lines() -> None:
    """A hostile read's cases for kb/window.py starting_by: a pattern whose `[^}]*` may cross
    more lines than it declares was found or not depending on which anchor hit tried its start
    first; now a match is cut at its declared lines from its start, whatever the hit; and a
    start inside a match already found is not tried again (it was counted twice). The table's
    own patterns no longer span past their lines (test_kb_hygiene.py), so this one is
    made here, as that pip pattern was."""
    entry = {"id": "t.span", "title": "t", "category": "rocm", "kind": "root-cause",
             "cause": "c" * 50, "fix": "f", "sources": ["https://example.org/a"],
             "patterns": [{"regex": r"torch\{[^}]*\+rocm[^}]*\}==\S+\s+has no wheels",
                           "anchor": "+rocm", "lines": 4},
                          {"regex": r"Looking in indexes: https://download\.pytorch\.org/whl/"
                                    r"rocm[\d.]+\n(?:[^\n]*\n){0,3}?ERROR: No matching "
                                    r"distribution found for torch",
                           "anchor": "Looking in indexes", "lines": 5}]}  # fmt: skip
    table = parse_table({"schema": "rocmprov.kb/1", "entries": [entry]})
    assert regexshape.newline_bound(table.entries[0].patterns[0].regex, 0) >= 4  # spans past 4
    within = "torch{\n+rocm\n}==2.0+rocm6.0 has no wheels with a matching platform tag\n"
    beyond = "torch{\n+rocm\n+rocm\n}==2.0+rocm6.0\nhas no wheels with a matching platform tag\n"
    for before in ("", "+rocm\n", "+rocm\n" * 3):
        assert analyse(before + within, table=table, codes=False).matches, before
        assert not analyse(before + beyond, table=table, codes=False).matches, before
    twice = (
        "Looking in indexes: https://download.pytorch.org/whl/rocm5.4.2\n" * 2
        + "ERROR: Could not find a version that satisfies the requirement torch (from versions:"
        " none)\nERROR: No matching distribution found for torch\n"
    )
    (hit,) = analyse(twice, table=table, codes=False).matches
    assert hit.count == 1


def test_a_multi_line_pattern_without_a_literal_prefix_is_tried_at_its_first_characters() -> None:
    """rocr.runtime-library-version-mix's pattern starts with no literal: its whole window was
    searched from every line holding its anchor (a hostile read: 4.9 s of CPU for 256 KiB of
    the loader's `trying file=` lines). Now only the places of the characters it can start with,
    up to the hit (kb/regexshape.py first_chars), are tried: about 0.5 s here, ~50x the same lines
    without the anchor (~190x before)."""
    text = "trying file=/opt/rocm/libhsakmt/lib/libhsakmt.so.1\n" * (64 * 1024 // 51)
    anchor = "/libhsakmt/lib/libhsakmt"
    ratio = _costs_about_a_log_without_the_anchor(text, anchor, anchor[:-1] + "X")
    assert ratio < 120, ratio


def test_first_characters_and_line_breaks_of_a_pattern() -> None:
    assert regexshape.first_chars(r"(?:\bgfx115[01]\b|Strix (?:Halo|Point))x", 0) == "Sg"
    assert regexshape.first_chars(r"(?=Memory|MES)(?:Memory a|\bMES f)", 0) == "M"
    assert regexshape.first_chars(r"[a-z]+x", 0) == "" and regexshape.first_chars(r"x?y*", 0) == ""
    assert regexshape.newline_bound(r"a[^\n]*\n(?:[^\n]*\n){0,3}b", 0) == 4
    assert regexshape.newline_bound(r"a\s+b", 0) > 1000
    assert regexshape.newline_bound(r"a[^}]*b", 0) > 1000
    assert regexshape.newline_bound(r"a(?=(?:[^\n]*\n){2})b", 0) == 2  # a lookahead reads on


def test_a_long_or_many_part_extension_name_is_still_named() -> None:
    """The look-behind that starts the name at a word's start (for cost) keeps such names."""
    symbol = "_ZN3c1010Dispatcher17runRecordFunctionERN2at14RecordFunctionE"
    for name in ("my_ops.v2.1.0.post1.rocm6.so", "x" * 81 + ".so", "_C.abi3.so"):
        found = analyse(f"ImportError: /opt/venv/lib/{name}: undefined symbol: {symbol}").matches
        assert found and found[0].id == "framework.torch-extension-built-for-other-torch", name
        assert found[0].captures["ext"] == name


def test_an_error_at_the_end_of_an_enormous_line_is_still_found() -> None:
    error = "hipErrorNoBinaryForGpu: Unable to find code object for all current devices!"
    text = _line("HSA_ hipError ", 3 * MIB) + " " + error + "\nnext line\n"
    found = analyse(text).matches
    assert "hip.no-binary-for-gpu" in [m.id for m in found]
    hit = next(m for m in found if m.id == "hip.no-binary-for-gpu")
    assert hit.lines == (1,) and error in hit.evidence[0] and len(hit.evidence[0]) < 4100


def test_a_word_run_glued_to_an_anchor_costs_linear_time() -> None:
    """`\\w+ quantization` was retried from every position of the word run: ~1.4 s a line of
    16,300 characters, quadratic in the run. 4x the run must take well under 16x the time."""
    analyse("warm up")
    line = "quantization is currently not supported in ROCm\n"
    assert_linear(lambda n: ("a" * n + line) * 16, analyse, 8192)


def _leading_unbounded_items(items: Any) -> bool:
    """The parsed regex starts, before any literal, with a repeat that has no upper bound."""
    for op, arg in items:
        if op is sre_constants.LITERAL:
            return False
        if op in (sre_constants.MAX_REPEAT, sre_constants.MIN_REPEAT):
            if arg[1] is sre_constants.MAXREPEAT or _leading_unbounded_items(arg[2]):
                return True
            if arg[0] == 0:  # optional: what follows may come first
                continue
            return False
        if op is sre_constants.SUBPATTERN:
            return _leading_unbounded_items(arg[3])
        if op is sre_constants.BRANCH:
            return any(_leading_unbounded_items(b) for b in arg[1])
        if op is sre_constants.AT:
            continue
        return False
    return False


def test_no_pattern_begins_with_an_unbounded_repeat() -> None:
    """`\\w+ quantization` is retried from every position of a word run: O(n^2). Bound it
    (`\\w{1,64}`) or start the pattern with its literal."""
    bad = [(e.id, p.regex) for e in TABLE.entries for p in e.patterns
           if _leading_unbounded_items(sre_parse.parse(p.regex))]  # fmt: skip
    assert bad == []
    for regex, unbounded in ((r"(?P<m>\w+) quantization", True), (r"a\w+b", False),
                             (r"(?:x )?\d+ y", True), (r"\d{1,9} y", False)):  # fmt: skip
        assert _leading_unbounded_items(sre_parse.parse(regex)) is unbounded


# lines as logs prefix them (kb/prefixes.py: dmesg, journal, ISO time and level, a vLLM worker)
PREFIXED = [
    "[ 2941.679345] audit: type=1400 audit(2941.679:3): apparmor=\"STATUS\" operation=\"load\"",
    "Nov 10 21:23:08 node8 systemd[1]: Started Session 8 of User root.",
    "2025-03-08T16:42:02.674+01:00 INFO source=server.go:2 msg=\"loaded\"",
    "(VllmWorker rank=0 pid=12) INFO step 300 took 0.342s",
]


def _anchored_in_prefixed_lines(anchor: str, around: int = 36, plain: bool = False) -> str:
    """`anchor` among `around` prefixed lines either way (`plain`: x's of the same lengths)."""
    noise = [PREFIXED[i % len(PREFIXED)] for i in range(around)]
    if plain:
        noise = ["x" * len(line) for line in noise]
    return "\n".join([*noise, f"error: {anchor} here", *noise]) + "\n"


def test_multi_line_patterns_do_not_backtrack_over_prefixed_lines() -> None:
    """Round 15: a pattern spanning up to 30 lines after its anchor never finished on the
    benchmark's log. Each line break of a multi-line pattern takes an optional log prefix
    (kb/prefixes.py), which `[^\\n]*` could also take: two ways through every prefixed line,
    2^30 when the match fails. The prefix is possessive now; every multi-line pattern is run on
    its anchor among prefixed lines that complete no match, and costs about what it does among
    lines of the same length with no prefix (a pattern that backtracked: 2^30 times those)."""
    multi = [(e.id, p) for e in TABLE.entries for p in e.patterns if p.lines > 1]
    assert len(multi) > 50
    runs = []
    for _, pattern in multi:
        around = min(36, pattern.lines + 4)
        prefixed = _anchored_in_prefixed_lines(pattern.anchor, around)
        plain = _anchored_in_prefixed_lines(pattern.anchor, around, plain=True)
        runs.append((pattern.compiled, prefixed, plain))
    ratio = cpu_ratio(lambda: [regex.search(text) for regex, text, _ in runs],
                      lambda: [regex.search(plain) for regex, _, plain in runs])  # fmt: skip
    assert ratio < 5, ratio


def test_the_log_prefix_is_taken_whole_or_not_at_all() -> None:
    from rocmprov.kb.prefixes import continued

    spanning = r"Torch not compiled[^\n]*\n(?:(?!zz)[^\n]*\n){0,30}?[^\n]*AMD GPU"
    regex = re.compile(continued(spanning))
    def text(lines: int) -> str:
        return "Torch not compiled\n" + "\n".join(PREFIXED[i % 4] for i in range(lines)) + "\n"

    assert regex.search(text(17)) is None
    # the prefix optional both ways: about 3 s at 16 lines, twice that for each line more;
    # 4x the lines (3 -> 12) took 2^9 times as long, and must take well under 16x
    assert_linear(text, regex.search, 3)
    assert regex.search("Torch not compiled\n[ 1.5] x\n[ 2.5] my AMD GPU is a 6650\n")


def test_a_log_of_an_unbounded_patterns_anchor_lines_is_analysed_in_seconds() -> None:
    """A hostile read's log (2026-12-06): every line the anchor of a multi-line pattern whose
    `\\s` could cross more lines than it declares. Such a pattern's starts were not remembered,
    so each line's window was tried from every line of it again: 4.8 s of CPU per 64 KiB. Now
    a match is cut at its declared lines from its start, and each start is tried once (38 s
    for 512 KiB before: ~1,100x the same log without the anchor `version: `; 1-4x now)."""
    unit = "amdgpu 0000:c1:00.0: gfx1151 firmware version: 0x1a\n"
    text = unit * (128 * 1024 // len(unit))
    ratio = _costs_about_a_log_without_the_anchor(text, "version: ", "version= ")
    assert ratio < 20, ratio


def test_the_end_of_a_starts_lines_is_looked_for_only_inside_its_window() -> None:
    """lines_end read on to the end of an enormous line for every start tried on it (4 MiB of
    the table's messages: 1.3 s -> 2.9 s of CPU); now it stops at the window's end."""
    line = "x" * 100 + "\n"
    assert window.lines_end(line * 3, 0, 2, 1000) == 2 * len(line) - 1
    assert window.lines_end(line * 3, 0, 5, 1000) == 3 * len(line)  # the text ends first
    assert window.lines_end("y" * 10_000, 0, 2, 500) == 501  # past the window: not final


def test_a_match_starts_at_most_its_reach_before_its_anchor() -> None:
    """A single-line regex is searched for from `reach_before` characters before a hit of its
    anchor, not its whole width: every match in the table's own fixtures holds its anchor
    within that reach of its start."""
    from rocmprov.kb.anchors import reach_before

    assert reach_before(r"(?<![\w-])[\w-]{1,9}+\.so: undefined symbol: \w*", "symbol: ") == 24
    assert reach_before(r"(?:ab|c)d: x", "d: x") == 2  # an alternative's longest branch
    assert reach_before(r"(?:in a repeat)+", "repeat") is None  # any copy may hold it
    assert reach_before(r"a(?:b|fatal: x)", "fatal: x") is None  # only in an alternative
    assert reach_before(r"x[^\n]*fatal: ", "fatal: ") >= kbscan._SPAN  # unbounded: whole width
    checked = 0
    for entry in TABLE.entries:
        own = [FIXTURES / f"{entry.id}.txt", *WORDINGS.glob(f"{entry.id}.*.txt")]
        texts = [p.read_text(encoding="utf-8") for p in own if p.exists()]
        for pattern in entry.patterns:
            reach = reach_before(pattern.compiled.pattern, pattern.anchor, pattern.compiled.flags)
            if pattern.lines > 1 or reach is None:
                continue
            for text in texts:
                for m in pattern.compiled.finditer(text):
                    assert m.group().find(pattern.anchor) <= reach, (entry.id, m.group())
                    checked += 1
    assert checked > 500, checked


def test_the_context_of_a_match_on_an_enormous_line_is_read_within_a_span_of_it() -> None:
    """`unless`/`near` read the match's own line at most SPAN either way: on a 4 MiB line they
    read the whole line (0.15 s of the 4 MiB benchmark's ~1 s)."""
    tally = [0]
    context = _Counting(re.compile("never here"), tally)

    class _Target:
        lines, around, regex, prefix, near = 1, 1, re.compile("x"), "", None
        unless = context

    text = "y" * (4 * MIB)
    s = 2 * MIB
    assert window.context_ok(text, _Target(), s, s + 10, {})  # type: ignore[arg-type]
    assert tally[0] <= 2 * window.SPAN + 10 + 2 * window.AROUND, tally[0]


# units of a localised message's literal that make no message (kb/locale.py): near misses
# (the literal alone; its words too far apart; a message on every unit; context missing)
NEAR_MISSES = [" kann nicht gefunden werden.", f"Paket {'x' * 260} kann nicht gefunden werden.",
               " : Hängt ab von: ", "x Hängt ab von: ",
               # dpkg's Korean "%s %s" (review 28M F1): two placeholders a space apart
               "'x'의 덮어쓰기를 시도합니다. 이 파일은 " + " " * 250]


@pytest.mark.parametrize("unit", NEAR_MISSES)
def test_phrase_regex_work_on_a_line_of_near_misses_is_a_few_times_its_length(unit: str) -> None:
    """A 4 MiB line of a phrase's literal that makes no message (or only now and then): each
    phrase's search of the line goes on from where the last one stopped, so the characters
    handed to the phrases' regexes stay a small multiple of the line, with no cap on the hits
    tried (a message at the line's end is still put back)."""
    from dataclasses import replace

    from rocmprov.kb import locale

    class Reading(_Counting):  # a search reads up to its match's end (or its window's)
        def search(self, text: str, lo: int = 0, hi: int | None = None) -> Any:
            m = self.regex.search(text, lo, len(text) if hi is None else hi)
            self.tally[0] += (m.end() if m else len(text) if hi is None else hi) - lo
            return m

    tally = [0]
    phrases = locale.load_phrases()
    wrapped_phrases = replace(phrases, candidates={
        word: tuple(replace(p, regex=Reading(p.regex, tally)) for p in ps)  # type: ignore[arg-type]
        for word, ps in phrases.candidates.items()
    })  # fmt: skip
    size = 4 * MIB
    text = _line(unit, size) + " E: Paket rocm kann nicht gefunden werden."
    result = locale.translate(text, wrapped_phrases)
    assert "Unable to locate package" in result.text[-400:]  # the last "Paket" starts it
    assert tally[0] <= 2 * size, tally[0]


def test_a_placeholder_before_literal_text_is_tried_once_per_start() -> None:
    """Review 28M F1: a lazy placeholder before more text ("이 파일은 %s %s 패키지에도", "von %s
    %s") let the regex try each of its MAX_ARG lengths against each of the next one's at every
    near miss (MAX_ARG ** 2 steps a unit: 13 s on a 4 MB line). Python's re counts no steps, so
    the shape is checked: every placeholder followed by literal text is possessive (it stops at
    that text's first place), so a start costs MAX_ARG steps at most per placeholder."""
    from rocmprov.kb import locale

    lazy = re.compile(rf"\{{0,{locale.MAX_ARG}\}}\?\)(?!\()")  # a lazy one, then not a group
    phrases = {id(p): p for ps in locale.load_phrases().candidates.values() for p in ps}
    assert len(phrases) > 400
    assert [p.regex.pattern for p in phrases.values() if lazy.search(p.regex.pattern)] == []
    two = locale.compile_phrase("Failed to fetch %s  %s", "Fehlschlag beim Holen von %s %s")
    assert two.regex.pattern.count("}+)") == 1  # the first; the last takes the rest of the line
    m = two.regex.search("E: Fehlschlag beim Holen von http://a/b.deb 404  Not Found")
    assert m is not None and two.render(m) == "Failed to fetch http://a/b.deb  404  Not Found"
