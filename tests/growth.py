"""Growth checks: a cost bound that does not depend on the machine's speed.

A test that guards against a quadratic (or exponential) blow-up does not assert an absolute
time (the project's rule: speed targets live in benchmarks/). It times the same call on its
input at size n and at `factor` * n, in CPU time (a loaded machine's wait does not count), the
best of 2, and asserts the ratio is well under what a quadratic cost gives (16 for 4x): linear
is ~4, so < 8 leaves room for noise and still fails a quadratic pass. Each call is repeated
until one timing takes at least `floor` seconds and the ratio is per call, so a fast machine
times something measurable and a blown-up call is timed once, not as often as the cheap one.
`cpu_ratio` compares two calls on the same machine in the same seconds (a log against the same
log without a costly anchor; the table against the table without one entry): a constant-factor
blow-up that growth does not show.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def cpu_seconds(call: Callable[[], object], runs: int = 2, repeat: int = 1) -> float:
    """The least CPU time of `runs` timings of `repeat` calls of `call`."""
    best = float("inf")
    for _ in range(runs):
        t0 = time.process_time()
        for _ in range(repeat):
            call()
        best = min(best, time.process_time() - t0)
    return best


def _repeats(call: Callable[[], object], floor: float, most: int = 4096) -> tuple[int, float]:
    """How many calls of `call` take at least `floor` seconds, and their best time of 2 (of 1
    where one timing took 10 floors: a blown-up call fails the check soon enough)."""
    repeat = 1
    while True:
        took = cpu_seconds(call, 1, repeat)
        if took < 10 * floor:
            took = min(took, cpu_seconds(call, 1, repeat))
        if took >= floor or repeat >= most:
            return repeat, took
        repeat *= 2 if took * 4 >= floor else 8


def growth(
    make: Callable[[int], T], call: Callable[[T], object], n: int, *,
    factor: int = 4, floor: float = 0.1,
) -> float:  # fmt: skip
    """CPU time of `call(make(factor * n))` over that of `call(make(n))` (see `cpu_ratio`)."""
    small, large = make(n), make(factor * n)
    return cpu_ratio(lambda: call(large), lambda: call(small), floor=floor)


def assert_linear(
    make: Callable[[int], T], call: Callable[[T], object], n: int, *,
    factor: int = 4, bound: float = 8.0, floor: float = 0.1,
) -> None:  # fmt: skip
    """`call`'s CPU time grows well under quadratically from `make(n)` to `make(factor * n)`:
    at most `bound` times (quadratic: factor ** 2 = 16)."""
    ratio = growth(make, call, n, factor=factor, floor=floor)
    if ratio >= bound:  # a second, independent timing: noise rarely inflates both, a blow-up does
        ratio = min(ratio, growth(make, call, n, factor=factor, floor=floor))
    assert ratio < bound, f"{factor}x the input took {ratio:.1f}x the CPU time (bound {bound})"


def cpu_ratio(
    call: Callable[[], object], reference: Callable[[], object], *, floor: float = 0.1
) -> float:
    """CPU time of one `call` over that of one `reference`, each repeated until it takes at
    least `floor` seconds (so the cheaper one is not timed too short, nor the costly one long)."""
    repeat_call, took_call = _repeats(call, floor)
    repeat_reference, took_reference = _repeats(reference, floor)
    return (took_call / repeat_call) / max(took_reference / repeat_reference, 1e-12)
