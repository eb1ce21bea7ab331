"""Review 29R: a second read of session 28's matcher code (issue 28: `rocmprov explain`); each
test is a finding that failed on 35bba64, before its fix.

The texts are synthetic reproducers built around real program lines (rocBLAS 4.2.0's
rocblas_set_stream warning, library/src/include/handle.hpp#L372 at rocBLAS 54f305c); they
quote no report."""

from __future__ import annotations

from dataclasses import replace

from rocmprov.kb import load_table
from rocmprov.kb.codes import load_codes
from rocmprov.kb.locale import load_phrases
from rocmprov.kb.matcher import _add_loosened, analyse
from rocmprov.kb.scan import MAX_COUNT, compile_table, scan
from rocmprov.kb.table import Table
from tests.growth import assert_linear

# rocBLAS 4.2.0's harmless warning: its matched span holds a HIP status code's name
# (the fixture's line, as definitions.hpp#L77's format prints it)
WARNING = "hip error code: 'hipErrorContextIsDestroyed':709 at library/src/include/handle.hpp:372\n"
HARMLESS = "release.rocblas-set-stream-context-destroyed-warning"
CODE = "code.hip.hipErrorContextIsDestroyed"
# the same code in a line of a program's own (synthetic): no harmless message
REAL = "hipMemcpy failed: hipErrorContextIsDestroyed\n"


def _found(text: str) -> dict[str, tuple[int, ...]]:
    return {m.id: m.lines for m in analyse(text).matches}


def test_a_harmless_span_explains_its_code_on_its_own_line_only() -> None:
    """F1: the code names inside a harmless match's span were dropped on every line of the log
    (35bba64: a real failure on line 1 vanished behind a warning on line 2, exit 0)."""
    assert _found(WARNING) == {HARMLESS: (1,)}
    assert _found(REAL + WARNING) == {CODE: (1,), HARMLESS: (2,)}
    # the code's first line was inside the span: its next line is its hit, not nothing
    assert _found(WARNING + REAL) == {HARMLESS: (1,), CODE: (2,)}


def test_a_saturated_harmless_entry_still_explains_its_code_after_the_scan_stopped() -> None:
    """Past MAX_COUNT matches the scan stops looking for the entry: the lines after that are
    its own too, not a bare code."""
    assert _found(WARNING * (MAX_COUNT + 50)) == {HARMLESS: tuple(range(1, 11))}
    found = _found(REAL + WARNING * (MAX_COUNT + 50))
    assert found[CODE] == (1,)


def test_a_match_found_only_in_the_text_put_back_keeps_no_places_of_that_text() -> None:
    """F4: where kb/reflow.py moved no line (an HTML entity, quote marks, spacing put back),
    35bba64 kept the scan's places on the text put back as places on the user's line (`Found.at`,
    which kb/ownwords.py reads to cut a localised enormous line's evidence): here the match ends
    at 86 there and at 94 on the user's line. Not known is what they are now."""
    table = load_table()
    compiled = compile_table(table, load_codes(), load_phrases().words)
    text = WARNING.replace("'", "&#39;")
    found = scan(text, compiled, {})
    assert not found
    added = _add_loosened(text, compiled, found)
    assert [table.entries[i].id for i in added] == [HARMLESS]
    assert [found[i].at for i in added] == [[(-1, -1)]]


def test_a_harmless_line_put_back_explains_its_code_on_its_own_line_only() -> None:
    """F5: a harmless line found only in the text put back (kb/reflow.py: here an HTML-escaped
    quote) explained its code's name on every line, as F1 (pre-28): the real line vanished."""
    escaped = WARNING.replace("'", "&#39;")
    assert _found(escaped) == {HARMLESS: (1,)}
    assert _found(REAL + escaped) == {CODE: (1,), HARMLESS: (2,)}
    assert _found(escaped + REAL) == {HARMLESS: (1,), CODE: (2,)}


def test_several_lines_put_back_from_one_line_do_not_explain_the_code_after_it() -> None:
    """F5: a harmless entry matched twice on one original line (two escaped warnings in one
    JSON string) has more matches than evidence lines without any line left unshown."""
    line = '{"log": "' + WARNING.rstrip("\n").replace("'", "\\u0027") + "\\n"
    line += WARNING.rstrip("\n").replace("'", "\\u0027") + '\\n"}\n'
    found = analyse(line + REAL).matches
    assert [(m.id, m.lines) for m in found] == [(CODE, (2,)), (HARMLESS, (1,))]


# Review 29R-2 (reproducers of /tmp/rev29R, synthetic around the same real warning line)


