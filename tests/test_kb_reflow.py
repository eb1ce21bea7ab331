"""Lines a terminal wrapped at its width are joined back before matching (kb/reflow.py)."""

from __future__ import annotations

from rocmprov.kb.matcher import analyse
from rocmprov.kb.reflow import unwrap

# the message starts at column 70: a terminal 80 columns wide cuts it in two
ERROR = "p" * 70 + "hipErrorNoBinaryForGpu: Unable to find code object for all current devices!"


def _wrap(line: str, width: int) -> str:
    return "\n".join(line[i : i + width] for i in range(0, len(line), width))


def test_unwrap_joins_runs_of_exact_width_and_maps_line_numbers() -> None:
    text = "first line\n" + _wrap("x" * 200 + " end", 80) + "\nlast line"
    joined, starts = unwrap(text)
    assert joined.split("\n") == ["first line", "x" * 200 + " end", "last line"]
    assert starts == [1, 2, 5]


def test_unwrap_leaves_unwrapped_text_alone() -> None:
    text = "short\n" + "y" * 79 + "\nz"
    assert unwrap(text) == (text, [])


def test_an_error_wrapped_at_80_columns_is_found_on_its_first_line() -> None:
    text = "python train.py\n" + _wrap(ERROR, 80) + "\nAborted (core dumped)\n"
    found = {m.id: m for m in analyse(text).matches}
    assert "hip.no-binary-for-gpu" not in {m.id for m in analyse(_wrap(ERROR, 100)[:80]).matches}
    hit = found["hip.no-binary-for-gpu"]
    assert hit.lines == (2,) and ERROR in hit.evidence[0]
