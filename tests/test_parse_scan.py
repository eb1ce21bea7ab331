"""The whole-text scans in the kernel log and os-release parsers read lines exactly as a
line-by-line reading would: any line separator, a prefix never read across a line end, the
2,048-character line limit, and os-release values as the shell (shlex) reads them."""

from __future__ import annotations

import shlex

from hypothesis import given, settings
from hypothesis import strategies as st

from rocmprov.parse.dmesg import parse_dmesg
from rocmprov.parse.system import parse_os_release
from tests.fixtureload import all_fixtures

LINES = [line for fx in all_fixtures(("dmesg",)) for line in fx.text.splitlines()]
SEPARATORS = ["\n", "\r\n", "\r", "\x0b", "\x0c", "\x1c", "\x85", "\u2028"]
SYSLOG = "Oct  7 12:58:23 gpu01 kernel: "


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.sampled_from(LINES), min_size=1, max_size=30),
    st.sampled_from(SEPARATORS),
)
def test_every_line_separator_reads_the_same(lines: list[str], sep: str) -> None:
    assert parse_dmesg(sep.join(lines)) == parse_dmesg("\n".join(lines))


def test_the_first_prefixed_line_says_the_format() -> None:
    amd = "amdgpu 0000:03:00.0: amdgpu: GPU reset begin!"
    assert parse_dmesg(f"[    1.5] {amd}").log_format == "dmesg"
    assert parse_dmesg(f"noise\n{SYSLOG}[    1.5] {amd}").log_format == "syslog"
    assert parse_dmesg(f"{SYSLOG}{amd}").log_format == "journalctl"
    iso = f"2024-10-07T12:58:23+0000 gpu01 kernel: {amd}"
    assert parse_dmesg(f"[ 1.0] x\n{iso}\n{SYSLOG}[ 1.5] {amd}").log_format == "journalctl"


def test_a_prefix_is_never_read_across_a_line_end() -> None:
    # "Oct" and " 7 12:58:23 gpu01 kernel:" on two lines: not a syslog line
    text = "Oct\n 7 12:58:23 gpu01 kernel: amdgpu: GPU reset begin!"
    assert parse_dmesg(text).log_format == "dmesg"
    assert parse_dmesg("kernel: amdgpu 0000:03:00.0: x\nkernel:").log_format == "dmesg"


def test_a_word_past_the_line_limit_does_not_make_a_line_relevant() -> None:
    far = "x" * 2048 + " amdgpu 0000:03:00.0: GPU reset begin!"
    near = "amdgpu 0000:03:00.0: amdgpu: GPU reset begin!"
    assert parse_dmesg(far).events == ()
    assert [e.tag for e in parse_dmesg(f"{far}\n{near}").events] == ["gpu_reset"]


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="ab \t\"'\\$`#;=", max_size=16))
def test_os_release_values_are_the_shells_first_word(raw: str) -> None:
    try:
        words = shlex.split(raw)
    except ValueError:
        return  # unbalanced quotes: not a shell word (the parser keeps the stripped text)
    assert parse_os_release(f"ID={raw}").id == (words[0] if words else "").lower()
