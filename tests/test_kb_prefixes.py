"""Log prefixes in a multi-line message; a line cut at a terminal's width (kb/prefixes.py)."""

from __future__ import annotations

import re

from rocmprov.kb import match
from rocmprov.kb.prefixes import continued, cut_at_line_end


def _matches(regex: str, anchor: str, line: str) -> bool:
    return re.search(cut_at_line_end(regex, anchor), line) is not None


def test_a_line_cut_anywhere_after_the_anchor_still_matches() -> None:
    regex, anchor = r"Unable to find code object for all current devices", "Unable to find code"
    assert _matches(regex, anchor, "x: Unable to find code object for all cur")
    assert _matches(regex, anchor, "x: Unable to find code object for all cur...")
    assert not _matches(regex, anchor, "x: Unable to find code object for some devices")


def test_a_line_that_ends_after_an_open_ended_atom_is_whole_not_cut() -> None:
    regex, anchor = r"undefined symbol: (?P<symbol>hip\w+R0600)", "undefined symbol: "
    assert _matches(regex, anchor, "undefined symbol: hipGetDevicePropertiesR0600")
    assert _matches(regex, anchor, "undefined symbol: hipGetDevicePropertiesR06")  # cut in R0600
    assert not _matches(regex, anchor, "undefined symbol: hiprtcCompileProgram")


def test_a_hip_symbol_other_than_r0600_is_not_diagnosed_as_the_rocm6_abi() -> None:
    ids = [m.id for m in match("ImportError: ./ext.so: undefined symbol: hipGetDeviceProperties\n")]
    assert "hip.abi-r0600-undefined-symbol" not in ids
    text = "ImportError: ./ext.so: undefined symbol: hipGetDevicePropertiesR0600\n"
    assert match(text)[0].id == "hip.abi-r0600-undefined-symbol"


def test_an_optional_line_break_stays_optional_with_a_log_prefix_allowed_after_it() -> None:
    regex = re.compile(continued(r"Error code:\s*\n?\s*43 \| AMDSMI"), re.MULTILINE)
    assert regex.search("Error code: 43 | AMDSMI")
    assert regex.search("Error code:\n43 | AMDSMI")
    assert regex.search("Error code:\n[   12.5] 43 | AMDSMI")
    assert not regex.search("Error code:\n\n\nx 43 | AMDSMI")


def test_a_short_line_is_whole_and_only_a_long_or_ellipsis_line_is_taken_as_cut() -> None:
    """A line that ends where a pattern could be cut is a cut line only when it is as long as a
    terminal's or a formatter's width, or ends with an ellipsis (kb/scan.py, MIN_CUT)."""
    assert match("HIP version file: /opt/rocm/.info/version\n") == []
    assert match("HIP version file: /opt/rocm/.info/vers...\n")[0].id == (
        "compiler.hip-version-file-missing"
    )
    long_cut = "x" * 50 + " HIP version file: /opt/rocm/.info/version\n"
    assert match(long_cut)[0].id == "compiler.hip-version-file-missing"


def test_an_optional_atom_after_an_open_ended_one_does_not_open_a_cut() -> None:
    regex, anchor = r"undefined symbol: \w+(?:\.so)?R0600", "undefined symbol: "
    assert not _matches(regex, anchor, "x" * 70 + " undefined symbol: hipFoo")
    assert _matches(regex, anchor, "x" * 70 + " undefined symbol: hipFooR06")
