"""verify --level 2: RVS, TransferBench and rccl-tests parsers on real public outputs
(tests/fixtures/active), the judge against published figures, and the level on a host
without the tools (this machine): each absent, its package named, exit code from level 1 only."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from rocmprov.active import judge
from rocmprov.active.rccl_tests import parse_rccl_tests
from rocmprov.active.rvs import parse_rvs, parse_rvs_summary
from rocmprov.active.transferbench import parse_transferbench
from rocmprov.model import Severity
from tests.fixtureload import FIXTURES, load

ACTIVE = sorted((FIXTURES / "active").glob("*.txt"))
ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("path", ACTIVE, ids=[p.name for p in ACTIVE])
def test_fixture(path: Path) -> None:
    fx = load(path)
    assert str(fx.header["source"]).startswith("https://") and fx.header["what"]
    exp = fx.expect
    if exp["tool"] == "rvs":
        results = parse_rvs(fx.text)
        assert len(results) == exp["results"]
        assert sum(not r.passed for r in results) == exp["failed"]
        assert parse_rvs_summary(fx.text) == exp.get("summary", {})
        verdict = judge.judge_rvs(results, parse_rvs_summary(fx.text))
        assert verdict.severity is (Severity.CRITICAL if exp["failed"] else Severity.OK)
    elif exp["tool"] == "rccl-tests":
        run = parse_rccl_tests(fx.text)
        assert (run.ranks, run.product, len(run.rows)) == (
            exp["ranks"],
            exp["product"],
            exp["rows"],
        )
        assert (run.max_busbw, run.wrong, run.avg_busbw) == (
            exp["max_busbw"],
            exp["wrong"],
            exp["avg_busbw"],
        )
    else:
        run = parse_transferbench(fx.text)
        if "cells" in exp:
            assert len(run.cells) == exp["cells"]
            assert [c.dst for c in run.cells] == exp["columns"]
            assert {c.direction for c in run.cells} == {exp["direction"]}
            cell = next(c for c in run.cells if c.dst == "GPU 00")
            assert cell.gbps == exp["cpu00_to_gpu00"]
        if "transfers" in exp:
            assert len(run.transfers) == exp["transfers"]
            assert run.transfers[0].gbps == exp["transfer_gbps"]
            assert run.aggregates == (exp["aggregate_gbps"],)


def test_rccl_8x_mi300x_below_half_the_published_figure_warns() -> None:
    run = parse_rccl_tests(
        load(FIXTURES / "active" / "rccl-tests-all-reduce-8x-mi300x-head-excerpt.txt").text
    )
    verdict = judge.judge_rccl(run)
    # 161.14 GB/s at 8 MiB is below 0.5 x 336 GB/s (7 links x 48 GB/s): the rule fires
    assert verdict.severity is Severity.WARNING
    assert "rocm.blogs.amd.com" in verdict.ref
    assert judge.judge_rccl(run, "AMD Radeon PRO W7900").severity is Severity.OK


def test_rccl_wrong_results_are_critical() -> None:
    text = load(FIXTURES / "active" / "rccl-tests-all-reduce-ainic-tail-excerpt.txt").text
    broken = text.replace("360.04      0    44670", "360.04      3    44670")
    assert judge.judge_rccl(parse_rccl_tests(broken)).severity is Severity.CRITICAL


def test_transferbench_judged_on_mi300x_figures() -> None:
    run = parse_transferbench(
        load(FIXTURES / "active" / "transferbench-p2p-min-max-4gpu-excerpt.txt").text
    )
    # the 2023 capture's CPU->GPU copies (6.87-9.88 GB/s) are far below MI300X's PCIe Gen5 figure
    assert judge.judge_transferbench(run, "AMD Instinct MI300X").severity is Severity.WARNING
    assert judge.judge_transferbench(run, "").severity is Severity.OK


def test_every_tool_names_its_package() -> None:
    for tool in ("rvs", "transferbench", "rccl-tests"):
        r = judge.absent(tool)
        assert r.severity is Severity.SKIPPED and r.package and r.package in r.summary


def test_level2_on_a_host_without_the_tools() -> None:
    """Lab/local: this machine has none of the tools; level 2 says so and names the packages.
    The exit code is level 1's (torch here: not importable -> 2); level 2 adds nothing."""
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "rocmprov",
            "verify",
            "--local",
            "--level",
            "2",
            "--python",
            "/nonexistent/python",
            "--format",
            "json",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    doc = json.loads(out.stdout)
    assert doc["level"] == 2
    (host,) = doc["active"]
    by_tool = {r["tool"]: r for r in host["results"]}
    assert set(by_tool) == {"rvs", "transferbench", "rccl-tests"}
    for tool, package in (
        ("rvs", "rocm-validation-suite"),
        ("transferbench", "transferbench"),
        ("rccl-tests", "rccl-tests"),
    ):
        assert by_tool[tool]["severity"] == "skipped" and by_tool[tool]["package"] == package
    assert out.returncode == doc["exit_code"] == 2
