"""TransferBench output -> bandwidths. Pure.

Two shapes (ROCm/TransferBench): a configFile run prints ' Transfer NN | X GB/s | T ms | B bytes |
SRC -> EXE -> DST' rows and ' Aggregate (CPU) | X GB/s ...'; the peer-to-peer preset prints a
matrix 'Unidirectional|Bidirectional copy peak bandwidth GB/s ...', a ' SRC+EXE\\DST  CPU 00 ...
GPU 03' header and '  GPU 00  ->  v v v' rows (min/max/sd rows beside them are left out).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rocmprov.active.lines import tool_lines


@dataclass(frozen=True)
class Cell:
    src: str  # "GPU 00"
    dst: str
    gbps: float
    direction: str  # unidirectional | bidirectional


@dataclass(frozen=True)
class Transfer:
    index: int
    gbps: float
    path: str  # "G0 -> GPU00:004 -> G1"


@dataclass(frozen=True)
class TransferBenchRun:
    cells: tuple[Cell, ...] = ()
    transfers: tuple[Transfer, ...] = ()
    aggregates: tuple[float, ...] = ()


_MATRIX = re.compile(r"^\s*(Unidirectional|Bidirectional) copy peak bandwidth", re.I)
_HEADER = re.compile(r"^\s*SRC\+EXE\\DST\s+(.*)$")
_ROW = re.compile(r"^\s*((?:CPU|GPU|NIC)\s+\d+)\s+(->|<->)\s+(.*)$")
_TRANSFER = re.compile(r"^\s*Transfer\s+(\d+)\s*$")
_GBS = re.compile(r"^\s*([\d.]+)\s*GB/s\s*$")
_AGG = re.compile(r"^\s*Aggregate\s*\([^)]*\)\s*\|\s*([\d.]+)\s*GB/s")


def parse_transferbench(text: str) -> TransferBenchRun:
    cells, transfers, aggs = [], [], []
    direction, columns = "", []
    for line in tool_lines(text):
        if m := _MATRIX.match(line):
            direction, columns = m.group(1).lower(), []
        elif m := _HEADER.match(line):
            columns = re.findall(r"(?:CPU|GPU|NIC)\s+\d+", m.group(1))
        elif (m := _ROW.match(line)) and columns:
            for dst, raw in zip(columns, m.group(3).split(), strict=False):
                try:
                    cells.append(Cell(m.group(1), dst, float(raw), direction))
                except ValueError:
                    continue  # "N/A" on the diagonal
        elif t := _transfer(line):
            transfers.append(t)
        elif m := _AGG.match(line):
            aggs.append(float(m.group(1)))
    return TransferBenchRun(tuple(cells), tuple(transfers), tuple(aggs))


def _transfer(line: str) -> Transfer | None:
    """ "Transfer 1 | 5.0 GB/s | 1.0 ms | ... | GPU 0 -> GPU 1": the number, the bandwidth and
    the last cell, which names the path (an arrow in it)."""
    cells = line.split("|")
    if len(cells) < 4 or not (n := _TRANSFER.match(cells[0])) or not (g := _GBS.match(cells[1])):
        return None
    path = cells[-1].strip()
    if "->" not in path:
        return None
    try:
        return Transfer(int(n.group(1)), float(g.group(1)), path)
    except ValueError:
        return None
