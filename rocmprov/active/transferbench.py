"""TransferBench output -> bandwidths. Pure.

Two shapes (ROCm/TransferBench): a configFile run prints ' Transfer NN | X GB/s | T ms | B bytes |
SRC -> EXE -> DST' rows and ' Aggregate (CPU) | X GB/s ...'; the peer-to-peer preset prints a
matrix 'Unidirectional|Bidirectional copy peak bandwidth GB/s ...', a ' SRC+EXE\\DST  CPU 00 ...
GPU 03' header and '  GPU 00  ->  v v v' rows (min/max/sd rows beside them are left out).
"""

from __future__ import annotations

import re
from dataclasses import dataclass


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
_TRANSFER = re.compile(r"^\s*Transfer\s+(\d+)\s*\|\s*([\d.]+)\s*GB/s\s*\|.*\|\s*([^|]*->[^|]*)$")
_AGG = re.compile(r"^\s*Aggregate\s*\([^)]*\)\s*\|\s*([\d.]+)\s*GB/s")


def parse_transferbench(text: str) -> TransferBenchRun:
    cells, transfers, aggs = [], [], []
    direction, columns = "", []
    for line in text.splitlines():
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
        elif m := _TRANSFER.match(line):
            transfers.append(Transfer(int(m.group(1)), float(m.group(2)), m.group(3).strip()))
        elif m := _AGG.match(line):
            aggs.append(float(m.group(1)))
    return TransferBenchRun(tuple(cells), tuple(transfers), tuple(aggs))
