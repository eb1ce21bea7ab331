"""The troubleshooting table and its matcher, on real error text from the sources."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rocmprov.kb import Match, load_table, match
from rocmprov.kb import table as kbtable
from rocmprov.kb.docs import render
from rocmprov.kb.matcher import fill
from rocmprov.kb.scan import compile_table
from rocmprov.kb.table import TableError, derive_anchor, parse_table
from rocmprov.parse.datafile import load_yaml

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "kb"
OTHER = ROOT / "tests" / "fixtures"
TABLE = load_table()
IDS = [e.id for e in TABLE.entries]


def read_fixture(path: Path) -> tuple[list[str], str]:
    """(source URLs, verbatim excerpt) of a fixture: `source: URL` lines, `---`, the text."""
    head, sep, body = path.read_text(encoding="utf-8").partition("\n---\n")
    assert sep, f"{path.name}: no '---' line"
    sources = [line.split(":", 1)[1].strip() for line in head.splitlines()
               if line.startswith("source:")]  # fmt: skip
    return sources, body


def other_fixture(rel: str) -> str:
    """An excerpt from another part's fixtures (same `---` layout)."""
    return (OTHER / rel).read_text(encoding="utf-8").partition("\n---\n")[2]


def ids(found: list[Match]) -> list[str]:
    return [m.id for m in found]


# ---------------------------------------------------------------- the table itself


def test_table_is_large_and_covers_every_category_that_matters() -> None:
    assert len(TABLE) >= 80
    cats = {e.category for e in TABLE.entries}
    for needed in ("hip", "rocr", "rocblas", "miopen", "rccl", "pytorch", "kernel", "dkms",
                   "apt", "container", "wsl"):  # fmt: skip
        assert needed in cats, needed


def test_every_entry_has_a_fixture_and_every_fixture_an_entry() -> None:
    names = {p.stem for p in FIXTURES.glob("*.txt")}
    assert set(IDS) - names == set(), "entries without a fixture"
    assert names - set(IDS) == set(), "fixtures without an entry"


def test_every_entry_is_sourced_and_explained() -> None:
    for entry in TABLE.entries:
        assert entry.sources and all(u.startswith("https://") for u in entry.sources), entry.id
        assert len(entry.cause) > 40 and len(entry.fix) > 10, entry.id
        for pattern in entry.patterns:
            assert len(pattern.anchor) >= 4, entry.id


def test_facts_the_seed_article_gets_wrong_are_not_in_the_table() -> None:
    text = "\n".join(f"{e.cause}\n{e.fix}\n" + "\n".join(c.fix for c in e.conditions)
                     for e in TABLE.entries)  # fmt: skip
    # rocm-dkms may be named only as the old, renamed package, never installed
    assert not re.search(r"install[^`\n]*\brocm-dkms", text)
    assert "amdgpu-dkms" in TABLE.by_id["apt.rocm-dkms-renamed"].fix
    assert "NCCL_PENSANDO_ENABLE" not in text
    assert 'torch.device("rocm")' not in text
    assert not re.search(r"Above 4G Decoding\W+(?:=\s*)?Disabled", text, re.I)


@pytest.mark.parametrize("entry_id", IDS)
def test_fixture_is_real_text_and_its_entry_ranks_first(entry_id: str) -> None:
    sources, excerpt = read_fixture(FIXTURES / f"{entry_id}.txt")
    assert sources and all(s.startswith("https://") for s in sources)
    found = match(excerpt)
    assert found, f"{entry_id}: nothing matched its own fixture"
    assert found[0].id == entry_id, f"{entry_id}: ranked {ids(found)}"
    top = found[0]
    assert top.lines and all(1 <= n <= excerpt.count("\n") + 1 for n in top.lines)
    lines = excerpt.split("\n")
    for number, evidence in zip(top.lines, top.evidence, strict=True):
        assert lines[number - 1].rstrip("\r")[:200] == evidence[:200]


# ---------------------------------------------------------------- ranking and captures


def test_root_cause_ranks_above_its_symptoms_in_a_failed_boot() -> None:
    found = match(other_fixture("dmesg/mi100-x5-atombios-stuck-probe-failed-22.txt"))
    assert found[0].id == "kernel.atombios-stuck"
    assert {"kernel.gpu-post-error", "kernel.fatal-gpu-init", "kernel.probe-failed-einval"} <= set(
        ids(found)
    )
    top = found[0]
    assert top.count >= 5  # five GPUs, each stuck
    assert top.captures["seconds"] == "20"


