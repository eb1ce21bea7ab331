"""Values a user blanked out before posting (rocmprov/kb/redact.py): a number or hex value a
pattern reads may be a placeholder; a part of a word, a lookaround and a value read again by a
backreference stay as written. The hygiene generator's "redacted" variant
(tests/kbvariants.py) holds every entry to it on its own fixture."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rocmprov.kb import match
from rocmprov.kb.redact import PLACEHOLDER, redactable

PLACEHOLDERS = ["[key]", "<redacted>", "[REDACTED]", "0x...", "0xXXXX", "...", "\u2026",
                "****", "XXXXXXXX", "xxx", "<hostname>"]  # fmt: skip


@pytest.mark.parametrize("blank", PLACEHOLDERS)
@pytest.mark.parametrize(
    ("regex", "text"),
    [
        (r"node-(?P<node>\d+) \(Agent handle: (?P<agent>0x[0-9a-f]+)\) reason",
         "node-{} (Agent handle: {}) reason"),
        (r"Running ctor 0x[0-9a-fA-F]+ failed", "Running ctor {} failed"),
        (r"KEYEXPIRED (?P<t>\d{9,11})\b", "KEYEXPIRED {}"),
        (r"exit status (?P<code>0x[0-9a-fA-F]{8})\b", "exit status {} "),
        (r"\bjob \d+: Invalid", "job {}: Invalid"),
    ],
)  # fmt: skip
def test_a_value_may_be_blanked_out(regex: str, text: str, blank: str) -> None:
    filled = text.format(*[blank] * text.count("{}"))
    assert re.search(regex, filled) is None  # as written, the pattern misses it
    assert re.search(redactable(regex), filled), (regex, filled)


@pytest.mark.parametrize(
    "regex",
    [
        r"(?P<gfx>gfx[0-9a-f]+) is not supported",  # a gfx target names the GPU: part of a word
        r"sm_\d+ and",
        r"gfx(?:(?P<digits>[0-9]+)A) x",
        r"(?<=id )\d{4}x",  # a lookbehind keeps its width
        r"(?!\d+ bytes)ok",
        r"kernel (?P<running>\d+)\.\d+ (?!(?P=running)),",  # read again: stays as written
        r"[\d+]{3} x",  # a class, not a run
        r"\\d+ literal",  # an escaped backslash and a 'd'
        r"error -?\d bad",  # one digit: not a value
    ],
)
def test_what_is_not_a_blankable_value_stays_as_written(regex: str) -> None:
    assert redactable(regex) == regex


def test_a_boundary_goes_with_the_value() -> None:
    rewritten = redactable(r"status \b\d{8}\b done")
    assert re.search(rewritten, "status [key] done")
    assert re.search(rewritten, "status 12345678 done")
    assert not re.search(rewritten, "status 123456789 done")  # \d{8}\b still bounds the value


@given(st.from_regex(r"[0-9]{1,12}", fullmatch=True))
def test_the_written_values_still_match_and_capture(number: str) -> None:
    m = re.search(redactable(r"node-(?P<node>\d+) x"), f"node-{number} x")
    assert m is not None and m.group("node") == number


def test_placeholders_are_not_words_of_a_message() -> None:
    for word in ("error", "Error", "failed", "x", "xx", "0x", "..", "**", "[]", "<>", "[1x]"):
        assert not re.fullmatch(PLACEHOLDER, word), word


def test_explain_answers_a_message_with_its_values_blanked_out() -> None:
    """Constructed from hsa.hw-exception-gpu-hang's and apt.rocm-key-expired's own fixture
    lines, their values blanked as users post them."""
    hang = "HW Exception by GPU node-1 (Agent handle: 0x...) reason :GPU Hang"
    assert match(hang)[0].id == "hsa.hw-exception-gpu-hang"
    expired = (
        "W: GPG error: http://repo.radeon.com/rocm/apt/debian xenial InRelease: The following "
        "signatures were invalid: KEYEXPIRED [key]"
    )
    assert match(expired)[0].id == "apt.rocm-key-expired"
    found = match(hang)[0]
    assert "agent" not in {k for k, v in found.captures.items() if v}  # nothing captured


def test_one_digit_is_an_index_not_a_value() -> None:
    """hip.igpu-visible-alongside-dgpu reads `Device (?P<device>[1-9]):` (a second device);
    a blanked device number must not make device 0's healthy line the cause."""
    assert redactable(r"Device (?P<device>[1-9]): AMD") == r"Device (?P<device>[1-9]): AMD"
    line = "  Device XXX: AMD Radeon Graphics, gfx1151 (0x1151), VMM: no, Wave Size: 32"
    assert [m.id for m in match(line) if not m.harmless] == []