def test_a_mangled_copy_of_a_warning_found_in_place_is_still_the_harmless_entrys() -> None:
    """R1 (J, L): the warning found in place on line 1 kept the entry out of the text put back
    (matcher._add_loosened adds only entries not found), so the same warning HTML-escaped, or
    in a pytest repr with \\' quotes, on line 2 was no one's: its code was reported, exit 1."""
    html = WARNING + WARNING.replace("'", "&#39;")
    assert _found(html) == {HARMLESS: (1,)}
    quoted = WARNING.rstrip("\n").replace("'", "\\'")
    repr_line = f"E   AssertionError: stderr was '{quoted}\\n'\n"
    assert _found(WARNING + repr_line) == {HARMLESS: (1,)}
    # the mangled copy explains its own code only: a real line after it is still reported
    assert _found(html + REAL) == {HARMLESS: (1,), CODE: (3,)}


def test_lines_put_back_past_the_evidence_kept_are_read_one_by_one() -> None:
    """R2 (A): six repr lines of two escaped warnings each put back twelve lines onto six user
    lines: the evidence kept ten put-back lines (user lines 1-5), so line 6 was reported as a
    bare code, and a real code after it (I) was reported on line 6."""
    quoted = WARNING.rstrip("\n").replace("'", "\\'")
    line = f"stderr: '{quoted}\\n{quoted}\\n'\n"
    assert set(_found(line * 6)) == {HARMLESS}
    assert _found(line * 6 + REAL)[CODE] == (7,)


def test_a_real_code_after_more_escaped_warnings_than_the_evidence_keeps_is_reported() -> None:
    """R3 (B): eleven HTML-escaped warnings, then a real failure: the put-back "after the last
    evidence line" rule hid it (exit 0); likewise past MAX_COUNT warnings in place (C)."""
    escaped = WARNING.replace("'", "&#39;")
    assert _found(escaped * 11 + REAL)[CODE] == (12,)
    assert _found(WARNING * (MAX_COUNT + 50) + REAL)[CODE] == (MAX_COUNT + 51,)


def test_a_line_read_on_its_own_keeps_its_patterns_context_rule() -> None:
    """The line check is the scan's own (scan.line_match and window.context_ok), not a bare
    search: a context that rules the harmless cause out around the mangled copy leaves its code
    reported. (No harmless entry of the table holding a code has a context rule today: the
    warning's entry is given one here, `unless` a made-up marker within 2 lines.)"""
    table = load_table()
    entries = tuple(
        replace(e, patterns=tuple(replace(p, unless="CONTEXT-MARK", around=2) for p in e.patterns))
        if e.id == HARMLESS else e
        for e in table.entries
    )  # fmt: skip
    marked = Table(entries)
    text = WARNING + "step\n" * 5 + "CONTEXT-MARK\n" + WARNING.replace("'", "&#39;")
    assert {m.id: m.lines for m in analyse(text, table=marked).matches} == {
        HARMLESS: (1,),
        CODE: (8,),
    }
    assert {m.id: m.lines for m in analyse(text, table=table).matches} == {HARMLESS: (1,)}


def test_the_same_code_after_the_warning_on_its_line_is_still_reported() -> None:
    """R4 (F): a JSON log line holding the warning and then a failure with the same code (its
    string's \\n between them): the match held the name, so the second copy was hidden too (as
    the module says, a code printed after the harmless message is still looked up)."""
    line = '{"log": "' + WARNING.rstrip("\n") + "\\n" + REAL.rstrip("\n") + '\\n"}\n'
    assert _found(line) == {HARMLESS: (1,), CODE: (1,)}
    # two warnings on one line: both copies are inside a match (the scan keeps the first only)
    assert _found(WARNING.rstrip("\n") + " " + WARNING) == {HARMLESS: (1,)}


def test_the_same_code_in_another_spelling_after_the_warning_is_still_reported() -> None:
    """Review 29R-3 (2): the real failure after the warning on its line, written as HIP's
    message (as torch prints it) rather than the code's name, was hidden: only the name was
    looked for outside the harmless match. Plain and inside a JSON string."""
    tail = " | RuntimeError: HIP error: context is destroyed"
    plain = WARNING.rstrip("\n") + tail + "\n"
    assert _found(plain) == {HARMLESS: (1,), CODE: (1,)}
    json_line = '{"ts": 1, "log": "' + WARNING.rstrip("\n") + tail + '\\nnext"}\n'
    assert _found(json_line) == {HARMLESS: (1,), CODE: (1,)}


def test_reading_code_lines_on_their_own_grows_linearly_with_the_line() -> None:
    """Review 29R-3 (1): a code line a found harmless entry explains was searched whole by every
    harmless pattern from every position (hipfc's `/\\S*?bin/` retried from every '/': 80 such
    lines of 3,900 characters took 6.45 s, 0.02 s before): now only around the pattern's
    anchor, as the scan does. Line width 500 -> 2,000 characters."""

    def make(width: int) -> str:
        rows = ["hipfc not found, but that is OK"]
        rows += [
            f"[{i:08d}] /opt/rocm/hipErrorNoDevice/bin/hipfc not found, but that is OK "
            + "/" * width
            for i in range(20)
        ]
        return "\n".join(rows) + "\n"

    assert_linear(make, analyse, 500)
