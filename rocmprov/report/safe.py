"""Text from hosts and logs made safe for a terminal: control characters shown, never obeyed.

Host names, probe outputs and log lines are written by whoever controls the host. An ESC in
them (`\\x1b]8;;...` links, `\\x1b[2J` clear screen, OSC 52 clipboard writes, a title change)
would be obeyed by the admin's terminal; a carriage return or a bidi override can make a
line read as something else. `printable()` spells every such character out (`\\x1b`,
`\\r`, `\\u202e`) and keeps only the newline and tab that layout needs. Every human-facing
renderer (report/table.py, `rocmprov explain`) passes remote text through it, and prints
it through rich with markup off, so `[drm]` stays `[drm]`. Pure; JSON output is untouched
(json escapes control characters itself). The severity colours of every terminal view live
here too.
"""

from __future__ import annotations

from rocmprov.model import Severity

STYLE = {
    Severity.OK: "green",
    Severity.SKIPPED: "dim",
    Severity.UNKNOWN: "magenta",
    Severity.WARNING: "yellow",
    Severity.CRITICAL: "bold red",
}

# C0 controls, DEL, C1 controls (0x9b is a one-byte CSI), and the Unicode format characters
# that reorder or hide text (bidi embeddings, overrides and isolates; line/paragraph separators)
_CONTROLS = [*range(0x00, 0x20), 0x7F, *range(0x80, 0xA0)]
_FORMAT = [0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x2028, 0x2029]
_NAMED = {0x09: "\\t", 0x0A: "\\n", 0x0D: "\\r"}


def _escape(code: int) -> str:
    if code in _NAMED:
        return _NAMED[code]
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


_TABLE = {code: _escape(code) for code in (*_CONTROLS, *_FORMAT)}
_KEEP_LAYOUT = {code: text for code, text in _TABLE.items() if code not in (0x09, 0x0A)}


def printable(text: str, *, one_line: bool = False) -> str:
    """`text` with every control character spelled out (ESC -> `\\x1b`, CR -> `\\r`).
    Newline and tab are kept unless `one_line` (host names, ids, table cells of one line);
    a CRLF line end counts as a newline."""
    if one_line:
        return text.translate(_TABLE)
    return text.replace("\r\n", "\n").translate(_KEEP_LAYOUT)
