"""The similarity tier (issue 28, item 3): below the patterns, never a diagnosis."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from rocmprov.commands import explain
from rocmprov.kb import load_table, match
from rocmprov.kb import similar as sim
from rocmprov.kb.evaluate import BENIGN, load_cases
from rocmprov.kb.lineends import normalise
from rocmprov.kb.table import Entry, Table

ROOT = Path(__file__).resolve().parent.parent
TABLE = load_table()
TEXTS = json.loads((ROOT / "rocmprov" / "data" / "kb" / "texts.json").read_text("utf-8"))


def test_the_packaged_texts_are_the_fixtures_matched_lines() -> None:
    assert sim.build(ROOT / "tests" / "fixtures" / "kb", TABLE) == TEXTS, (
        "run: python -m rocmprov.kb.similar tests/fixtures/kb > rocmprov/data/kb/texts.json"
    )


def test_an_entrys_other_real_wordings_are_among_its_texts() -> None:
    wordings = sorted((ROOT / "tests" / "fixtures" / "kb-wordings").glob("*.txt"))
    checked = 0
    for path in wordings:
        entry_id = path.name.removesuffix(".txt").rsplit(".", 1)[0]
        body = path.read_text(encoding="utf-8").partition("\n---\n")[2]
        # (one wording is its entry's only through a status code, which the texts leave out)
        for hit in [m for m in match(body, codes=False) if m.id == entry_id]:
            assert {line.strip()[: sim.MAX_CHARS] for line in hit.evidence} <= set(TEXTS[entry_id])
            checked += 1
    assert checked >= len(wordings) - 1, checked


def test_words_drop_numbers_and_split_names() -> None:
    got = sim.words("hipErrorNoBinaryForGpu on gfx1030 at 0x7f00 in /opt/rocm-6.2.0/lib")
    assert {"hiperrornobinaryforgpu", "binary", "gpu", "gfx", "opt", "rocm", "lib"} <= set(got)
    assert not any(ch.isdigit() for w in got for ch in w) and "the" not in sim.words("the end")


def _dropped(line: str) -> str:
    """Another wording of the same message: every third word left out."""
    return " ".join(w for k, w in enumerate(line.split()) if k % 3 != 1)


def test_a_reworded_real_message_is_similar_to_its_entry() -> None:
    """Table side only: each entry's own line with words left out, where no pattern matches
    any more; the entry is among the similar ones for most."""
    tried = found = 0
    for entry in TABLE.entries:
        lines = [ln for ln in TEXTS[entry.id][:1] if sim.informative(ln)]
        if entry.harmless or not lines or match(_dropped(lines[0])):
            continue
        tried += 1
        found += entry.id in [s.id for s in sim.similar(_dropped(lines[0]), TABLE)]
    assert tried > 100 and found / tried >= 0.5, (found, tried)


def test_harmless_lines_of_the_table_rarely_resemble_a_real_cause() -> None:
    """Leave-one-out on the table's harmless entries: with the entry taken out, its own lines
    reach THRESHOLD against a real cause for at most 1 in 10 (THRESHOLD was set so).

    A context twin (a harmless line that a real entry matches by its own pattern: the same
    message, harmless on one kind of host and a cause on another, JAX's CPU fallback on a CPU
    host, llama.cpp's "no usable GPU" on a CPU node) is compared with the table less the real
    entries that match it: their resemblance is the point and the context rules' call
    (kb/scan.py), not the tier's, but a resemblance to any OTHER real cause still counts (review
    29R: 35bba64 left twins out whole, so a twin close to a third entry counted for nothing;
    without them 18 of 176 were over the bound of 17). Twins stay few: under 1 in 10."""
    by_id = {e.id: e for e in TABLE.entries}
    scores, twins = [], 0
    for entry in (e for e in TABLE.entries if e.harmless):
        rest = Table(tuple(e for e in TABLE.entries if e.id != entry.id))
        for line in TEXTS[entry.id][:2]:
            if not sim.informative(line):
                continue
            close = sim.similar(line, rest)
            twin = {
                c.id for c in close if any(p.compiled.search(line) for p in by_id[c.id].patterns)
            }
            if twin:  # scored again without the entries that match it
                twins += 1
                close = sim.similar(line, Table(tuple(e for e in rest.entries if e.id not in twin)))
            scores.append(bool(close))
    assert twins < len(scores) // 10, (twins, len(scores))
    assert len(scores) > 40 and sum(scores) <= len(scores) // 10, (sum(scores), len(scores))


def _explains_tier(text: str) -> list[sim.Similar]:
    """What explain shows as "similar": nothing when a real cause matched, else the tier over
    the lines no harmless match covers (commands/explain.py)."""
    text = normalise(text)
    return sim.suggest(text, match(text), TABLE)


def test_benign_held_out_lines_get_no_similar_real_cause_from_explain() -> None:
    """Measured, not tuned: explain computes the tier when no real cause matched (since session
    27 also beside harmless matches, over the lines they do not cover); the count of benign
    held-out cases given a similar real cause is in docs/troubleshooting.md. This floor keeps
    it from growing (1 before session 27: vLLM's amdsmi import warning, which no harmless entry
    matched; llm.vllm-amdsmi-fallback now takes vLLM's import warning)."""
    cases = [c for c in load_cases(ROOT / "tests" / "data" / "kb-heldout") if c.expected == BENIGN]
    given = [c.name for c in cases if _explains_tier(c.text)]
    assert len(cases) >= 20 and len(given) <= 1, given


def test_a_healthy_log_has_no_informative_line() -> None:
    text = "[    4.1] [drm] amdgpu kernel modesetting enabled.\nDefault Rounding Mode:   NEAR\n"
    assert sim.informative(text) == [] and sim.similar(text, TABLE) == []


def test_a_line_of_too_few_words_resembles_nothing() -> None:
    """A metrics table cell from a healthy Ray run ("test-error" is two known words) reached
    THRESHOLD against a kernel ring-test entry; the same two words inside a real sentence
    still count."""
    cell = "| test-error                                                 0.06993 |"
    assert sim.informative(cell) == []  # "test-error" is a name (kb/names.py): not even read
    assert sim.similar(cell, TABLE) == []
    spaced = "| test error                                                 0.06993 |"
    assert sim.informative(spaced) and len({w for w in sim.words(spaced)}) < sim.MIN_WORDS
    assert sim.similar(spaced, TABLE) == []
    sentence = "amdgpu: ring gfx_0.0.0 test failed (-110), the test error repeats"
    assert "kernel.ring-test-failed" in [s.id for s in sim.similar(sentence, TABLE)]


@pytest.mark.parametrize("fmt", ["json", "table"])
def test_explain_shows_similar_but_keeps_the_exit_code(tmp_path, capsys, fmt) -> None:  # type: ignore[no-untyped-def]
    entry = next(e for e in TABLE.entries if not e.harmless and TEXTS[e.id]
                 and sim.informative(TEXTS[e.id][0]) and not match(_dropped(TEXTS[e.id][0]))
                 and sim.similar(_dropped(TEXTS[e.id][0]), TABLE))  # fmt: skip
    path = tmp_path / "log.txt"
    path.write_text(_dropped(TEXTS[entry.id][0]) + "\n", encoding="utf-8")
    args = explain.argparse.Namespace(file=str(path), format=fmt, all=False, context=[])
    assert explain.run(args) == 0
    out = capsys.readouterr().out
    if fmt == "json":
        doc = json.loads(out)
        assert doc["matches"] == [] and doc["exit_code"] == 0
        assert doc["similar"][0]["score"] >= sim.THRESHOLD and "id" in doc["similar"][0]
    else:
        assert "Similar to (not a diagnosis" in out


def test_json_has_an_empty_similar_list_when_a_pattern_matched(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "log.txt"
    path.write_text("hipErrorNoBinaryForGpu: Unable to find code object for all current devices!\n")
    args = explain.argparse.Namespace(file=str(path), format="json", all=False, context=[])
    assert explain.run(args) == 1
    assert json.loads(capsys.readouterr().out)["similar"] == []


def test_the_tier_is_imported_lazily() -> None:
    code = ("import sys; import rocmprov.cli, rocmprov.commands.explain, rocmprov.kb; "
            "print('rocmprov.kb.similar' in sys.modules)")  # fmt: skip
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# ------------------------------------------------ session 30: the entry's cause, lightly


def _entry(entry_id: str, title: str, cause: str, harmless: bool = False) -> Entry:
    return Entry(entry_id, title, "test", "noise" if harmless else "root-cause", 50, (), cause,
                 "fix", ("https://example.org",), harmless=harmless)  # fmt: skip


def test_an_entrys_cause_words_count_lightly() -> None:
    entry = _entry("t.oom", "GPU memory allocation failed", "Caching allocator ran dry of memory")
    doc = sim.entry_doc(entry, ["hipMalloc failed: out of memory"])
    assert doc["failed"] == 2 and doc["hipmalloc"] == 1  # title and text: 1 each
    assert doc["caching"] == sim.CAUSE_WEIGHT < 1  # only in the cause
    assert doc["allocation"] == 1 and doc["ran"] == sim.CAUSE_WEIGHT
    assert doc["memory"] == pytest.approx(2 + sim.CAUSE_WEIGHT)  # title, text and cause


def test_a_line_in_the_causes_words_ranks_that_entry_and_a_benign_one_gets_none() -> None:
    """Two real entries with the same real text: the one whose cause names what the new line
    says comes first. A line like the harmless entry's own gets no real cause."""
    real = _entry(
        "t.frag",
        "GPU memory allocation failed",
        "Fragmentation in the caching allocator leaves no block large enough.",
    )
    other = _entry(
        "t.leak", "GPU memory allocation failed", "Another process keeps device memory allocated."
    )
    noise = _entry(
        "t.fan",
        "Fan speed not reported",
        "Virtual GPUs have no fan; the notice is harmless.",
        harmless=True,
    )
    table = Table((real, other, noise))
    texts = {"t.frag": ["hipMalloc failed: out of memory"],
             "t.leak": ["hipMalloc failed: out of memory"],
             "t.fan": ["Warning: fan speed not supported on this device"]}  # fmt: skip
    index = sim.build_index(table, sim.entry_words(table, texts))
    line = "hipMalloc failed: out of memory, caching allocator fragmentation"
    got = sim.similar(line, table, index=index)
    assert [s.id for s in got][:2] == ["t.frag", "t.leak"] and got[0].score > got[1].score
    assert sim.similar("Warning: fan speed not supported on GPU 1", table, index=index) == []


def test_a_wording_left_out_of_the_index_still_finds_its_entry() -> None:
    """Leave-one-out on a fixed sample of the table's wordings (the whole set is
    benchmarks/similar_loo.py): the index is built without the wording's lines, its text fed to
    the tier; the entry is among the suggestions for nearly half of them."""
    fixtures = ROOT / "tests" / "fixtures" / "kb"
    by_id = {e.id: e for e in TABLE.entries}
    # a twelfth of the wordings, each chosen by its own name's hash: a wording added later
    # joins the sample or not without moving the others in or out
    paths = [p for p in sorted((ROOT / "tests" / "fixtures" / "kb-wordings").glob("*.txt"))
             if hashlib.sha256(p.name.encode()).digest()[0] % 12 == 0]  # fmt: skip
    docs = sim.entry_words(TABLE, TEXTS)
    tried = found = 0
    for path in paths:
        entry = by_id.get(path.name.removesuffix(".txt").rsplit(".", 1)[0])
        if entry is None or entry.harmless:
            continue
        i = TABLE.entries.index(entry)
        lines: list[str] = []
        for other in sim.wordings(fixtures, entry.id):
            if other != path:
                got = sim.matched_lines(sim.body_of(other), entry.id, TABLE)
                lines += [ln for ln in got if ln not in lines]
        doc = sim.entry_doc(entry, lines)
        index = sim.build_index(TABLE, [doc if k == i else d for k, d in enumerate(docs)])
        tried += 1
        found += entry.id in [s.id for s in sim.similar(sim.body_of(path), TABLE, index=index)]
    # the whole set finds 37.6 % in its top 3 (benchmarks/similar_loo.py, session 30); the
    # sample must not fall far below it (a sample this size varies by ~7 points)
    assert tried > 40 and found / tried >= 0.30, (found, tried)


def test_a_library_file_name_with_error_in_it_resembles_nothing() -> None:
    """`ldconfig -p` of Debian 12 (review F of session 30): "strerror" inside a library's file
    name was read as a problem line and resembled a real entry's ldconfig lines (0.55)."""
    line = ("\tlibabsl_strerror.so.20220623 (libc6,x86-64) => "
            "/lib/x86_64-linux-gnu/libabsl_strerror.so.20220623\n")  # fmt: skip
    assert sim.informative(line) == [] and sim.similar(line, TABLE) == []