def test_probe_minus_12_names_above_4g_decoding_enabled_and_the_bdf() -> None:
    found = match(other_fixture("dmesg/mi210-fatal-gpu-init-probe-failed-12.txt"))
    assert found[0].id == "kernel.probe-failed-enomem-bar"
    assert "0000:83:00.0" in found[0].cause
    assert "Above 4G Decoding = Enabled" in found[0].fix


def test_a_log_with_two_problems_shows_both() -> None:
    _, a = read_fixture(FIXTURES / "kfd.permission-denied.txt")
    _, b = read_fixture(FIXTURES / "rocblas.tensile-library-unreadable.txt")
    noise = "\n".join(f"[{i:5d}.000000] usb 1-1: new device {i}" for i in range(500))
    found = match(noise + "\n" + a + noise + "\n" + b)
    assert {"kfd.permission-denied", "rocblas.tensile-library-unreadable"} <= set(ids(found))
    by_id = {m.id: m for m in found}
    assert by_id["kfd.permission-denied"].lines[0] > 500
    assert by_id["rocblas.tensile-library-unreadable"].lines[0] > 1000


def test_captured_values_fill_the_fix() -> None:
    found = match("rocBLAS error: Cannot read /opt/rocm-6.0.0/lib/rocblas/library/"
                  "TensileLibrary.dat: No such file or directory\n")  # fmt: skip
    top = found[0]
    assert top.id == "rocblas.tensile-library-unreadable"
    assert top.captures["path"].endswith("TensileLibrary.dat")
    assert "ls $(dirname /opt/rocm-6.0.0/lib/rocblas/library/TensileLibrary.dat)" in top.fix


@pytest.mark.parametrize(
    ("gfx", "expected", "absent"),
    [
        ("gfx1031", "HSA_OVERRIDE_GFX_VERSION=10.3.0", "11.0.0"),
        ("gfx1103", "HSA_OVERRIDE_GFX_VERSION=11.0.0", "10.3.0"),
        ("gfx803", "does not help", "export HSA_OVERRIDE"),
        ("gfx942", "does not help", "export HSA_OVERRIDE"),
    ],
)
def test_override_advice_depends_on_the_gpu_architecture(
    gfx: str, expected: str, absent: str
) -> None:
    text = "hipErrorNoBinaryForGpu: Unable to find code object for all current devices!\n"
    top = match(text, context={"gfx": gfx})[0]
    assert top.id == "hip.no-binary-for-gpu"
    assert expected in top.fix and absent not in top.fix
    assert gfx in top.fix
    assert top.condition


def test_without_context_the_generic_fix_and_how_to_get_the_missing_value() -> None:
    top = match("hipErrorNoBinaryForGpu: Unable to find code object for all current devices!")[0]
    assert top.condition == ""
    # an unknown value is never dropped silently nor printed as a bare placeholder
    assert "your GPU's gfx target (`rocminfo" in top.cause and "{gfx}" not in top.cause


def test_container_context_changes_the_kfd_fix() -> None:
    text = "Unable to open /dev/kfd read-write: Permission denied\n"
    host = match(text)[0]
    boxed = match(text, context={"container": "docker"})[0]
    assert "usermod" in host.fix and "--group-add" not in host.fix
    assert "--device=/dev/kfd" in boxed.fix and "--group-add render" in boxed.fix


def test_strix_halo_context_gives_the_cwsr_kernel_parameter() -> None:
    text = ("Memory access fault by GPU node-1 (Agent handle: 0x5c0) on address 0x7f00. "
            "Reason: Page not present or supervisor privilege.\n")  # fmt: skip
    assert "cwsr_enable" not in match(text)[0].fix
    assert "amdgpu.cwsr_enable=0" in match(text, context={"gfx": "gfx1151"})[0].fix


def test_harmless_noise_ranks_below_any_problem_and_is_flagged() -> None:
    _, noise = read_fixture(FIXTURES / "noise.psp-runtime-database.txt")
    _, real = read_fixture(FIXTURES / "kernel.gpu-reset.txt")
    found = match(noise + real)
    assert found[0].id == "kernel.gpu-reset"
    harmless = [m.id for m in found if m.harmless]
    assert found[-len(harmless) :] == [m for m in found if m.harmless]  # after every problem
    assert "noise.psp-runtime-database" in harmless


