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


@pytest.mark.parametrize(
    "regex",
    [
        r"gfx_?[0-9a-f]+ is",  # pieces of a gfx target, behind a quantifier or a class
        r"gfx1[01][0-9a-f]{2} x",
        r"Radeon [1-9]\d{3} x",
        r"records:[1-9]\d* x",  # a count that is not zero
        r"and (?P<gib>[2-9]\d*|\d{2,})\.\d+ GiB is reserved",  # two or more
        r"capability (?P<cc>\d+\.\d+) x",  # a version
        r"v\d+\.\d+ x",
        r"(?P<gfx>gfx(?P<n>\d+)) x",  # a value inside a group that holds more
        r"(a)\1 \d+ x",  # a numbered backreference anywhere: the regex stays as written
    ],
)
def test_pieces_ranges_and_versions_stay_as_written(regex: str) -> None:
    """Constructed from the hostile read of 8175052 (F4, F5, F8)."""
    assert redactable(regex) == regex


@pytest.mark.parametrize(
    "tag", ["[drm]", "[INFO]", "[FailedScheduling]", "<module>", "<br>", "[amdgpu]", "[0]"]
)
def test_log_tags_are_not_placeholders(tag: str) -> None:
    assert not re.fullmatch(PLACEHOLDER, tag)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # a line a terminal cut inside a value is still read as a cut line (kb/prefixes.py)
        ("[drm] psp gfx command LOAD_TA(0x1) failed and response status is (0",
         "firmware.psp-gfx-command-failed"),
        ('I0908 23:31:34.248939       1 cmdlog.go:70] "modprobe: ERROR: ctx=0x79e20a05eaa0 '
         "path=/tmp/opt/lib/modules/6.14.0-29-generic/kernel/drivers/gpu/drm/drm_exec.ko.zst "
         "error=No such file or dir", "kubernetes.gpu-operator-kmm-inbox-module-missing"),
        # a whole short line ending in a number is not a cut line
        ("ValueError: The device where the array resides (0) is different from the current "
         "device (1", None),
        # the anchor is read from the rewritten regex: a blanked value after it is scanned
        ('"modprobe: ERROR: ctx=XXXX path=/tmp/opt/lib/modules/6.14.0-29-generic/kernel/drivers/'
         'gpu/drm/drm_exec.ko.zst error=No such file or directory"',
         "kubernetes.gpu-operator-kmm-inbox-module-missing"),
        ("amdgpu 0000:03:00.0: amdgpu: GPU reset end with ret = XXXX", "kernel.gpu-reset-failed"),
        # tags and ellipses in ordinary text
        ("0/3 nodes are available: [FailedScheduling] Insufficient amd.com/gpu.", None),
        ("  Device 1: AMD Radeon Graphics, gfx11..., VMM: no, Wave Size: 32", None),
        ("'gfx...' is not a recognized processor for this target (ignoring processor)", None),
    ],
)  # fmt: skip
def test_cut_lines_anchors_and_ordinary_text(text: str, expected: str | None) -> None:
    """Constructed from the hostile read of 8175052 (F1-F4, F6): what the text as written got
    before the rewrite, it still gets."""
    real = [m.id for m in match(text) if not m.harmless]
    assert (real[0] if real else None) == expected, real
