"""Firmware/version inventory (real captures) and fleet drift (a bundle fleet with one host's
versions changed: exactly that drift, with and without a baseline file)."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from rocmprov.audit.host import audit_bundle
from rocmprov.fleet.drift import (
    Baseline,
    BaselineError,
    dump_baseline,
    flatten,
    load_baseline,
    majority,
    with_drift,
)
from rocmprov.model import AuditResult, Severity
from rocmprov.parse.firmware import (
    parse_amd_smi_firmware,
    parse_amd_smi_static_versions,
    parse_dmi,
    parse_rocm_smi_firmware,
)
from tests.fixtureload import FIXTURES, load
from tests.fleetbundles import (
    KERNEL_CHANGE,
    PMFW_CHANGE,
    ROCM_SMI,
    STATIC,
    VBIOS_CHANGE,
    base_bundle,
    host_bundle,
    write_fleet,
)
from tests.helpers import assert_one_line_error, rocmprov

MI300A_FW = load(FIXTURES / "amd-smi" / "firmware-text-4x-mi300a-rocm-6.3.3.txt")


# --- parsers on real captures -------------------------------------------------------------------


def test_amd_smi_firmware_text_of_four_mi300a() -> None:
    want = MI300A_FW.header["inventory"]
    gpus = parse_amd_smi_firmware(MI300A_FW.text)
    assert [g.index for g in gpus] == list(range(MI300A_FW.expect["gpu_count"]))
    for g in gpus:
        assert len(g.blocks) == want["blocks"]
        assert (g.blocks["PM"], g.blocks["PSP_SOSDRV"], g.blocks["CP_MEC1"]) == (
            want["pmfw"],
            want["psp_sos"],
            want["mec"],
        )


@pytest.mark.parametrize("envelope", ["list", "gpu_data"])
def test_amd_smi_firmware_json_shapes_give_the_same_blocks(envelope: str) -> None:
    """The CLI's JSON (amdsmi_cli/amdsmi_commands.py: {"gpu", "fw_list": [{"fw_id",
    "fw_version"}]}, a bare list on 6.x, {"gpu_data": [...]} on 7.x) carrying the capture's
    values, with the preamble line amd-smi can print, parses like the human text."""
    text_gpus = parse_amd_smi_firmware(MI300A_FW.text)
    rows = [
        {"gpu": g.index, "fw_list": [{"fw_id": k, "fw_version": v} for k, v in g.blocks.items()]}
        for g in text_gpus
    ]
    doc = rows if envelope == "list" else {"gpu_data": rows}
    parsed = parse_amd_smi_firmware("WARNING: something\n" + json.dumps(doc, indent=4))
    assert [(g.index, g.blocks) for g in parsed] == [(g.index, g.blocks) for g in text_gpus]


def test_rocm_smi_firmware_vbios_and_driver() -> None:
    want = ROCM_SMI.header["inventory"]
    gpus, driver = parse_rocm_smi_firmware(ROCM_SMI.text)
    assert driver == want["driver"]
    (g,) = gpus
    assert g.vbios == want["vbios"]
    assert (g.blocks["SMC"], g.blocks["SOS"], g.blocks["MEC"]) == (
        want["pmfw"],
        want["psp_sos"],
        want["mec"],
    )


def test_amd_smi_static_versions() -> None:
    want = STATIC.header["inventory"]
    (s,) = parse_amd_smi_static_versions(STATIC.text)
    assert (s.vbios, s.vbios_version, s.driver, s.pci_id, s.bdf) == (
        want["vbios"],
        want["vbios_version"],
        want["driver"],
        want["pci_id"],
        want["bdf"],
    )


@pytest.mark.parametrize(
    "text", ["", "garbage", "[]", "{}", '{"gpu_data": "N/A"}', '[{"gpu": 0, "fw_list": "N/A"}]']
)
def test_garbage_gives_nothing(text: str) -> None:
    assert all(not g.blocks for g in parse_amd_smi_firmware(text))
    assert parse_rocm_smi_firmware(text) == ([], "")
    assert all(not s.vbios for s in parse_amd_smi_static_versions(text))
    assert parse_dmi(text) == {}


def test_dmi_lines() -> None:
    got = parse_dmi("bios_version 2.1a\nbios_vendor  \nother x\nbios_date 03/01/2024\n")
    assert got == {"bios_version": "2.1a", "bios_date": "03/01/2024"}


def test_inventory_in_the_report_of_a_bundle() -> None:
    report = audit_bundle(base_bundle())
    inv = report.inventory
    assert inv["host"]["kernel"] == "6.18.44-fc-v973-gpu"  # the real bundle's uname
    assert inv["host"]["driver"] == STATIC.header["inventory"]["driver"]
    assert inv["host"]["bios_version"] == "1.0b"
    assert inv["host"]["gpu_pci_ids"] == ["10de:2335"]  # the H200 of the real bundle
    (gpu,) = inv["gpus"]
    assert gpu["vbios"] == STATIC.header["inventory"]["vbios"]
    assert gpu["pmfw"] == ROCM_SMI.header["inventory"]["pmfw"]  # rocm-smi: amd-smi gave none
    assert gpu["source"] == "rocm-smi"


def test_inventory_of_a_bundle_without_the_new_probes_is_partial_not_wrong() -> None:
    real = base_bundle()
    old = {k: v for k, v in real.outputs.items() if k in ("uname", "os-release")}
    inv = audit_bundle(type(real)("old", old)).inventory
    assert inv["host"] == {"os": "ubuntu 24.04", "kernel": "6.18.44-fc-v973-gpu"}
    assert inv["gpus"] == []


# --- drift, pure --------------------------------------------------------------------------------


def _result(changes: dict) -> AuditResult:
    base = base_bundle()
    return AuditResult(
        tuple(audit_bundle(host_bundle(base, f"h{i}", changes.get(f"h{i}"))) for i in range(5))
    )


def _drift(result: AuditResult) -> dict[str, list[tuple[str, str, str]]]:
    return {
        h.host: [
            (f.check, f.actual, f.expected)
            for f in h.findings
            if f.check.startswith("fleet.drift.")
        ]
        for h in result.hosts
    }


def test_majority_finds_exactly_the_changed_host_and_field() -> None:
    drift = _drift(with_drift(_result({"h2": PMFW_CHANGE}), None))
    assert drift.pop("h2") == [("fleet.drift.pmfw", "00.59.52.00", "00.59.50.00")]
    assert all(v == [] for v in drift.values())


def test_two_fields_on_two_hosts() -> None:
    drift = _drift(with_drift(_result({"h1": VBIOS_CHANGE, "h4": KERNEL_CHANGE}), None))
    assert drift["h1"] == [("fleet.drift.vbios", "115-D534P00-101", "115-D534P00-100")]
    assert drift["h4"] == [("fleet.drift.kernel", "6.18.44-fc-v999-gpu", "6.18.44-fc-v973-gpu")]
    assert sum(len(v) for v in drift.values()) == 2


def test_golden_host_that_differs_makes_every_other_host_drift() -> None:
    result = _result({"h2": PMFW_CHANGE})
    golden = Baseline("baseline host h2", flatten(result.hosts[2].inventory))
    drift = _drift(with_drift(result, golden))
    assert drift.pop("h2") == []
    assert all(v == [("fleet.drift.pmfw", "00.59.50.00", "00.59.52.00")] for v in drift.values())


def test_no_majority_flags_every_host_of_the_split_field() -> None:
    flat = {"a": {"kernel": "1"}, "b": {"kernel": "2"}, "c": {"kernel": "3"}, "d": {"os": "x"}}
    reference, split = majority(flat)
    assert "kernel" not in reference.fields and reference.fields["os"] == "x"
    assert set(split["kernel"]) == {"1", "2", "3"}
    result = AuditResult(())
    from rocmprov.fleet.drift import drift_findings

    found = drift_findings(flat)
    for host in "abc":
        (f,) = found[host]
        assert f.check == "fleet.drift.kernel" and f.severity is Severity.WARNING
        assert "no majority" in f.summary
    assert [f.severity for f in found["d"]] == [Severity.OK]
    assert result.hosts == ()


def test_unknown_is_not_drift() -> None:
    from rocmprov.fleet.drift import drift_findings

    flat = {"a": {"kernel": "1", "vbios": "v"}, "b": {"kernel": "1"}, "c": {"kernel": "1"}}
    assert all(f.severity is Severity.OK for fs in drift_findings(flat).values() for f in fs)


def test_single_host_without_baseline_has_no_drift_findings() -> None:
    result = AuditResult((audit_bundle(base_bundle()),))
    assert with_drift(result, None) is result


def test_baseline_document_round_trip_and_bad_files() -> None:
    b = Baseline("x", {"kernel": "6.8", "vbios": "113-A"})
    assert load_baseline(dump_baseline(b), "f.json").fields == b.fields
    for text in (
        "",
        "{",
        "[]",
        '{"schema": "other"}',
        '{"schema": "rocmprov.baseline/1"}',
        '{"schema": "rocmprov.baseline/1", "fields": {"kernel": 6}}',
        '{"schema": "rocmprov.baseline/1", "fields": {"nosuch": "1"}}',
    ):
        with pytest.raises(BaselineError) as exc:
            load_baseline(text, "f.json")
        assert "\n" not in str(exc.value) and "f.json" in str(exc.value)


# --- the command: a bundle fleet ----------------------------------------------------------------


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("fleet")
    write_fleet(d, 8, {"gpu005": PMFW_CHANGE})
    return d


def _json_drift(run) -> dict[str, list[tuple[str, str, str]]]:
    doc = json.loads(run.stdout)
    assert doc["schema"] == "rocmprov.audit/1" and doc["error"] is None
    return {
        h["host"]: [
            (f["check"], f["actual"], f["expected"])
            for f in h["findings"]
            if f["check"].startswith("fleet.drift.")
        ]
        for h in doc["hosts"]
    }


def test_cli_fleet_drift_with_and_without_a_baseline_file(fleet: Path, tmp_path: Path) -> None:
    saved = tmp_path / "golden.json"
    run = rocmprov(
        "audit", "--bundle", str(fleet), "--format", "json", "--save-baseline", str(saved)
    )
    drift = _json_drift(run)
    assert len(drift) == 8
    assert drift.pop("gpu005") == [("fleet.drift.pmfw", "00.59.52.00", "00.59.50.00")]
    assert all(v == [] for v in drift.values())
    assert stat.S_IMODE(os.stat(saved).st_mode) == 0o600
    assert json.loads(saved.read_text())["fields"]["pmfw"] == "00.59.50.00"

    # the saved snapshot as the reference: the same single difference
    again = _json_drift(
        rocmprov("audit", "--bundle", str(fleet), "--format", "json", "--baseline", str(saved))
    )
    assert again == {
        **{h: [] for h in again},
        "gpu005": [("fleet.drift.pmfw", "00.59.52.00", "00.59.50.00")],
    }

    # a golden host by name: the changed host as golden makes the 7 others differ
    golden = _json_drift(
        rocmprov("audit", "--bundle", str(fleet), "--format", "json", "--baseline", "gpu005")
    )
    assert golden.pop("gpu005") == []
    assert all(v == [("fleet.drift.pmfw", "00.59.50.00", "00.59.52.00")] for v in golden.values())


def test_cli_repeated_bundles_and_inventory_key(fleet: Path) -> None:
    run = rocmprov(
        "audit",
        "--bundle",
        str(fleet / "gpu000"),
        "--bundle",
        str(fleet / "gpu005"),
        "--format",
        "json",
    )
    doc = json.loads(run.stdout)
    assert [h["host"] for h in doc["hosts"]] == ["gpu000", "gpu005"]
    for h in doc["hosts"]:  # the old keys stay; inventory is new
        assert {"host", "status", "severity", "facts", "findings", "inventory"} <= set(h)
    # two hosts, no majority for the changed field: both are told the fleet is split
    split = [f for h in doc["hosts"] for f in h["findings"] if f["check"] == "fleet.drift.pmfw"]
    assert len(split) == 2 and all("no majority" in f["summary"] for f in split)


@pytest.mark.parametrize(
    "content", ["not json", '{"schema": "rocmprov.audit/1"}', '{"schema": "rocmprov.baseline/1"}']
)
def test_bad_baseline_file_is_one_line_and_64(fleet: Path, tmp_path: Path, content: str) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(content)
    for fmt in ("table", "json"):
        run = rocmprov("audit", "--bundle", str(fleet), "--baseline", str(bad), "--format", fmt)
        assert run.rc == 64, run.stderr
        assert_one_line_error(run)
        if fmt == "json":
            assert json.loads(run.stdout)["error"]


def test_missing_baseline_file_or_host_is_64(fleet: Path, tmp_path: Path) -> None:
    for value in (str(tmp_path / "none.json"), "no-such-host"):
        run = rocmprov("audit", "--bundle", str(fleet), "--baseline", value)
        assert run.rc == 64
        assert_one_line_error(run)


def test_table_of_a_fleet_is_a_summary_unless_all_hosts(fleet: Path) -> None:
    run = rocmprov("audit", "--bundle", str(fleet))
    assert "Fleet: 8 hosts" in run.stdout and "Drift" in run.stdout
    assert "Hosts with problems: 8 of 8" in run.stdout
    assert run.stdout.count("passed,") == 0  # no per-host tables
    drift_rows = [ln for ln in run.stdout.splitlines() if "00.59.52.00" in ln]
    assert len(drift_rows) == 1 and "gpu005" in drift_rows[0]
    full = rocmprov("audit", "--bundle", str(fleet), "--all-hosts")
    assert full.stdout.count("passed,") == 8
    few = rocmprov("audit", "--bundle", str(fleet / "gpu000"), "--bundle", str(fleet / "gpu001"))
    assert few.stdout.count("passed,") == 2 and "Hosts with problems" not in few.stdout


def test_version_probes_exist_once_and_are_bounded() -> None:
    from rocmprov.collect.probes import PROBE_IDS, build_probes, for_profile

    assert len(set(PROBE_IDS)) == len(PROBE_IDS)
    probes = {p.id: p for p in build_probes()}
    for pid in ("amd-smi-firmware", "rocm-smi-firmware", "dmi", "amdgpu-version"):
        assert probes[pid].timeout <= 60
    _, left_out = for_profile(tuple(probes.values()), "quick")
    assert {"amd-smi-firmware", "rocm-smi-firmware"} <= set(left_out)  # SMI CLIs: full only
    assert not {"dmi", "amdgpu-version"} & set(left_out)  # two file reads: quick too
