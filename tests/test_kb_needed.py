"""The matcher looks a fact up in the whole text (one more pass over it) only where a matched
entry needs it and its own match did not capture it: a captured value wins over the text's
fact anyway (review 25C: rocr.incompatible-kernel-userspace's `{gpu}`, captured by its own
line, cost a whole-text GPU-name search of ~0.5 s per 20 MB of log)."""

from __future__ import annotations

from typing import Any

import pytest

from rocmprov.kb import matcher

CAPTURED = "kfd kfd: amdgpu: Incompatible kernel and userspace, Vega 20 disabled. Upgrade amdgpu\n"
UNCAPTURED = "HSA_AMD_AGENT_INFO_MEMORY_AVAIL query failed\n"


def _asked(monkeypatch: pytest.MonkeyPatch, text: str) -> tuple[list[str], list[Any]]:
    asked: list[str] = []
    real = matcher.extract

    def spy(text: str, names: list[str]) -> Any:
        asked.extend(names)
        return real(text, names)

    monkeypatch.setattr(matcher, "extract", spy)
    return asked, matcher.match(text)


def test_a_fact_the_entry_captured_is_not_looked_up_again(monkeypatch: pytest.MonkeyPatch) -> None:
    asked, found = _asked(monkeypatch, CAPTURED)
    entry = next(m for m in found if m.id == "rocr.incompatible-kernel-userspace")
    assert "Vega 20" in entry.cause
    assert "gpu" not in asked


def test_an_uncaptured_fact_is_still_looked_up(monkeypatch: pytest.MonkeyPatch) -> None:
    asked, found = _asked(monkeypatch, UNCAPTURED)
    assert any(m.id == "rocr.incompatible-kernel-userspace" for m in found)
    assert "gpu" in asked
