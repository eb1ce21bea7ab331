"""tests/growth.py, the kb tests' check of growth instead of a time bound, tells a quadratic
cost from a linear one on any machine (it is the kb tests' guard against quadratic blow-ups)."""

from __future__ import annotations

import re

import pytest

from tests.growth import assert_linear, cpu_ratio, growth


def _linear(text: str) -> int:
    return text.count("b") + len(text.split("a"))


def _quadratic(text: str) -> int:  # a look back to the start from every 256th character
    return sum(text[:i].count("b") for i in range(0, len(text), 256))


def _text(size: int) -> str:
    return "a" * size


def test_a_linear_call_passes() -> None:
    assert_linear(_text, _linear, 1 << 20, floor=0.05)


def test_a_quadratic_call_fails() -> None:
    with pytest.raises(AssertionError, match="4x the input took") as failed:
        assert_linear(_text, _quadratic, 1 << 15, floor=0.03)
    ratio = float(re.search(r"took ([\d.]+)x", str(failed.value)).group(1))  # type: ignore[union-attr]
    assert ratio > 10  # about 16
    assert growth(_text, _linear, 1 << 15, floor=0.05) < 8  # the same sizes, linear


def test_a_call_that_costs_more_than_its_reference_is_told_apart() -> None:
    text = _text(1 << 19)
    assert cpu_ratio(lambda: _linear(text * 4), lambda: _linear(text)) > 2.5
    assert cpu_ratio(lambda: _linear(text), lambda: _linear(text)) < 1.5