def test_healthy_outputs_give_no_problem() -> None:
    healthy = [
        "rocminfo/gfx942-mi300x-vf-rocm6.4-vm.txt",
        "rocminfo/gfx90a-mi250x-agent16-rocm6-excerpt.txt",
        "dmesg/rx7900xtx-rebar-resize-32g-vram-24g-ok.txt",
        "rocm-smi/concise-table-mi250x-8gcd-lumi-prefixed.txt",
    ]
    for rel in healthy:
        assert (OTHER / rel).exists(), f"healthy fixture missing: {rel}"
        problems = [m.id for m in match(other_fixture(rel)) if not m.harmless]
        assert problems == [], (rel, problems)


def test_identical_lines_are_counted_not_repeated() -> None:
    line = "amdgpu: probe of 0000:83:00.0 failed with error -12\n"
    top = match(line * 50)[0]
    assert top.count == 50
    assert len(top.evidence) == 10 and top.lines[:3] == (1, 2, 3)


def test_crlf_and_long_lines() -> None:
    text = "x" * 100_000 + "\r\nRuntimeError: No HIP GPUs are available\r\n" + "y" * 50_000
    top = match(text)[0]
    assert top.id == "pytorch.no-hip-gpus" and top.lines == (2,)
    assert top.evidence == ("RuntimeError: No HIP GPUs are available",)


# ---------------------------------------------------------------- matcher mechanics


def _doc(*entries: dict) -> dict:
    base = {"category": "rocm", "kind": "root-cause", "cause": "c" * 50, "fix": "do {x}",
            "sources": ["https://example.org/a"]}  # fmt: skip
    return {"schema": "rocmprov.kb/1", "entries": [{**base, **e} for e in entries]}


def test_multi_line_pattern_spans_lines_and_reports_each() -> None:
    table = parse_table(_doc({
        "id": "t.multi", "title": "multi",
        "patterns": [{"regex": r"^ROCk module is loaded\n(?P<x>Unable to open /dev/kfd)[^\n]*",
                      "lines": 2}],
    }))  # fmt: skip
    text = "a\nROCk module is loaded\nUnable to open /dev/kfd read-write: x\nb\n"
    (m,) = match(text, table=table)
    assert m.lines == (2, 3)
    assert m.evidence == ("ROCk module is loaded", "Unable to open /dev/kfd read-write: x")
    assert m.fix == "do Unable to open /dev/kfd"
    assert match("ROCk module is loaded\nsomething else\n", table=table) == []


def test_overlapping_and_prefix_anchors_all_fire() -> None:
    table = parse_table(_doc(
        {"id": "t.long", "title": "l", "patterns": ["Memory access fault by GPU"]},
        {"id": "t.short", "title": "s", "patterns": ["Memory access"]},
        {"id": "t.inner", "title": "i", "patterns": ["fault by GPU node"]},
    ))  # fmt: skip
    found = match("Memory access fault by GPU node-1\n", table=table)
    assert sorted(ids(found)) == ["t.inner", "t.long", "t.short"]


def test_every_pattern_of_the_table_compiles_in_every_form_the_scan_runs() -> None:
    """Loading the table parses each regex but compiles none (the scan compiles a pattern at
    its anchor's first hit): here every form is compiled once, so a regex that parses but does
    not compile (a variable-width look-behind) fails CI, not a user's explain."""
    compiled = compile_table(load_table())
    targets = {id(t): t for ts in compiled.targets.values() for t in ts if t.source is not None}
    assert len(targets) == sum(len(e.patterns) for e in load_table().entries)
    for t in targets.values():
        forms = (t.regex, t.whole, t.unless, t.near)
        assert all(f is None or isinstance(f, re.Pattern) for f in forms), t.source
        assert 0 < t.width <= 8192, t.source


def test_anchors_json_was_made_from_this_table_and_gives_the_anchors_a_full_parse_chooses() -> None:
    texts = kbtable.sources()
    known = kbtable._known_anchors(texts)
    assert known is not None, (
        "rocmprov/data/kb/anchors.json is stale; run: "
        "python -m rocmprov.kb.anchorfile > rocmprov/data/kb/anchors.json"
    )
    full = kbtable.parse_tables({n: load_yaml(t) for n, t in texts.items()})
    assert known == [p.anchor for e in full.entries for p in e.patterns]
    assert load_table() == full


