"""Regressions found by a hostile second read of issue 16 (health, drift, fleet report) and the
explain engine: each test failed before its fix."""

from __future__ import annotations

import io
import json
from pathlib import Path

from rocmprov.fleet.drift import BaselineError, drift_findings, flatten, load_baseline
from rocmprov.kb.context import extract
from rocmprov.model import AuditResult, Finding, HostReport, Severity
from rocmprov.report import table
from rocmprov.transport.base import CommandResult
from tests.helpers import assert_one_line_error, rocmprov

BUNDLE = Path(__file__).parent / "data" / "h200-vm-bundle-2026-12-01.tar.gz"


# --- explain: a gfx target inside a URL is not this machine's GPU ---------------------------


def test_gfx_in_a_url_is_no_context_fact() -> None:
    text = (
        "downloaded https://repo.radeon.com/rocm/apt/6.1.3/pool/gfx906/x.deb\n"
        "hipErrorNoBinaryForGpu: Unable to find code object for all current devices!\n"
    )
    assert [f for f in extract(text) if f.name == "gfx"] == []
    # a plain mention on another line still counts, also next to a URL on the same line
    facts = {f.name: f.value for f in extract(text + "Name: gfx1100 (see https://x.org/a)\n")}
    assert facts["gfx"] == "gfx1100"


# --- drift: the same PSP SOS version as amd-smi and rocm-smi spell it -------------------------


def _inventory(sos: str) -> dict:
    return {"host": {"os": "ubuntu 22.04"}, "gpus": [{"gpu": 0, "psp_sos": sos}]}


def test_psp_sos_spelled_by_amd_smi_and_rocm_smi_is_not_drift() -> None:
    # amd-smi: hex bytes joined by dots, upper case; rocm-smi: 0x%08x (sources in drift.py)
    flat = {
        "a": flatten(_inventory("00.2D.00.5D")),
        "b": flatten(_inventory("0x002d005d")),
        "c": flatten(_inventory("00.2D.00.5D")),
    }
    found = drift_findings(flat)
    assert all(f.severity is Severity.OK for fs in found.values() for f in fs), found
    # a real difference still shows
    flat["b"] = flatten(_inventory("0x002d005e"))
    bad = [f for f in drift_findings(flat)["b"] if f.severity is Severity.WARNING]
    assert [f.check for f in bad] == ["fleet.drift.psp_sos"]
    from rocmprov.fleet.drift import canonical

    assert canonical("mec", "0x1") == "0x1"  # other fields keep the tool's spelling


# --- --baseline: bad input is exit 64 in one line, --save-baseline named in its own errors ---


def test_deeply_nested_baseline_is_a_baseline_error() -> None:
    try:
        load_baseline("[" * 100_000, "deep.json")
    except BaselineError as exc:
        assert "deep.json" in str(exc)
    else:
        raise AssertionError("no BaselineError")


def test_cli_deep_baseline_exit_64_nothing_written(tmp_path: Path) -> None:
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000)
    saved = tmp_path / "saved.json"
    run = rocmprov(
        "audit", "--bundle", str(BUNDLE), "--baseline", str(deep), "--save-baseline", str(saved)
    )
    assert run.rc == 64, run.stderr
    assert_one_line_error(run)
    assert not saved.exists()


def test_save_baseline_error_names_save_baseline() -> None:
    run = rocmprov("audit", "--bundle", str(BUNDLE), "--save-baseline", "/nonexistent-dir/b.json")
    assert run.rc == 64
    assert_one_line_error(run)
    assert "--save-baseline /nonexistent-dir/b.json" in run.stderr
    assert "--output" not in run.stderr


# --- the terminal summary of a large fleet stays bounded -----------------------------------


def test_fleet_summary_of_1000_hosts_with_distinct_summaries_is_bounded() -> None:
    hosts = []
    for i in range(1000):
        findings = tuple(
            Finding(
                "gpu.ecc.correctable",
                Severity.WARNING,
                f"GPU {g}: {i * 8 + g + 1} correctable ECC error(s)",
                subject=f"gpu{g}",
            )
            for g in range(8)
        )
        hosts.append(HostReport(f"host{i:04d}", findings))
    buf = io.StringIO()
    table.render(AuditResult(tuple(hosts)), buf)
    out = buf.getvalue()
    assert out.count("\n") < 400, out.count("\n")
    # the one failing check is one row, counting every host
    row = next(line for line in out.splitlines() if "gpu.ecc.correctable" in line)
    assert "1000" in row
    assert "other finding(s)" in out


def test_json_error_document_of_bad_baseline(tmp_path: Path) -> None:
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000)
    run = rocmprov("audit", "--bundle", str(BUNDLE), "--baseline", str(deep), "--format", "json")
    assert run.rc == 64
    assert json.loads(run.stdout)["exit_code"] == 64


# --- verify --level 2: a tool stopped at its time limit is not judged a pass ----------------


class _FakeHost:
    """rvs present, the others absent; the rvs run printed a passing line, then was killed."""

    host = "fake"

    def __init__(self, stdout: str, exit_status: int) -> None:
        self.stdout, self.exit_status = stdout, exit_status

    def run(self, command: str, timeout: float = 0) -> CommandResult:
        if command.startswith("command -v"):
            found = "rvs" in command
            return CommandResult(0 if found else 127, "/opt/rocm/bin/rvs\n" if found else "", "", 0)
        if "gst_single.conf" in command:
            # the runner's shell prints the tool's exit status so (rocmprov/active/runner.py)
            return CommandResult(0, self.stdout, f"rocmprov-exit: {self.exit_status}\n", 0)
        return CommandResult(0, "", "", 0)


def _rvs_pass_text() -> str:
    from tests.fixtureload import FIXTURES, load

    return load(FIXTURES / "active" / "rvs-gst-met-true-userguide.txt").text


def test_rvs_killed_at_its_time_limit_is_unknown_not_ok() -> None:
    from rocmprov.active.runner import run_active

    text = _rvs_pass_text()
    finished = {r.tool: r for r in run_active(_FakeHost(text, 0)).results}
    assert finished["rvs"].severity is Severity.OK  # the fixture is a pass
    killed = {r.tool: r for r in run_active(_FakeHost(text, 124)).results}
    assert killed["rvs"].severity is Severity.UNKNOWN
    assert "did not finish" in killed["rvs"].summary
    assert killed["transferbench"].severity is Severity.SKIPPED


# --- health: an amd-smi bad-pages call that printed no JSON says nothing about the pages -----


def test_bad_pages_error_text_is_not_zero_retired_pages() -> None:
    from rocmprov.parse.amdsmi_health import parse_amd_smi_bad_pages

    # synthetic: any non-JSON answer to `amd-smi bad-pages --json 2>&1` (an error message)
    assert parse_amd_smi_bad_pages("amd-smi: error: something went wrong\n") == []
    # the JSON form still counts (upper-case keys too)
    doc = '[{"gpu": 0, "RETIRED": [{"page_address": "0x1"}], "pending": "No bad pages found."}]'
    (pages,) = parse_amd_smi_bad_pages(doc)
    assert (pages.index, pages.retired, pages.pending) == (0, 1, 0)
