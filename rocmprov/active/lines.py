"""The lines of a tool's output that the level-2 parsers read. Pure.

RVS, TransferBench and rccl-tests print lines of at most a few hundred characters (a
TransferBench matrix row of 16 GPUs is ~200). A longer line is none of theirs (a hostile or
broken tool, a binary dump): it is skipped, so every parser's work stays linear in the size of
the output, whatever one line holds.
"""

from __future__ import annotations

from collections.abc import Iterator

MAX_LINE = 2048


def tool_lines(text: str) -> Iterator[str]:
    for line in text.splitlines():
        if len(line) <= MAX_LINE:
            yield line