def test_a_changed_table_file_is_not_given_the_old_anchors() -> None:
    texts = kbtable.sources()
    name = sorted(texts)[0]
    assert kbtable._known_anchors({**texts, name: texts[name] + "\n# an edit\n"}) is None
    assert kbtable._known_anchors({**texts, "extra.yaml": ""}) is None
    docs = {n: load_yaml(t) for n, t in texts.items()}
    with pytest.raises(TableError, match=r"anchors\.json"):
        kbtable.parse_tables(docs, ["one anchor"])


@pytest.mark.parametrize("where", ["regex", "unless"])
def test_a_regex_that_parses_but_cannot_compile_is_a_table_error(where: str) -> None:
    behind = r"(?<=a|bc)fault here"  # a variable-width look-behind: only the compiler says no
    pattern = {"regex": behind} if where == "regex" else {
        "regex": "fault here", "unless": behind, "around": 1}
    with pytest.raises(TableError, match="bad"):
        parse_table(_doc({"id": "t.behind", "title": "b", "patterns": [pattern]}))


@pytest.mark.parametrize(
    ("doc_patch", "message"),
    [
        ({"id": "Bad Id"}, "id"),
        ({"category": "nvidia"}, "category"),
        ({"kind": "guess"}, "kind"),
        ({"patterns": ["(unclosed"]}, "bad regex"),
        ({"patterns": ["a|b"]}, "anchor"),
        ({"sources": ["http://insecure"]}, "https"),
        ({"harmless": True}, "noise"),
        ({"typo_field": 1}, "unknown field"),
    ],
)
def test_malformed_entries_are_rejected_by_name(doc_patch: dict, message: str) -> None:
    entry = {"id": "t.ok", "title": "t", "patterns": ["something long"], **doc_patch}
    with pytest.raises(TableError, match=message):
        parse_table(_doc(entry))


def test_anchor_is_a_long_required_literal_with_a_rare_first_character() -> None:
    from rocmprov.kb.anchors import CHAR_PERCENT, RARE

    samples = {
        r"hipErrorNoBinaryForGpu: x": "hipErrorNoBinaryForGpu: x",
        r"(?P<l>libfoo\.so)x: No such file": "libfoo.sox: No such file",
        r"atombios stuck in loop for (?P<s>\d+)": "atombios stuck in loop for 20",
        r"module verification failed: signature and/or required key missing - tainting kernel":
            "module verification failed: signature and/or required key missing - tainting kernel",
    }  # fmt: skip
    for regex, text in samples.items():
        anchor = derive_anchor(regex)
        assert anchor in text and len(anchor) >= 8, (regex, anchor)
        assert CHAR_PERCENT.get(anchor[0], RARE) < 1.0, (regex, anchor)  # not " ", "e", "0"...
        assert anchor != "kernel"
    assert derive_anchor(r"a|b") == ""


def test_an_anchor_is_not_one_bare_word_where_the_message_has_more() -> None:
    """One word ("filesystem") is on healthy lines too (EXT4's "mounted filesystem"); each hit
    there costs a regex run that fails, so the anchor takes the message's words around it."""
    from rocmprov.kb.anchors import choose_anchors, regex_runs

    regex = r"(?P<p>[\w.+-]{1,80}): (?P<path>/opt/rocm\S*) exists in filesystem"
    anchor = choose_anchors([regex_runs(regex)], starts={"f", "s", "/"})[0]
    assert anchor != "filesystem", anchor
    assert anchor not in "[  1.0] EXT4-fs (nvme0n1p3): mounted filesystem with ordered data mode."
    # one word stays the anchor where the message has nothing else
    assert choose_anchors([regex_runs(r"(?P<n>\d+) filesystems?")], starts=set())[0] == "filesystem"


def test_anchors_are_chosen_together_and_share_first_characters() -> None:
    from rocmprov.kb.anchors import choose_anchors

    runs = [["amdgpu: ring gfx timeout, signaled seq="], ["amdgpu: ring sdma0 timeout"],
            ["Fatal error during GPU init"], ["GPU reset begin!"], ["failed to load firmware"],
            ["Memory access fault by GPU node-"]]  # fmt: skip
    chosen = choose_anchors(runs)
    assert all(a in r[0] for a, r in zip(chosen, runs, strict=True))
    alone = {choose_anchors([r])[0][0] for r in runs}
    assert len({a[0] for a in chosen}) < len(alone)  # fewer places for the scan to stop


# healthy lines that hold a common phrase of an error message ("with code", "from")
HEALTHY = ["[2026-12-07 03:00:00] worker 12 exited with code 0",
           "Requirement already satisfied: numpy in /usr/lib/python3/dist-packages (from torch)",
           "Downloading rocm-libs from https://repo.radeon.com/rocm/apt/6.2 (copied from cache)"]


