"""ROCm Validation Suite (`rvs`) output -> per-GPU results. Pure.

RVS's own pass criteria, as its user guide prints them (ROCm/ROCmValidationSuite docs/ug1main.md):
`[RESULT] [ts] [action] [GPU:: id] pass: TRUE|FALSE` (iet, pebb ...), `... met: TRUE|FALSE` (gst),
`[action] smqt <id> pass: false`, `mem Test N : PASS|FAIL`, and the summary table's
`| action | MODULE | PASS/FAIL |` rows.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rocmprov.active.lines import tool_lines


@dataclass(frozen=True)
class RvsResult:
    action: str
    gpu: str  # RVS's GPU id (KFD gpu_id, e.g. 42583), or "" for an action-wide row
    passed: bool
    detail: str = ""


_GPU_PASS = re.compile(
    r"\[RESULT\]\s*\[[^\]]*\]\s*\[([^\]]+)\]\s*\[GPU::\s*(\d+)\]\s*(.{0,300}?)\b(?:pass|met):\s*"
    r"(TRUE|FALSE)",
    re.I,
)
_MOD_PASS = re.compile(
    r"\[RESULT\]\s*\[[^\]]*\]\s*\[([^\]]+)\]\s+(\w+)\s+(\d+)\s+pass:\s*(true|false)", re.I
)
_MEM = re.compile(
    r"\[RESULT\]\s*\[[^\]]*\]\s*\[([^\]]+)\]\s+mem\s+(Test \d+)\s*:\s*(PASS|FAIL)", re.I
)
_ACTION = re.compile(r"[A-Z0-9_]+")
_RESULTS = ("PASS", "FAIL")


def parse_rvs(text: str) -> list[RvsResult]:
    out: list[RvsResult] = []
    for line in tool_lines(text):
        if m := _GPU_PASS.search(line):
            detail = " ".join(m.group(3).split())
            out.append(RvsResult(m.group(1), m.group(2), m.group(4).upper() == "TRUE", detail))
        elif m := _MOD_PASS.search(line):
            out.append(RvsResult(m.group(1), m.group(3), m.group(4).lower() == "true", m.group(2)))
        elif m := _MEM.search(line):
            out.append(RvsResult(m.group(1), "", m.group(3).upper() == "PASS", m.group(2)))
    return out


def parse_rvs_summary(text: str) -> dict[str, str]:
    """The summary table's action -> PASS | FAIL (RVS 1.6+)."""
    out: dict[str, str] = {}
    for line in tool_lines(text):
        cells = line.strip().split("|")
        # "| gpup_single | GPUP | PASS |": a leading and a trailing bar, three cells between
        if len(cells) != 5 or cells[0] or cells[4].strip():
            continue
        name, action, result = (c.strip() for c in cells[1:4])
        if name and name != "Action Name" and _ACTION.fullmatch(action) and result in _RESULTS:
            out[name] = result
    return out
