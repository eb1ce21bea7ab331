"""Round 15 (engineer 3): counter-examples for patterns widened this round.

The texts are CONSTRUCTED, not captured outputs: each joins a message's format string (named
beside it) with a device name that makes the entry's cause wrong. They test that a pattern
keeps its context; they say nothing about hardware.
"""

from __future__ import annotations

import pytest

from rocmprov.kb import match

NOT_COMPILED = "AssertionError: Torch not compiled with CUDA enabled"  # torch/cuda/__init__.py

CASES = [
    # a card named after the traceback: iGPU names (3 digits + M, 4 digits + S) are not a
    # discrete Radeon, and an NVIDIA line in between keeps its answer
    (NOT_COMPILED + "\nMy laptop: AMD Radeon 780M iGPU\n", "apt.cuda-torch-on-amd"),
    (NOT_COMPILED + "\nRyzen AI Max with Radeon 8060S\n", "apt.cuda-torch-on-amd"),
    (NOT_COMPILED + "\nGPU: NVIDIA GeForce RTX 4070, iGPU AMD Radeon 7600\n",
     "apt.cuda-torch-on-amd"),
    # pip's resolver warning for another package's extra (pip/_internal/resolution)
    ("WARNING: jaxtyping 0.2.36 does not provide the extra 'rocm'\n",
     "framework.jax-rocm-backend-not-registered"),
]  # fmt: skip


@pytest.mark.parametrize("text, wolf", CASES)
def test_the_entry_does_not_answer_where_its_cause_is_wrong(text: str, wolf: str) -> None:
    assert wolf not in [m.id for m in match(text)]
