"""Review 28D: the overlap sweep's merges, checked against the programs that print the lines.

The method line "amdgpu: MODE1/MODE2/BACO reset" is printed for every ASIC reset (a Cezanne
boot, a Renoir hibernation), rocprof raises "Could not run command" for any failure of the tool
it runs, Kokkos's HSA_XNACK warnings print whenever the variable is unset, a bare "No module
named 'yaml'" is any Python program, and ROCr's "LoadLib(...aqlprofile...) failed" is a
debug-build line any program may print. Texts are the fixtures' real lines, except where a test
says it fills a format string.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest
from fixtureload import load
from kb_helpers import first, ids, known

from rocmprov.kb import load_table, match
from rocmprov.kb.table import parse_table

TESTS = Path(__file__).resolve().parent
FIX = TESTS / "fixtures"
GPU_RESET = "kernel.gpu-reset"


def text(path: str) -> str:
    return load(FIX / path).text


# 1. the reset method line alone is a routine reset (boot, S4); beside a recovery it is one
@pytest.mark.parametrize("name", [
    "healthy/dmesg-cezanne-boot-mode2-reset-at-init.txt",
    "healthy/dmesg-renoir-hibernate-s4-mode2-reset.txt",
])  # fmt: skip
def test_a_routine_mode2_reset_is_no_gpu_reset_cause(name: str) -> None:
    assert GPU_RESET not in ids(text(name))


def test_the_method_line_in_a_recovery_still_names_the_method() -> None:
    found = first(text("kb-wordings/kernel.gpu-reset.mode2-reset-line.txt"))
    assert found is not None and found.id == GPU_RESET
    assert found.captures.get("method") == "MODE2"


def test_a_mode1_reset_of_a_hive_after_reset_begin_is_the_gpu_reset() -> None:
    lines = text("dmesg/mi300x-x8-mode1-reset-vram-lost-tail.txt")
    found = [m for m in match(lines) if m.id == GPU_RESET]
    assert found and found[0].captures.get("method") == "MODE1"


# 2. rocprof's "Could not run command" is the PATH cause only beside the shell's "not found"
TRACEBACK = text("kb-wordings/rocm.tools-not-on-path.rocprof-could-not-run-command.txt")
BARE = "\n".join(ln for ln in TRACEBACK.splitlines() if "not found" not in ln)


def test_rocprof_traceback_with_not_found_is_the_path_cause() -> None:
    assert [m.id for m in known(TRACEBACK)][:1] == ["rocm.tools-not-on-path"]
    assert "rocm.rocprof-sysinfo-command-failed" not in ids(TRACEBACK)


def test_rocprof_traceback_alone_is_the_tool_failed_symptom_not_path() -> None:
    found = [m.id for m in known(BARE)]
    assert found == ["rocm.rocprof-sysinfo-command-failed"], found


def test_rocminfo_s_own_error_outranks_rocprof_s_traceback() -> None:
    # rocminfo's failure lines of rocr.out-of-resources' own fixture, then the bare traceback
    lines = text("kb/rocr.out-of-resources.txt") + "\n" + BARE
    found = [m.id for m in known(lines)]
    assert found[0] == "rocr.out-of-resources", found
    assert "rocm.tools-not-on-path" not in found


# 3. Kokkos's unverified XNACK warning does not outrank a GPU hang
KOKKOS = text("kb/memory.xnack-not-enabled.txt")


def test_kokkos_xnack_warning_is_a_symptom_below_a_gpu_hang() -> None:
    hang = text("kb/hsa.hw-exception-gpu-hang.txt")
    found = [m.id for m in known(KOKKOS + "\n" + hang)]
    assert found.index("hsa.hw-exception-gpu-hang") < found.index("memory.xnack-not-enabled")
    assert load_table().by_id["memory.xnack-not-enabled"].kind == "symptom"


# 4. a bare "No module named 'yaml'" is not amd-smi
def test_bare_pyyaml_import_error_is_not_amd_smi() -> None:
    # CPython's import error for a script that imports yaml (path and line filled in)
    lines = (
        "Traceback (most recent call last):\n"
        '  File "/home/user/project/train.py", line 3, in <module>\n'
        "    import yaml\n"
        "ModuleNotFoundError: No module named 'yaml'\n"
    )
    assert "amdsmi.cli-missing-pyyaml" not in ids(lines)
    assert first(text("kb/amdsmi.cli-missing-pyyaml.txt")).id == "amdsmi.cli-missing-pyyaml"


# aqlprofile: ROCr's debug-build LoadLib line alone is no profiler failure
def test_rocr_loadlib_aqlprofile_line_alone_is_not_the_profiler_cause() -> None:
    line = text("kb-wordings/rocblas.no-tensile-for-arch.no-paths-matched-warning.txt")
    assert "LoadLib(libhsa-amd-aqlprofile64.so) failed" in line
    assert "rocm.profiler-aqlprofile-not-loaded" not in ids(line)
    own = text("kb-wordings/rocm.profiler-aqlprofile-not-loaded.src-rocprofiler-loading-failed.txt")
    assert first(own).id == "rocm.profiler-aqlprofile-not-loaded"


# the sweep's narrowings: the narrowed entry is absent on the other entry's own text
@pytest.mark.parametrize("narrowed, other", [
    ("rocr.out-of-resources", "rocr.queue-out-of-resources"),
    ("apt.amdgpu-repo-rocm-version-path", "apt.no-ca-certificates-https-repo"),
    ("rccl.shm-too-small", "rccl.shm-open-permission-denied"),
])  # fmt: skip
def test_a_narrowed_entry_is_absent_on_the_other_entry_s_fixture(narrowed: str, other: str) -> None:
    lines = text(f"kb/{other}.txt")
    assert other in ids(lines)
    assert narrowed not in ids(lines)


# scripts/kb_overlap.py
def overlap_module():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location(
        "kb_overlap", TESTS.parent / "scripts" / "kb_overlap.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("kb_overlap", module)  # its dataclass looks its module up
    spec.loader.exec_module(sys.modules["kb_overlap"])
    return sys.modules["kb_overlap"]


def entry(eid: str, regex: str, cause: str) -> dict[str, object]:
    return {
        "id": eid, "title": eid, "category": "rocm", "kind": "symptom", "priority": 20,
        "patterns": [regex], "cause": cause, "fix": "Do the thing.",
        "sources": ["https://example.org/a"],
    }  # fmt: skip


TINY = parse_table({
    "schema": "rocmprov.kb/1",
    "entries": [
        entry("a.widget", "widget frobnication failed with code \\d+", "The widget broke apart."),
        entry("b.widget", "widget frobnication failed with code (?P<rc>\\d+)", "The widget broke."),
        entry("c.other", "gadget ran out of sprockets", "Sprockets are gone."),
    ],
})  # fmt: skip


def test_kb_overlap_finds_the_pair_sharing_a_message_and_not_the_third() -> None:
    kb = overlap_module()
    for pairs in (kb.same_runs_pairs(TINY), kb.core_pairs(TINY), kb.near_pairs(TINY, 0.3)):
        assert {frozenset((p.a, p.b)) for p in pairs} == {frozenset(("a.widget", "b.widget"))}
    fixtures = {"a.widget.txt": ("a.widget", "widget frobnication failed with code 7")}
    co = kb.co_matches(fixtures, TINY)
    assert [(p.a, p.b, p.how) for p in co] == [("a.widget", "b.widget", "co-match")]


def test_kb_overlap_lists_a_known_pair_of_the_real_table() -> None:
    kb = overlap_module()
    table = load_table()
    fixtures = {"f": (GPU_RESET, text("kb/kernel.gpu-reset.txt"))}
    pairs = {p.b for p in kb.co_matches(fixtures, table)}
    assert "kernel.gpu-reset-succeeded" in pairs, pairs