@pytest.mark.parametrize("entry_id", ["noise.hip-sdma-copy-fell-back-to-blit",
                                      "rocr.sdma-copy-failed"])  # fmt: skip
def test_the_hip_copy_patterns_are_found_by_their_message_not_a_common_phrase(
    entry_id: str,
) -> None:
    """Their anchors were "with code " and "from " (suffixes of the given anchor): every healthy
    line with those words cost a regex run (a 4 MB log of "exited with code 0" lines: about twice
    the time). Each anchor holds the message's own words; benchmarks/kb_line_bench.py."""
    entry = next(e for e in TABLE.entries if e.id == entry_id)
    for pattern in entry.patterns:
        assert len(pattern.anchor) >= 10, pattern.anchor
        assert not any(pattern.anchor in line for line in HEALTHY), pattern.anchor


@pytest.mark.parametrize("entry_id", IDS)
def test_every_regex_match_in_the_fixture_contains_its_anchor(entry_id: str) -> None:
    """An explicit anchor that is not part of every match would make the scan miss it."""
    _, excerpt = read_fixture(FIXTURES / f"{entry_id}.txt")
    hits = 0
    for pattern in TABLE.by_id[entry_id].patterns:
        for m in pattern.compiled.finditer(excerpt):
            hits += 1
            assert pattern.anchor in m.group(0), (pattern.regex, pattern.anchor)
    assert hits >= 1


def test_fill_says_how_to_get_an_unknown_value() -> None:
    assert (
        fill("use {gfx} on {bdf}", {"gfx": "gfx90a"}) == "use gfx90a on the bdf shown in your log"
    )
    assert "uname -r" in fill("kernel {kernel}", {})
    assert fill("awk '{print $1}'", {}) == "awk '{print $1}'"


@settings(max_examples=300, deadline=None)
@given(st.one_of(
    st.text(),
    st.binary().map(lambda b: b.decode("latin-1")),
    st.lists(st.sampled_from([
        "Memory access fault by GPU node-", "HIP error: ", "BAR ", "\n", "\r\n", "\x00",
        "rocBLAS error: Cannot read ", "TensileLibrary_", "failed with error -12", "+cpu",
        "ROCk module is loaded\n", "Unable to open /dev/kfd read-write: ", "kiq_", "ring ",
    ]), max_size=40).map("".join),
))  # fmt: skip
def test_matcher_never_raises_and_returns_well_formed_matches(text: str) -> None:
    found = match(text)
    assert isinstance(found, list)
    n_lines = text.count("\n") + 1
    scores = [m.score for m in found]
    assert scores == sorted(scores, reverse=True)
    for m in found:
        assert isinstance(m, Match)
        if m.id.startswith("code."):  # a status code from the headers, no table entry
            from rocmprov.kb.codes import load_codes

            assert m.id.rsplit(".", 1)[1] in load_codes().by_name
        else:
            assert m.id in TABLE.by_id
        assert m.lines and all(1 <= n <= n_lines for n in m.lines)
        assert len(m.lines) == len(m.evidence) and m.count >= 1


def test_match_rejects_bytes_with_a_clear_error() -> None:
    with pytest.raises(TypeError, match="decode"):
        match(b"bytes")  # type: ignore[arg-type]


# ---------------------------------------------------------------- generated docs


def test_docs_troubleshooting_md_is_in_sync_with_the_table() -> None:
    from rocmprov.kb.codes import load_codes
    from rocmprov.kb.evaluate import evaluate, load_cases

    committed = (ROOT / "docs" / "troubleshooting.md").read_text(encoding="utf-8")
    figures = evaluate(load_cases(ROOT / "tests" / "data" / "kb-heldout"), TABLE)
    assert committed == render(TABLE, load_codes(), figures), (
        "run: python -m rocmprov.kb.docs tests/data/kb-heldout > docs/troubleshooting.md"
    )


def test_docs_generator_runs_as_a_module() -> None:
    out = subprocess.run([sys.executable, "-m", "rocmprov.kb.docs"], capture_output=True,
                         text=True, check=True, cwd=ROOT)  # fmt: skip
    assert out.stdout.startswith("# Troubleshooting")
    for entry_id in IDS:
        assert f"`{entry_id}`" in out.stdout


# ---------------------------------------------------------------- whole logs from other parts


