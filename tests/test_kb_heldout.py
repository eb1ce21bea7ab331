"""The troubleshooting table measured on real reports it was not written from.

tests/data/kb-heldout/ holds the held-out cases (rules in its README); rocmprov/kb/evaluate.py
computes top-1 accuracy and the share of harmless lines recognised; docs/troubleshooting.md
states both (tests/test_kb.py keeps the document in sync with what this computes).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from kbsplit import normalise, side

from rocmprov.kb import load_table
from rocmprov.kb.codes import load_codes
from rocmprov.kb.evaluate import (
    BENIGN,
    evaluate,
    load_cases,
    parse_case,
    summary,
    table_of_figures,
    top_answer,
)  # fmt: skip

ROOT = Path(__file__).resolve().parent.parent
HELDOUT = ROOT / "tests" / "data" / "kb-heldout"
FIXTURES = ROOT / "tests" / "fixtures" / "kb"
AREAS = {"firmware", "compiler", "runtime", "framework", "llm", "packages", "container",
         "memory", "amdsmi", "benign"}  # fmt: skip
CASES = load_cases(HELDOUT)
TABLE = load_table()
# Issue 28 asks for 150 cases (25 benign); collection stands at 243 (43 benign) after round 12,
# see tests/data/kb-heldout/PROGRESS.md. These floors keep what exists from shrinking.
MIN_CASES = 290
MIN_BENIGN = 46


def test_the_set_is_as_large_as_the_issue_asks() -> None:
    assert len(CASES) >= MIN_CASES
    assert sum(1 for c in CASES if c.expected == BENIGN) >= MIN_BENIGN
    assert len({normalise(c.source) for c in CASES}) >= 0.9 * len(CASES)  # ~one case a report


def test_no_case_is_counted_twice() -> None:
    """Two cases of one report are two lines of it (a harmless line and the failure), never
    the same text again: it would count one answer twice."""
    seen: dict[tuple[str, str], str] = {}
    for case in CASES:
        key = (normalise(case.source), " ".join(case.text.split()))
        assert key not in seen, f"{case.name} repeats {seen[key]}"
        seen[key] = case.name


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_a_case_is_held_out_labelled_and_real_text(case) -> None:  # type: ignore[no-untyped-def]
    assert side(case.source) == "heldout", case.source
    assert case.area in AREAS and case.name.startswith(case.area + ".")
    assert case.text.strip() and len(case.cause) > 20
    if case.expected == BENIGN:
        assert case.area == "benign"
        if case.entry:  # the harmless entry that covers the line (labelled from `cause`)
            assert case.entry in TABLE.by_id and TABLE.by_id[case.entry].harmless, case.entry
    elif case.expected == "missing":
        pass  # the table has no entry for this cause yet: a miss, by design
    elif case.expected.startswith("code."):
        assert case.expected.rsplit(".", 1)[1] in load_codes().by_name
    else:
        assert case.expected in TABLE.by_id, f"{case.name}: label {case.expected!r}"


def _sources_of_fixture(path: Path) -> list[str]:
    head = path.read_text(encoding="utf-8").partition("\n---\n")[0]
    return [line.split(":", 1)[1].strip() for line in head.splitlines()
            if line.startswith("source:")]  # fmt: skip


def test_no_entry_or_fixture_cites_a_held_out_report() -> None:
    held = {normalise(c.source) for c in CASES}
    cited = [(e.id, url) for e in TABLE.entries for url in e.sources]
    cited += [(p.name, url) for p in FIXTURES.glob("*.txt") for url in _sources_of_fixture(p)]
    wrong = [(who, url) for who, url in cited if side(url) != "table" or normalise(url) in held]
    assert wrong == []


# Older names of renamed repositories (GitHub redirects them) that kbsplit's RENAMED does not
# fold (folding them now would move reports already on one side to the other); a report cited
# under one spelling and held out under the other would be one report on both sides.
ALIASES = {
    "/microsoft/deepspeed/": "/deepspeedai/deepspeed/",
    "/rocmsoftwareplatform/": "/rocm/",
    "/radeonopencompute/": "/rocm/",
    "/openai/triton/": "/triton-lang/triton/",
    "/comfyanonymous/comfyui/": "/comfy-org/comfyui/",
    "/oobabooga/text-generation-webui/": "/oobabooga/textgen/",
    "/vladmandic/automatic/": "/vladmandic/sdnext/",
    "/lshqqytiger/stable-diffusion-webui-directml/": "/lshqqytiger/stable-diffusion-webui-amdgpu/",
    "/timdettmers/bitsandbytes/": "/bitsandbytes-foundation/bitsandbytes/",
    "/ggerganov/whisper.cpp/": "/ggml-org/whisper.cpp/",
    "/gpuopen-professionalcompute-libraries/": "/rocm/",
    "/gpuopen-professionalcompute-tools/": "/rocm/",
}


def _one_spelling(url: str) -> str:
    norm = normalise(url)
    for old, new in ALIASES.items():
        norm = norm.replace("github.com" + old, "github.com" + new)
    return norm


def test_no_report_is_on_both_sides_under_a_renamed_repository_s_older_name() -> None:
    held = {_one_spelling(c.source) for c in CASES}
    cited = [(e.id, url) for e in TABLE.entries for url in e.sources]
    cited += [(p.name, url) for folder in (FIXTURES, FIXTURES.parent / "kb-wordings")
              for p in folder.glob("*.txt") for url in _sources_of_fixture(p)]  # fmt: skip
    assert _one_spelling("https://github.com/microsoft/DeepSpeed/issues/1") == _one_spelling(
        "https://github.com/deepspeedai/DeepSpeed/pull/1")
    assert [(who, url) for who, url in cited if _one_spelling(url) in held] == []


def test_the_evaluation_counts_what_explain_puts_first() -> None:
    first = next(c for c in CASES if c.expected not in (BENIGN,) and top_answer(c.text))
    figures = evaluate([first], TABLE)
    assert figures.causes == 1 and figures.top1 == (top_answer(first.text) == first.expected)
    fake = parse_case("x.txt", "source: s\narea: benign\ncause: c\nexpected: benign\n---\nok\n")
    assert evaluate([fake], TABLE).benign_recognised == 0  # nothing matched is not "recognised"


def test_accuracy_and_benign_share_are_computed_and_documented() -> None:
    figures = evaluate(CASES, TABLE)
    doc = (ROOT / "docs" / "troubleshooting.md").read_text(encoding="utf-8")
    assert summary(figures) in doc and table_of_figures(figures) in doc
    print("\n" + summary(figures) + "\n" + table_of_figures(figures))  # shown with pytest -s
    for name in ("top1", "top3", "benign"):
        assert sum(figures.tally(f"{name}.{g}").of for g in ("cited", "not cited")) > 0
    # floors just under the figures of round 12 on 243 cases (53.5 % and 76.7 %, PROGRESS.md;
    # round 12's table work was aimed at the older cases' missed causes, so these figures are
    # optimistic, and the 25 cases written after it froze read 13.6 %): they fail loudly if
    # the table regresses; the aims (90 % each) and the distance to them are in the doc
    assert figures.accuracy >= 0.55, summary(figures)
    assert figures.benign_share >= 0.80, summary(figures)
