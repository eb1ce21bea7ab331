"""GPU health checks (checks/health.py, checks/health_limits.py) on real amd-smi captures
(tests/fixtures/amd-smi-health, AMD's amd-smi docs and public reports), and quiet on hosts
without an AMD GPU (the real H200 bundle)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from rocmprov.audit.host import audit_bundle
from rocmprov.checks import CHECKS, health, health_limits
from rocmprov.checks.policy import Policy
from rocmprov.collect.bundle import read_bundle
from rocmprov.facts.host import HostFacts, build_facts
from rocmprov.model import Severity
from rocmprov.parse.amdsmi_health import build_health, parse_health, parse_xgmi
from rocmprov.parse.pci import PciDevice
from rocmprov.parse.ras_sysfs import parse_ras_sysfs, parse_vram_bad_pages
from rocmprov.parse.smi import GpuMetrics
from tests.fixtureload import FIXTURES, load

HEALTH = FIXTURES / "amd-smi-health"
ALL = sorted(HEALTH.glob("*.txt"))
DATA = Path(__file__).parent / "data"
MI300X = PciDevice(bdf="0000:05:00.0", vendor_id="1002", device_id="74a1", class_id="1200")


def facts_with(**texts: str | None) -> HostFacts:
    return HostFacts(host="h", pci=(MI300X,), gpu_health=build_health(texts))


def by_id(findings, check):
    return [f for f in findings if f.check == check]


@pytest.mark.parametrize("path", ALL, ids=[p.name for p in ALL])
def test_fixture_header_and_expect(path: Path) -> None:
    fx = load(path)
    assert str(fx.header["source"]).startswith("https://")
    assert fx.header.get("what") and fx.header.get("excerpt")
    exp = fx.expect
    gpus = parse_xgmi(fx.text) if "xgmi" in path.name else parse_health(fx.text)
    assert len(gpus) == exp["gpus"]
    g = gpus[0]
    if "compute_partition" in exp:
        assert g.compute_partition == exp["compute_partition"]
    if "memory_partition" in exp:
        assert g.memory_partition == exp["memory_partition"]
    if "blocks" in exp:
        assert [b.name for b in g.blocks] == exp["blocks"]
    if "total_correctable" in exp:
        assert (g.total_correctable, g.total_uncorrectable, g.total_deferred) == (
            exp["total_correctable"],
            exp["total_uncorrectable"],
            exp["total_deferred"],
        )
    if "umc_correctable" in exp:
        umc = next(b for b in g.blocks if b.name == "UMC")
        assert (umc.correctable, umc.uncorrectable) == (
            exp["umc_correctable"],
            exp["umc_uncorrectable"],
        )
    if "ecc_block_state_enabled" in exp:
        assert [b for b, s in g.ras_block_state if s == "ENABLED"] == exp["ecc_block_state_enabled"]
    if "poison_schema" in exp:
        assert dict(g.ras_schemas)["poison_schema"] == exp["poison_schema"]
    if "slowdown_hotspot_c" in exp:
        limits = dict(g.temp_limits)
        assert limits["slowdown_hotspot"] == exp["slowdown_hotspot_c"]
        assert limits["shutdown_hotspot"] == exp["shutdown_hotspot_c"]
    if "active_violations" in exp:
        assert all(x.throttle_seen for x in gpus)
        assert [v for x in gpus for v in x.throttle_active] == exp["active_violations"]
    if "link_type" in exp:
        assert {x.xgmi_link_type for x in gpus} == {exp["link_type"]}
        assert {x.xgmi_bit_rate_gbps for x in gpus} == {exp["bit_rate_gbps"]}
        assert {x.xgmi_max_bandwidth_gbps for x in gpus} == {exp["max_bandwidth_gbps"]}


def _text(name: str) -> str:
    return load(HEALTH / name).text


def test_correctable_umc_errors_warn_and_uncorrectable_stays_ok() -> None:
    facts = facts_with(
        **{
            "amd-smi-metric": _text(
                "metric-text-ecc-blocks-umc-correctable-2-mi300x-grep-excerpt.txt"
            )
        }
    )
    found = health.check_ecc(facts, Policy())
    (ce,) = by_id(found, "gpu.ecc.correctable")
    (ue,) = by_id(found, "gpu.ecc.uncorrectable")
    assert ce.severity is Severity.WARNING and ce.actual == "2" and "UMC" in ce.summary
    assert ue.severity is Severity.OK
    assert ce.ref.startswith("https://")


def test_zero_counts_are_ok() -> None:
    facts = facts_with(
        **{"amd-smi-metric": _text("metric-text-ecc-ecc-blocks-deferred-changelog.txt")}
    )
    found = health.check_ecc(facts, Policy())
    assert {f.severity for f in found} == {Severity.OK}
    assert len(found) == 2


def test_uncorrectable_from_real_layout_with_a_count_is_critical() -> None:
    # the changelog's real layout with the UMC uncorrectable count changed: the rule, not the data
    text = _text("metric-text-ecc-ecc-blocks-deferred-changelog.txt").replace(
        "TOTAL_UNCORRECTABLE_COUNT: 0", "TOTAL_UNCORRECTABLE_COUNT: 3"
    )
    found = health.check_ecc(facts_with(**{"amd-smi-metric": text}), Policy())
    (ue,) = by_id(found, "gpu.ecc.uncorrectable")
    assert ue.severity is Severity.CRITICAL and "3 uncorrectable" in ue.summary


def test_ras_enabled_on_mi300a_readme_example() -> None:
    facts = facts_with(
        **{"amd-smi-static": _text("static-text-mi300a-readme-ras-partition-limit.txt")}
    )
    (f,) = health.check_ras(facts, Policy())
    assert f.severity is Severity.OK and "SDMA" in f.actual and "POISON" in f.actual


def test_ras_on_mi350x_static_poison_only() -> None:
    text = load(
        FIXTURES / "amd-smi" / "static-text-mi350x-bus-ifwi-driver-board-ras-excerpt.txt"
    ).text
    (f,) = health.check_ras(facts_with(**{"amd-smi-static": text}), Policy())
    assert f.severity is Severity.OK and f.actual == "POISON"


def test_partition_against_inventory() -> None:
    facts = facts_with(**{"amd-smi-static": _text("static-text-partition-cpx-nps4-changelog.txt")})
    (ok,) = health_limits.check_partition(
        facts, Policy(compute_partition="CPX", memory_partition="NPS4")
    )
    assert ok.severity is Severity.OK and "8 logical" in ok.summary
    (bad,) = health_limits.check_partition(
        facts, Policy.from_vars({"rocmprov_compute_partition": "spx"})
    )
    assert bad.severity is Severity.CRITICAL and "CPX != SPX" in bad.summary
    (free,) = health_limits.check_partition(facts, Policy())
    assert free.severity is Severity.OK


def test_partition_from_amd_smi_partition_command() -> None:
    text = load(FIXTURES / "amd-smi" / "partition-text-4gpu-nps1-na-excerpt.txt").text
    found = health_limits.check_partition(
        facts_with(**{"amd-smi-static": text}), Policy(memory_partition="NPS4")
    )
    assert len(found) == 4 and {f.severity for f in found} == {Severity.CRITICAL}


def test_xgmi_hive_of_eight_is_ok_and_a_pcie_member_is_not() -> None:
    text = _text("xgmi-text-8gpu-link-metric-table-changelog.txt")
    found = health.check_xgmi(facts_with(**{"amd-smi-xgmi": text}), Policy())
    links = by_id(found, "gpu.xgmi.links")
    assert len(links) == 8 and {f.severity for f in links} == {Severity.OK}
    odd = text.replace(
        "GPU7   0000:df:00.0 32 Gb/s  512 Gb/s      XGMI",
        "GPU7   0000:df:00.0 32 Gb/s  512 Gb/s      PCIE",
    )
    bad = by_id(health.check_xgmi(facts_with(**{"amd-smi-xgmi": odd}), Policy()), "gpu.xgmi.links")
    assert [f.subject for f in bad if f.severity is Severity.CRITICAL] == ["gpu7"]


def test_throttle_not_active_is_ok() -> None:
    facts = facts_with(**{"amd-smi-metric": _text("metric-text-throttle-mi300-changelog.txt")})
    found = health_limits.check_throttle(facts, Policy())
    assert len(found) == 2 and {f.severity for f in found} == {Severity.OK}
    hot = _text("metric-text-throttle-mi300-changelog.txt").replace(
        "HBM_THERMAL_VIOLATION_STATUS: NOT ACTIVE", "HBM_THERMAL_VIOLATION_STATUS: ACTIVE", 1
    )
    (f0, _f1) = health_limits.check_throttle(facts_with(**{"amd-smi-metric": hot}), Policy())
    assert f0.severity is Severity.WARNING and f0.actual == "HBM_THERMAL"


def test_temperature_and_power_cap_against_the_cards_own_limits() -> None:
    facts = facts_with(
        **{"amd-smi-static": _text("static-text-mi300a-readme-ras-partition-limit.txt")}
    )
    (cap,) = health_limits.check_power_cap(facts, Policy())
    assert cap.severity is Severity.OK and cap.actual == "550 W"
    hot = replace(facts, smi_metrics=(GpuMetrics(0, (("hotspot", 101.0), ("mem", 80.0))),))
    temps = health_limits.check_temperature(hot, Policy())
    assert [f.severity for f in temps] == [Severity.WARNING, Severity.OK]
    burning = replace(facts, smi_metrics=(GpuMetrics(0, (("hotspot", 110.0),)),))
    assert health_limits.check_temperature(burning, Policy())[0].severity is Severity.CRITICAL


def test_sysfs_bad_pages_and_counts() -> None:
    # the kernel doc's own example lines (amdgpu_ras.c, gpu_vram_bad_pages interface)
    pages = parse_vram_bad_pages("0x00000001 : 0x00001000 : R\n0x00000002 : 0x00001000 : P\n")
    assert (pages.retired, pages.pending, pages.unreservable) == (1, 1, 0)
    text = "== card0 features\nfeature mask: 0x3fbf\n== card0 umc_err_count\nue: 0\nce: 4\n"
    text += "== card0 gpu_vram_bad_pages\n0x00000001 : 0x00001000 : R\n"
    (card,) = parse_ras_sysfs(text)
    assert card.features == 0x3FBF and card.counts == (("umc", 0, 4),)
    facts = facts_with(**{"amdgpu-ras": text})
    retired = by_id(health.check_bad_pages(facts, Policy()), "gpu.bad-pages.retired")
    assert retired[0].severity is Severity.WARNING and retired[0].actual == "1"


def test_no_amd_gpu_is_not_applicable_everywhere() -> None:
    facts = HostFacts(host="h", pci=(), gpu_health=None)
    for check in (*health_checks(),):
        assert {f.severity for f in check(facts, Policy())} == {Severity.SKIPPED}


def test_gpu_host_without_amd_smi_is_skipped_not_warned() -> None:
    facts = HostFacts(host="h", pci=(MI300X,))
    for check in health_checks():
        assert {f.severity for f in check(facts, Policy())} == {Severity.SKIPPED}


def health_checks():
    """The registered checks of the two health modules (what the audit runs)."""
    modules = {health.__name__, health_limits.__name__}
    found = tuple(c for c in CHECKS if c.__module__ in modules)
    assert len(found) == 8
    return found


@pytest.mark.parametrize("name", ["h200-vm-bundle-2026-12-01.tar.gz", "h200-vm-bundle.tar.gz"])
def test_real_h200_bundle_gets_no_new_warning(name: str) -> None:
    bundle = read_bundle(DATA / name)
    report = audit_bundle(bundle)
    mine = [
        f
        for f in report.findings
        if f.check.startswith(
            (
                "gpu.ecc",
                "gpu.ras",
                "gpu.bad",
                "gpu.xgmi",
                "gpu.throttle",
                "gpu.power",
                "gpu.temp",
                "gpu.partition",
            )
        )
    ]
    assert len(mine) >= 8
    assert {f.severity for f in mine} == {Severity.SKIPPED}
    assert build_facts(bundle).gpu_health is None or not build_facts(bundle).amd_gpus
