"""Round 26, engineer g5: whole runtime logs as users paste them, and the rank of the first
answer.

Whole pastes (a server's start-up, a training run, a dmesg around a reset) are kept as wordings
fixtures of the entry that explains them (tests/fixtures/kb-wordings/<id>.whole-log-*.txt);
tests/test_kb_wordings.py checks each is answered first by its entry. Here: the one ranking
rule this round adds, that a launcher's "no AMD GPU found" line ranks above the ZLUDA / CPU
fallback lines it leads to."""

from __future__ import annotations

from pathlib import Path

from kb_helpers import first, known

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"
WHOLE_LOGS = sorted((FIXTURES / "kb-wordings").glob("*.whole-log-*.txt"))


def _text(path: Path) -> str:
    return path.read_text(encoding="utf-8").partition("\n---\n")[2]


def test_the_whole_logs_are_whole() -> None:
    """The point of these fixtures is the paste around the key line: several lines each."""
    assert len(WHOLE_LOGS) >= 7
    for path in WHOLE_LOGS:
        assert _text(path).count("\n") >= 3, path.name


def test_no_rocm_agent_ranks_above_the_zluda_cpu_fallback_it_leads_to() -> None:
    """SD.Next / the amdgpu web UI found no GPU (the HIP runtime saw none); the ZLUDA load
    failure and CPU-only torch that follow in the same start-up are its consequence, so the
    launcher's line answers first (priority 42 above framework.zluda-webui-cpu-fallback's 40)."""
    agent = _text(FIXTURES / "kb" / "framework.sd-webui-no-rocm-agent.txt")
    fallback = _text(FIXTURES / "kb" / "framework.zluda-webui-cpu-fallback.txt")
    both = agent + fallback
    found = [m.id for m in known(both)]
    assert found[:2] == ["framework.sd-webui-no-rocm-agent", "framework.zluda-webui-cpu-fallback"]
    # and the fallback alone is still its own entry's
    top = first(fallback)
    assert top is not None and top.id == "framework.zluda-webui-cpu-fallback"


def test_the_sdnext_start_up_log_is_answered_by_the_no_agent_line() -> None:
    """The healthy start-up lines around it (Starting SD.Next, Version, Platform, ZLUDA load,
    the skipped HSA_OVERRIDE_GFX_VERSION auto config) explain nothing."""
    found = known(_text(FIXTURES / "kb" / "framework.sd-webui-no-rocm-agent.txt"))
    assert [m.id for m in found] == ["framework.sd-webui-no-rocm-agent"]
    assert found[0].evidence == ("18:32:42-049653 WARNING  ROCm: no agent was found",)
