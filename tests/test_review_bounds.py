"""Regressions of the review's bounds (../shared/review r04, r06, r09, r10, r16): one host's
non-finite number, multi-MiB tool-output lines, a baseline of a split fleet, a hostile
baseline, secrets in the inventory cache."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rocmprov.active.rccl_tests import parse_rccl_tests
from rocmprov.active.rvs import parse_rvs, parse_rvs_summary
from rocmprov.active.transferbench import parse_transferbench
from rocmprov.collect.bundle import Bundle, ProbeOutput, write_bundle
from rocmprov.fleet.drift import BaselineError, load_baseline
from rocmprov.inventory.cache import holds_secrets
from rocmprov.parse.smi import parse_amd_smi
from tests.fleetbundles import KERNEL_CHANGE, base_bundle, write_fleet
from tests.growth import assert_linear
from tests.helpers import rocmprov

# ---- r04: inf from one host


@pytest.mark.parametrize("value", ["inf", "-inf", "nan", "1e999", "1" + "0" * 400, 10**400])
def test_non_finite_vram_is_no_reading(value: object) -> None:
    static = json.loads(base_bundle().outputs["amd-smi-static"].stdout)
    static[0]["vram"] = {"type": "GDDR6", "size": {"value": value, "unit": "MB"}}
    gpus = parse_amd_smi(json.dumps(static))
    assert gpus and gpus[0].vram_total_bytes is None


def test_one_hosts_inf_never_ends_the_fleet_audit(tmp_path: Path) -> None:
    b = base_bundle()
    for n in ("gpu001", "gpu002", "gpu003"):
        write_bundle(Bundle(n, dict(b.outputs), {**b.meta, "host": n}), tmp_path)
    static = json.loads(b.outputs["amd-smi-static"].stdout)
    static[0]["vram"] = {"type": "GDDR6", "size": {"value": "inf", "unit": "MB"}}
    bad = ProbeOutput("amd-smi-static", "amd-smi static --json", 0, json.dumps(static))
    write_bundle(
        Bundle("gpu004", {**b.outputs, "amd-smi-static": bad}, {**b.meta, "host": "gpu004"}),
        tmp_path,
    )
    run = rocmprov("audit", "--bundle", str(tmp_path), "--format", "json")
    assert run.rc != 3 and "infinity" not in run.stderr, run.stderr
    assert len(json.loads(run.stdout)["hosts"]) == 4


def test_facts_a_parser_cannot_take_fail_that_host_only(monkeypatch) -> None:
    import rocmprov.audit.host as audit

    def broken(bundle: Bundle) -> None:
        raise OverflowError("cannot convert float infinity to integer")

    monkeypatch.setattr(audit, "build_facts", broken)
    report = audit.audit_bundle(base_bundle())
    assert report.failure == "error" and "OverflowError" in report.message
    assert report.severity.value == "unknown"


# ---- r06: the level-2 parsers are linear on any line

_TRANSFER = "Transfer 1 | 5.0 GB/s | 1.0 ms | "
_RANK = "# Rank 0 Group 0 Pid 1 on h device 0 [0x1] a"


@pytest.mark.parametrize(
    ("parse", "line"),
    [
        (parse_rvs_summary, lambda n: "| x" + " " * n),
        (parse_rvs, lambda n: "[RESULT] [x] [a] [GPU:: 1] " * (n >> 5)),
        (parse_transferbench, lambda n: f"{_TRANSFER}{'->' * (n >> 1)}|"),
        (parse_rccl_tests, lambda n: _RANK + " b" * (n >> 1)),
    ],
)
def test_multi_mib_lines_grow_linearly(parse, line) -> None:
    """Quadratic parsers took minutes on such lines (review: 4 MiB, 157 s): 4x the line (256
    KiB -> 1 MiB) must take well under 16x the CPU time, whatever the machine's speed."""
    assert_linear(lambda n: line(n) + "\n" + line(n), parse, 1 << 18)


def test_short_tool_lines_still_parse() -> None:
    summary = "| Action Name | Module | Result |\n| gpup_single | GPUP | PASS |\n| x | Y | FAIL |"
    assert parse_rvs_summary(summary) == {"gpup_single": "PASS", "x": "FAIL"}
    tb = parse_transferbench("Transfer 1 | 52.3 GB/s | 1.2 ms | 64 MB | GPU 0 -> GPU 1\n")
    assert [(t.index, t.gbps, t.path) for t in tb.transfers] == [(1, 52.3, "GPU 0 -> GPU 1")]


# ---- r09/r16: baselines


def _count(doc: dict, check: str) -> int:
    return sum(1 for h in doc["hosts"] for f in h["findings"] if f["check"] == check)


def test_baseline_of_a_split_fleet_keeps_the_split(tmp_path: Path) -> None:
    write_fleet(tmp_path / "b", 4, {"gpu002": KERNEL_CHANGE, "gpu003": KERNEL_CHANGE})
    golden = tmp_path / "golden.json"
    first = rocmprov(
        "audit", "--bundle", str(tmp_path / "b"), "--format", "json", "--save-baseline",
        str(golden),
    )  # fmt: skip
    assert _count(json.loads(first.stdout), "fleet.drift.kernel") == 4
    assert "kernel" in json.loads(golden.read_text())["unsettled"]
    again = rocmprov(
        "audit", "--bundle", str(tmp_path / "b"), "--format", "json", "--baseline", str(golden)
    )
    assert _count(json.loads(again.stdout), "fleet.drift.kernel") == 4


def test_hostile_baseline_values_are_refused(tmp_path: Path) -> None:
    doc = {"schema": "rocmprov.baseline/1", "source": "x", "fields": {"kernel": "6." + "9" * 5000}}
    with pytest.raises(BaselineError):
        load_baseline(json.dumps(doc), "golden.json")
    bad = {"schema": "rocmprov.baseline/1", "source": "x", "fields": {},
           "unsettled": {"kernel": {"a": "many"}}}  # fmt: skip
    with pytest.raises(BaselineError):
        load_baseline(json.dumps(bad), "golden.json")
    write_fleet(tmp_path / "b", 3)
    (tmp_path / "g.json").write_text(json.dumps(doc))
    run = rocmprov("audit", "--bundle", str(tmp_path / "b"), "--baseline", str(tmp_path / "g.json"))
    assert run.rc == 64 and len(run.stdout) < 100_000


# ---- r10: the inventory cache never holds a secret


@pytest.mark.parametrize(
    "hostvars",
    [
        {"tls_private_key": "-----BEGIN PRIVATE KEY----- x"},
        {"registry_credential": "Zm9v"},
        {"db_pw": "hunter2"},
        {"aws_access_key": "AKIA"},
        {"rocmprov_mirrors": {"https://repo.radeon.com": "https://ops:pw@mirror.example/r"}},
        {"anything": ["-----BEGIN OPENSSH PRIVATE KEY-----"]},
    ],
)
def test_secret_names_and_values_are_never_cached(hostvars: dict) -> None:
    assert holds_secrets({"_meta": {"hostvars": {"node1": hostvars}}})


def test_paths_and_plain_urls_are_cacheable() -> None:
    plain = {"ansible_ssh_private_key_file": "~/.ssh/id", "mirror": "https://mirror.example/r"}
    assert not holds_secrets({"_meta": {"hostvars": {"node1": plain}}})