@pytest.mark.parametrize(
    ("rel", "top", "also"),
    [
        ("dmesg/mi100-x5-atombios-stuck-probe-failed-22.txt", "kernel.atombios-stuck",
         {"kernel.gpu-post-error", "kernel.probe-failed-einval"}),
        ("dmesg/mi210-fatal-gpu-init-probe-failed-12.txt", "kernel.probe-failed-enomem-bar",
         {"kernel.fatal-gpu-init"}),
        ("dmesg/mi300x-x8-uncorrectable-ras-error-aca-head.txt", "kernel.ras-uncorrectable-error",
         {"kernel.kfd-preemption-failed", "kernel.kfd-restore-queues-failed"}),
        ("dmesg/oland-gcn1-not-supported-in-kfd-journalctl-fedora36.txt",
         "kfd.asic-not-supported", set()),
        ("dmesg/rx7900xt-ring-sdma0-timeout-mes-failed-syslog.txt",
         "kernel.mes-failed-to-respond", {"kernel.ring-timeout", "kernel.gpu-reset"}),
        ("dmesg/rx6800-ring-gfx-timeout-gpu-reset-kiq-failed.txt", "kernel.ring-timeout",
         {"kernel.kiq-ring-test-failed", "kernel.gpu-reset"}),
        ("dmesg/kernel6.8-bar-cant-assign-no-space-new-format.txt", "kernel.pci-bar-no-space",
         set()),
        ("rocminfo/wsl2-rock-not-loaded-no-kfd-out-of-resources.txt", "kfd.device-missing",
         {"rocr.out-of-resources"}),
        ("rocminfo/gfx900-renoir-apu-docker-rock-not-loaded-but-agents-listed.txt",
         "container.rocminfo-without-lsmod", set()),
    ],
)  # fmt: skip
def test_whole_logs_from_the_other_parts_give_the_right_top_cause(
    rel: str, top: str, also: set[str]
) -> None:
    if not (OTHER / rel).exists():
        pytest.skip(f"{rel} not in this checkout")
    found = match(other_fixture(rel))
    assert found[0].id == top, ids(found)
    assert also <= set(ids(found))


def test_lsmod_missing_in_a_container_supersedes_rock_not_loaded() -> None:
    _, text = read_fixture(FIXTURES / "container.rocminfo-without-lsmod.txt")
    found = match(text)
    assert ids(found) == ["container.rocminfo-without-lsmod"]
    assert found[0].harmless and found[0].lines == (1, 2, 3, 4, 5)  # review 15: to the attributes
    # without the lsmod line the same run still went on (hsa_init succeeded: the system
    # attributes follow), so rocminfo's module check was wrong (round 15, harmless) ...
    rest = text.split("\n", 1)[1]
    assert ids(match(rest)) == ["rocr.rock-not-loaded-but-kfd-opens"]
    # ... but "Able to open /dev/kfd" alone does not prove it (review 15): a KFD with no usable
    # GPU behind it opens too, and the run then fails; the root cause stays
    two = "\n".join(rest.split("\n")[:2]) + "\n"
    assert ids(match(two))[0] == "rocr.rock-module-not-loaded"
    # the line alone, or a run re-started in between, is still the real "not loaded" report
    assert ids(match(rest.split("\n", 1)[0]))[0] == "rocr.rock-module-not-loaded"
    again = (
        "ROCk module is NOT loaded, possibly no GPU devices\n"
        "$ rocminfo\nAble to open /dev/kfd read-write\n"
        "=====================\nHSA System Attributes\n"
    )
    assert ids(match(again))[0] == "rocr.rock-module-not-loaded"


def test_a_pytorch_traceback_inside_a_training_log() -> None:
    _, tb = read_fixture(FIXTURES / "pytorch.hip-out-of-memory.txt")
    _, warn = read_fixture(FIXTURES / "pytorch.hipblaslt-unsupported-arch.txt")
    _, sysdb = read_fixture(FIXTURES / "miopen.missing-system-db.txt")
    steps = "".join(f"{{'loss': 0.{i:04d}, 'epoch': {i}}}\n" for i in range(2000))
    log = warn + sysdb + steps + "Traceback (most recent call last):\n" + tb
    found = match(log)
    assert found[0].id == "pytorch.hip-out-of-memory"
    assert found[0].captures["size"] == "4.50 GiB" and "4.50 GiB" in found[0].cause
    assert {m.id for m in found if m.harmless} == {
        "pytorch.hipblaslt-unsupported-arch",
        "miopen.missing-system-db",
    }
