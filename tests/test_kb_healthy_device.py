"""`explain` never cries wolf on real outputs of a healthy host we borrowed
(tests/fixtures/healthy-device/: `ldconfig -p`, `pip list`, `dmesg`, `nvidia-smi -q` of an H100 VM).

On each: no real cause, no closest family and no family's tracker to report to (a library
listing that names libnccl is not an RCCL bug). Where no line looks like a problem (the listings),
explain says so and keeps only the neutral path (if something did fail: the general tracker).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from fixtureload import load

from rocmprov.commands import explain
from rocmprov.exitcodes import Exit
from rocmprov.kb.families import FAMILIES, ROCM_ISSUES
from rocmprov.kb.problems import problem_lines

HERE = Path(__file__).resolve().parent / "fixtures" / "healthy-device"
FILES = sorted(p.name for p in HERE.glob("*.txt"))
CAPTURED = "lent device machine, NVIDIA H100 80GB HBM3 (VM), 2026-12-07, command: "
# the listings: no line in them looks like a problem once names are left out
QUIET = {"ldconfig.txt", "pip-list.txt"}
# the similarity tier's (kb/similar.py) known reading of one file: line 335 of ldconfig.txt,
# "libgpg-error.so.0 ...", resembles this entry (0.56); see the folder's README. Tolerated, not
# required: remove it when the tier leaves library names alone.
FAMILY_TRACKERS = {f.report for f in FAMILIES} - {ROCM_ISSUES}


def _explain(tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, fmt: str) -> str:
    path = tmp_path / name
    path.write_text(load(HERE / name).text, encoding="utf-8")
    args = explain.argparse.Namespace(file=str(path), format=fmt, all=False, context=[])
    assert explain.run(args) == Exit.OK
    return capsys.readouterr().out


def test_the_corpus_is_the_four_captures() -> None:
    assert FILES == ["dmesg.txt", "ldconfig.txt", "nvidia-smi-q.txt", "pip-list.txt"]


@pytest.mark.parametrize("name", FILES)
def test_each_file_says_where_and_how_it_was_captured(name: str) -> None:
    raw = (HERE / name).read_text(encoding="utf-8")
    first = raw.split("\n", 1)[0]
    assert first.startswith(f'captured: "{CAPTURED}'), first
    fixture = load(HERE / name)
    assert fixture.header["captured"].startswith(CAPTURED) and fixture.header["what"]
    assert fixture.text.strip()


def test_the_cards_identifiers_are_placeholders() -> None:
    fixture = load(HERE / "nvidia-smi-q.txt")
    text = fixture.text
    assert "Serial Number" in fixture.header["redacted"]
    assert re.search(r"Serial Number\s+: 1234567890123\n", text)
    assert re.search(r"GPU UUID\s+: GPU-00000000-0000-0000-0000-000000000000\n", text)
    assert re.search(r"GPU PDI\s+: 0x0{16}\n", text)
    for name in FILES:  # no other UUID-shaped or MAC-shaped value anywhere
        body = load(HERE / name).text
        uuids = set(
            re.findall(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", body)
        )
        assert uuids <= {"00000000-0000-0000-0000-000000000000"}, (name, uuids)
        assert not re.search(r"\b[0-9a-f]{2}(:[0-9a-f]{2}){5}\b", body, re.I), name


def test_the_lending_infrastructures_boot_lines_are_removed() -> None:
    """dmesg.txt: the kernel command line and the init process's arguments describe the lending
    infrastructure, not the host; they are removed and its header says so."""
    fixture = load(HERE / "dmesg.txt")
    assert "18 lines removed" in fixture.header["redacted"]
    for name in FILES:
        body = load(HERE / name).text
        for leak in ("command line:", "vsock-port", "--auth-required", "with arguments:"):
            assert leak not in body.lower(), (name, leak)


@pytest.mark.parametrize("name", FILES)
def test_json_names_no_cause_no_family_and_no_familys_tracker(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    doc = json.loads(_explain(tmp_path, capsys, name, "json"))
    assert doc["exit_code"] == 0
    assert [m["id"] for m in doc["matches"] if not m["harmless"]] == []
    assert doc["similar"] == [], doc["similar"]
    unknown = doc["unknown"]
    assert unknown["closest_family"] == "" and unknown["why"] == ""
    assert unknown["report"] not in FAMILY_TRACKERS
    assert unknown["report"] == ROCM_ISSUES  # the general tracker, never a family's
    # the listings: nothing looks like an error; dmesg and nvidia-smi -q have lines such as
    # "DMI not present or invalid." (README): the generic advice, no family
    assert unknown["looks_like_error"] is (name not in QUIET)


@pytest.mark.parametrize("name", FILES)
def test_table_names_no_family_and_says_when_nothing_looks_like_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    out = _explain(tmp_path, capsys, name, "table")
    assert "No known cause found" in out and "Closest family" not in out
    assert not any(tracker.split(" ")[0] in out for tracker in FAMILY_TRACKERS), out
    if name in QUIET:
        assert "Nothing in it looks like an error" in out
        assert "report it with this log" not in out
        said = " ".join(out.split())  # rich wraps at the terminal's width
        assert f"If something did fail, collect a support bundle: {explain.COLLECT}" in said
        assert f"and report the failing output: {ROCM_ISSUES}" in said
    else:
        assert "Nothing in it looks like an error" not in out
        assert f"and report it with this log: {ROCM_ISSUES}" in " ".join(out.split())


def test_a_library_name_with_error_in_it_is_not_a_problem_line() -> None:
    """(2) of session 30: `libgpg-error.so.0 (libc6,x86-64) => /lib/.../libgpg-error.so.0` says
    "error" only inside a name. explain's notion (kb/problems.py) and the similarity tier's
    (kb/similar.py, the same reader) leave it out."""
    text = load(HERE / "ldconfig.txt").text
    (line,) = [n for n, s in enumerate(text.split("\n"), 1) if "libgpg-error.so.0 " in s]
    assert problem_lines(text).lines == ()
    assert problem_lines(text.split("\n")[line - 1] + "\nlibfoo.so: cannot open\n").lines == (
        (2, "libfoo.so: cannot open"),
    )
