"""explain's answer when no entry knows a text (kb/problems.py, kb/families.py): no family guess
when no line looks like a problem, yet the neutral path to the general tracker; otherwise the
family read around the problem lines first."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rocmprov.commands import explain
from rocmprov.kb import load_table, match
from rocmprov.kb.codes import load_codes
from rocmprov.kb.families import ROCM_ISSUES, closest
from rocmprov.kb.problems import masked, problem_lines
from rocmprov.kb.similar import MAX_LINES, MAX_READ, covered

TABLE = load_table()
CODES = load_codes()


def _unknown(tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str) -> dict[str, object]:
    path = tmp_path / "log.txt"
    path.write_text(text, encoding="utf-8")
    args = explain.argparse.Namespace(file=str(path), format="json", all=False, context=[])
    assert explain.run(args) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [m["id"] for m in doc["matches"] if not m["harmless"]] == []
    return dict(doc["unknown"])


@pytest.mark.parametrize("line", [
    "\tlibgpg-error.so.0 (libc6,x86-64) => /lib/x86_64-linux-gnu/libgpg-error.so.0",
    "pytest-timeout          2.5.0",
    # ldconfig -p of Debian 12 (review F of session 30): "error" inside a library's file name
    "\tlibabsl_strerror.so.20220623 (libc6,x86-64) => "
    "/lib/x86_64-linux-gnu/libabsl_strerror.so.20220623",
    "[    0.000000] Command line: console=ttyS0 reboot=k panic=1 random.trust_cpu=1",
    "EXT4-fs (vda1): mounted filesystem with ordered data mode. Opts: errors=remount-ro",
    "a b c",
    "",
])  # fmt: skip
def test_names_and_plain_words_are_not_problem_lines(line: str) -> None:
    assert problem_lines(line + "\n").lines == ()
    assert len(masked(line)) == len(line)


@pytest.mark.parametrize("line", [
    "clang-14: error: unknown argument: '-mcode-object-version=6'",
    "amdgpu 0000:03:00.0: amdgpu: probe of 0000:03:00.0 failed with error -12",
    "HSA_STATUS_ERROR_INVALID_ISA: The instruction set architecture is invalid.",
    "hipErrorNoDevice",
    "rocblas-bench: error while loading shared libraries: librocblas.so.4",
    "Segmentation fault (core dumped)",
    "ImportError: librocm_smi64.so.6: cannot open shared object file: No such file or directory",
    "status=failed",
])  # fmt: skip
def test_real_problem_lines_stay(line: str) -> None:
    assert problem_lines("starting\n" + line + "\n").lines == ((2, line),)


def test_a_harmless_matchs_line_is_answered_already(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    line = (
        "Warning: The --amdgpu-target option has been deprecated and will be removed in the "
        "future. Use --offload-arch instead.\n"
    )  # noise.amdgpu-target-deprecated's own text
    found = match(line, table=TABLE)
    assert [m.id for m in found] == ["noise.amdgpu-target-deprecated"] and found[0].harmless
    skip, unless = covered(found, TABLE)
    assert problem_lines(line).any and not problem_lines(line, skip, unless).any
    assert _unknown(tmp_path, capsys, line)["looks_like_error"] is False
    args = explain.argparse.Namespace(file=str(tmp_path / "log.txt"), format="table", all=False,
                                      context=[])  # fmt: skip
    explain.run(args)
    out = capsys.readouterr().out
    assert "Nothing in it looks like an error, apart from the harmless lines below," in out


def test_lines_that_are_only_names_do_not_stop_the_reader_before_a_real_problem() -> None:
    """informative() keeps MAX_LINES problem lines: names (libgpg-error.so.0) are not problem
    lines, so a real problem after more than MAX_LINES of them is still read, and a listing of
    names alone, however long, does not look like a problem."""
    names = "libgpg-error.so.0 (libc6,x86-64)\n" * (MAX_LINES + 50)
    assert not problem_lines(names).any
    found = problem_lines(names + "something failed\n")
    assert [n for n, _ in found.lines] == [MAX_LINES + 51]


def test_the_reader_stops_after_max_read_lines_and_says_the_rest_was_not_read() -> None:
    """Names do not count towards MAX_LINES, so a listing of them alone would have the problem
    regex run on each of its lines (a 16 MiB one: ~13 s a read). The reader stops after MAX_READ
    lines that hold a problem word; what comes after is unread, so the text may look like a
    problem (the general tracker, never "nothing looks like an error")."""
    names = "libgpg-error.so.0 (libc6,x86-64)\n" * (MAX_READ + 5)
    found = problem_lines(names + "something failed\n")
    assert found.lines == () and found.unread and found.any
    assert not problem_lines(names[: -len("libgpg-error.so.0 (libc6,x86-64)\n") * 10]).any


def test_the_similar_tier_reads_no_line_that_is_only_a_name() -> None:
    """The similarity tier and explain share one notion: a line whose problem word is only part
    of a name (ldconfig -p on the lent H100 host: libgpg-error.so.0) is never compared."""
    from rocmprov.kb.similar import informative

    listing = "\tlibgpg-error.so.0 (libc6,x86-64) => /lib/x86_64-linux-gnu/libgpg-error.so.0\n"
    assert informative(listing) == []
    assert informative("libfoo.so.1: cannot open shared object file: error\n") != []


def test_the_family_comes_from_around_the_problem_not_from_a_listing_above() -> None:
    listing = "nvidia-nccl-cu13        2.28.9\n" + "some-package 1.0\n" * 20
    text = listing + "$ amdclang++ -O2 t.cpp\namdclang++: error: something new\n"
    numbers = [n for n, _ in problem_lines(text).lines]
    assert numbers == [23]
    old = closest(text, [], CODES)  # the whole text, as explain read it before
    assert old is not None and old.family == "RCCL (NCCL API)"
    near = closest(text, [], CODES, numbers)
    assert near is not None and near.family.startswith("compiler") and "line 22" in near.why


def test_the_family_named_above_the_problem_line_still_counts(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    """The error on one line, the library on another, far from it: the whole text, as before."""
    text = (
        "Initializing RCCL for 8 ranks\n" + "step\n" * 30 + "something brand new went bad: failed\n"
    )
    unknown = _unknown(tmp_path, capsys, text)
    assert unknown["closest_family"] == "RCCL (NCCL API)" and unknown["looks_like_error"] is True
    assert unknown["report"] == "https://github.com/ROCm/rccl/issues"
    # within the lines around a problem, the families' order holds (specific before general)
    near = closest("$ python train.py  # torch\nhipcc: failed\n", [], CODES, [2])
    assert near is not None and near.family == "PyTorch on ROCm" and "line 1" in near.why


def test_a_listing_gets_no_family_but_the_neutral_path(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    text = "Package Version\nnvidia-nccl-cu13 2.28.9\npytest-timeout 2.5.0\ntorch 2.11.0\n"
    unknown = _unknown(tmp_path, capsys, text)
    assert unknown == {"closest_family": "", "why": "", "collect": explain.COLLECT,
                       "report": ROCM_ISSUES, "looks_like_error": False}  # fmt: skip
    args = explain.argparse.Namespace(file=str(tmp_path / "log.txt"), format="table", all=False,
                                      context=[])  # fmt: skip
    assert explain.run(args) == 0
    out = capsys.readouterr().out
    assert "Nothing in it looks like an error" in out and "Closest family" not in out
    assert "report it with this log" not in out
    said = " ".join(out.split())  # rich wraps at the terminal's width
    assert f"If something did fail, collect a support bundle: {explain.COLLECT}" in said
    assert f"and report the failing output: {ROCM_ISSUES}" in said


@pytest.mark.parametrize("line", [
    "[ 12.345678] AMD-Vi: Event logged [IO_PAGE_FAULT domain=0x000c address=0x0 flags=0x0020]",
    "HIP device 0 is gone",
    "rocm-smi: the widget went sideways",
])  # fmt: skip
def test_a_real_error_in_none_of_the_words_is_never_told_there_is_nothing_to_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], line: str
) -> None:
    """Real errors can be worded in none of the problem words (the lead's count: 135 of the
    table's 1,392 real texts): whatever problem_lines says, the general tracker stays."""
    text = "something brand new\n" + line + "\n"
    assert not problem_lines(text).any  # none of the words: the case this guards
    unknown = _unknown(tmp_path, capsys, text)
    assert unknown["looks_like_error"] is False and unknown["closest_family"] == ""
    assert unknown["report"] == ROCM_ISSUES and unknown["collect"] == explain.COLLECT


def test_an_unknown_status_code_alone_still_gets_its_library(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    unknown = _unknown(tmp_path, capsys, "rocblas_status_something_brand_new\n")
    assert unknown["looks_like_error"] is True and "rocBLAS" in str(unknown["closest_family"])
