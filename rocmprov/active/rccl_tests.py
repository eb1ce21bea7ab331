"""rccl-tests (`all_reduce_perf`) output -> rows and the summary. Pure.

The format is nccl-tests': '#' header lines, '#  Rank  N Group ... device N [bdf] NAME', one row a
size (size count type redop root, then out-of-place time algbw busbw #wrong, in-place the same),
'# Out of bounds values : N OK|FAILED', '# Avg bus bandwidth    : X'.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rocmprov.active.lines import tool_lines


@dataclass(frozen=True)
class RcclRow:
    size: int
    busbw_out: float
    busbw_in: float
    wrong: int


@dataclass(frozen=True)
class RcclRun:
    ranks: int = 0
    product: str = ""
    rows: tuple[RcclRow, ...] = ()
    avg_busbw: float | None = None
    out_of_bounds: int | None = None

    @property
    def max_busbw(self) -> float | None:
        return max((max(r.busbw_out, r.busbw_in) for r in self.rows), default=None)

    @property
    def wrong(self) -> int:
        return sum(r.wrong for r in self.rows)


_RANK = re.compile(
    r"^#\s*Rank\s+\d+\s+Group\s+\d+\s+Pid\s+\d+\s+on\s+\S+\s+device\s+\d+\s+\[[^\]]*\]\s+(\S.*)$"
)
_ROW = re.compile(
    r"^\s*(\d+)\s+\d+\s+\w+\s+\w+\s+-?\d+\s+[\d.]+\s+[\d.]+\s+([\d.]+)\s+(\S+)"
    r"\s+[\d.]+\s+[\d.]+\s+([\d.]+)\s+(\S+)\s*$"
)
_AVG = re.compile(r"^#\s*Avg bus bandwidth\s*:\s*([\d.]+)")
_OOB = re.compile(r"^#\s*Out of bounds values\s*:\s*(\d+)")


def _wrong(v: str) -> int:
    return int(v) if v.isdigit() else 0 if v == "N/A" else 1


def parse_rccl_tests(text: str) -> RcclRun:
    ranks, product, rows = 0, "", []
    avg = oob = None
    for line in tool_lines(text):
        if m := _RANK.match(line):
            ranks += 1
            product = product or m.group(1).rstrip()
        elif m := _ROW.match(line):
            rows.append(
                RcclRow(
                    int(m.group(1)),
                    float(m.group(2)),
                    float(m.group(4)),
                    _wrong(m.group(3)) + _wrong(m.group(5)),
                )
            )
        elif m := _AVG.match(line):
            avg = float(m.group(1))
        elif m := _OOB.match(line):
            oob = int(m.group(1))
    return RcclRun(ranks, product, tuple(rows), avg, oob)
