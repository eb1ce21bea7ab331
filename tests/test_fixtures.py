"""Every real capture in tests/fixtures: its hand-read `expect:` facts, then the audit on it.

Keys of `expect:` are either asserted (a handler below) or listed in INFORMATIONAL (read by hand,
not a fact rocmprov extracts); an unknown key fails, so a new fixture cannot be silently ignored.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from rocmprov.audit.host import audit_bundle
from rocmprov.checks.pcie import vram_bar
from rocmprov.checks.policy import Policy
from rocmprov.collect.bundle import Bundle, ProbeOutput
from rocmprov.parse.dmesg import parse_dmesg
from rocmprov.parse.lspci import _HEADER, parse_lspci, parse_lspci_block
from rocmprov.parse.pci import PciDevice, normalize_bdf
from rocmprov.parse.rocminfo import parse_rocminfo
from rocmprov.parse.smi import amd_smi_gpus, amd_smi_shape, load_json, parse_amd_smi, parse_rocm_smi
from rocmprov.parse.sysfs import parse_link_files, parse_pp_dpm_pcie
from rocmprov.parse.system import infer_os_release, parse_os_release
from tests.fixtureload import Fixture, all_fixtures

FIXTURES = all_fixtures()
IDS = [f.name for f in FIXTURES]

INFORMATIONAL = {
    "lspci": {"class_codes", "rebar_capability"},
    "rocminfo": {"kfd_missing", "kfd_opened", "hsa_status", "user_in_video_group", "environment",
                 "truncated", "rocm_runtime_ext_version", "gpu_pool1_size_kb"},
    "rocm-smi": {"columns", "device_ids", "nodes", "partitions", "vram_pct", "pwrcap_w",
                 "has_ansi_escapes", "line_prefix", "avg_power_w", "rows", "card_model",
                 "card_sku", "vram_used_bytes", "vram_used_pct", "driver_version", "gpu_ids",
                 "vbios", "pcie_clock_level", "truncated"},
    "amd-smi": {"truncated", "closing", "gfx_activity", "na_leaf", "watch_mode", "usage",
                "memory_partition", "accelerator_type", "gpu_count_shown", "market_name",
                "device_id", "num_compute_units", "bdf", "max_pcie_width", "max_pcie_speed",
                "pcie_interface_version", "slot_type", "driver_version", "kernel", "gfx",
                "format", "gpu_count"},
    "dmesg": {"amdgpu_version", "vbios", "kernel_cmdline_has", "asic", "pci_ids", "bars",
              "vram_mb", "visible_vram_bar_mb", "bars_assigned", "reset_succeeded", "kfd_asic",
              "init_ok", "limiting_port", "link_speed_gts", "link_width", "capable_speed_gts",
              "capable_width", "kernel", "bar_resized", "bar0_before_bytes"},
    "os-release": {"source_command", "description", "name", "version", "kernel",
                   "platform_id"},
    "sysfs": {"speed_format"},
}
# keys of one expected lspci device that describe the text, not a parsed fact
DEVICE_INFORMATIONAL = {"port_type", "speed_downgraded", "width_downgraded",
                        "prefetchable_window_bytes", "role"}


def test_fixture_corpus_is_large() -> None:
    assert len(FIXTURES) >= 55
    assert sum(f.kind == "lspci" for f in FIXTURES) >= 13


@pytest.mark.parametrize("fx", FIXTURES, ids=IDS)
def test_header(fx: Fixture) -> None:
    assert str(fx.header.get("source", "")).startswith("https://")
    assert fx.header.get("what")
    assert fx.text.strip()
    if "excerpt" in fx.path.name:
        assert fx.header.get("excerpt"), "an -excerpt fixture must say how it was cut"


@pytest.mark.parametrize("fx", FIXTURES, ids=IDS)
def test_expect(fx: Fixture) -> None:
    handler = HANDLERS[fx.kind]
    unknown = set(fx.expect) - set(handler.__annotations__.get("keys", ()) or ()) - \
        INFORMATIONAL.get(fx.kind, set()) - HANDLED[fx.kind]
    assert not unknown, f"expect keys neither asserted nor informational: {unknown}"
    handler(fx, fx.expect)


# --- lspci ------------------------------------------------------------------------------------


def _lspci(fx: Fixture, exp: dict[str, Any]) -> None:
    devices = parse_lspci(fx.text)
    by_bdf = {d.bdf: d for d in devices}
    has_header = any(_HEADER.match(line) for line in fx.text.splitlines())
    for want in exp.get("devices", []):
        block = want.get("bdf") is None or not has_header
        if block:
            dev = parse_lspci_block(fx.text)
        else:
            dev = by_bdf.get(normalize_bdf(want["bdf"]))
            assert dev is not None, f"{want['bdf']} not parsed; got {sorted(by_bdf)}"
        _device_matches(dev, want, header_known=not block)
    if "gpu_count" in exp:
        assert sum(d.is_amd_gpu for d in devices) == exp["gpu_count"]
    if "bridge_count" in exp:
        assert sum(d.is_bridge for d in devices) == exp["bridge_count"]
    if "vram_bar_bytes" in exp:
        gpu = next(d for d in devices if d.is_amd_gpu)
        assert vram_bar(gpu) == exp["vram_bar_bytes"]
    if "caps_denied" in exp:
        assert any(d.caps_denied for d in devices) == exp["caps_denied"]


_CLASS_WORD = {"bridge": "0604", "display": "0380"}


def _device_matches(dev: PciDevice, want: dict[str, Any], *, header_known: bool) -> None:
    unknown = set(want) - DEVICE_INFORMATIONAL - {
        "bdf", "vendor_id", "device_id", "class", "name", "lnkcap_speed_gts", "lnkcap_width",
        "lnksta_speed_gts", "lnksta_width", "downgraded", "caps_denied", "bars", "driver",
        "secondary_bus"}
    assert not unknown, unknown
    if header_known:
        if "vendor_id" in want:
            assert dev.vendor_id == (want["vendor_id"] or "")
        if "device_id" in want:
            assert dev.device_id == (want["device_id"] or "")
        if "class" in want:
            cls = want["class"]
            if cls in _CLASS_WORD:
                assert dev.class_id[:2] == _CLASS_WORD[cls][:2]
            else:
                assert dev.class_id == (cls or "")
        if want.get("name"):
            assert re.sub(r"\s*\[[0-9a-f]{4}:[0-9a-f]{4}\]", "", want["name"]) in dev.name
    for key, attr in (("lnkcap_speed_gts", dev.link_cap.speed_gts),
                      ("lnkcap_width", dev.link_cap.width),
                      ("lnksta_speed_gts", dev.link_sta.speed_gts),
                      ("lnksta_width", dev.link_sta.width)):
        if key in want:
            assert attr == want[key], key
    for key in ("downgraded", "caps_denied", "driver", "secondary_bus"):
        if key in want:
            assert getattr(dev, key) == want[key], key
    if "bars" in want:
        got = [{"region": None if b.index < 0 else b.index, "size_bytes": b.size,
                "prefetchable": b.prefetchable, "bits": 64 if b.is64 else 32} for b in dev.bars]
        assert got == want["bars"]


# --- rocminfo ---------------------------------------------------------------------------------

_ERRORS = {None: "", "rocK not loaded": "rock-not-loaded"}


def _rocminfo(fx: Fixture, exp: dict[str, Any]) -> None:
    info = parse_rocminfo(fx.text)
    gpus = info.gpus
    checks = {
        "agents_gpu": len(gpus),
        "agents_gpu_shown": len(gpus),
        "agents_cpu": sum(a.device_type.upper() == "CPU" for a in info.agents),
        "gfx": [a.gfx for a in gpus],
        "marketing_names": [a.marketing_name for a in gpus],
        "rocm_runtime_version": info.runtime_version,
        "rock_module_version": info.rock_version,
        "chip_ids": [a.chip_id for a in gpus],
        "bdfids": [a.bdfid for a in gpus],
        "compute_units": [a.compute_units for a in gpus],
        "isa": [i for a in gpus for i in a.isas],
        "rock_not_loaded_line": info.rock_not_loaded_line,
        "error": info.error,
    }
    for key, want in exp.items():
        if key in checks:
            want = _ERRORS.get(want, want) if key == "error" else want
            assert checks[key] == want, key


# --- rocm-smi / amd-smi -----------------------------------------------------------------------


def _all_keys(value: Any) -> set[str]:
    if isinstance(value, dict):
        return set(value) | {k for v in value.values() for k in _all_keys(v)}
    if isinstance(value, list):
        return {k for v in value for k in _all_keys(v)}
    return set()


def _keys_present(fx: Fixture, keys: list[str]) -> None:
    data = load_json(fx.text)
    csv_head = next((ln.split(",") for ln in fx.text.splitlines() if ln.startswith("device,")), [])
    found = _all_keys(data) | set(csv_head)
    for key in keys:
        assert key in found or f'"{key}"' in fx.text, key


def _rocm_smi(fx: Fixture, exp: dict[str, Any]) -> None:
    gpus = parse_rocm_smi(fx.text)
    if "keys" in exp:
        _keys_present(fx, exp["keys"])
    if exp.get("truncated"):
        return  # an excerpt that is not valid JSON on its own: keys only
    if "format" in exp:
        is_json = load_json(fx.text) is not None
        assert is_json == (exp["format"] == "json")
    if "gpu_count" in exp:
        assert len(gpus) == exp["gpu_count"]
    if "cards" in exp:
        assert [f"card{g.index}" for g in gpus] == exp["cards"]
    if "vram_total_bytes" in exp:
        assert [g.vram_total_bytes for g in gpus] == exp["vram_total_bytes"]
    if "product_names" in exp:
        assert [g.name for g in gpus] == exp["product_names"]
    if "gfx" in exp:
        assert [g.gfx for g in gpus] == exp["gfx"]
    if "pci_bus" in exp:
        assert [g.bdf for g in gpus] == [b.lower() for b in exp["pci_bus"]]
    if "warning" in exp:
        assert exp["warning"] in fx.text


def _amd_smi(fx: Fixture, exp: dict[str, Any]) -> None:
    gpus = parse_amd_smi(fx.text)  # must not raise on any of them
    assert isinstance(gpus, list)
    if "keys" in exp:
        _keys_present(fx, exp["keys"])
    if "preamble_line" in exp:
        assert fx.text.splitlines()[0].strip() == exp["preamble_line"]
    if exp.get("truncated"):
        return
    if "shape" in exp:
        assert amd_smi_shape(fx.text) == exp["shape"]
        assert len(amd_smi_gpus(load_json(fx.text))) == exp.get("gpu_count", len(gpus))


# --- dmesg ------------------------------------------------------------------------------------


def _dmesg(fx: Fixture, exp: dict[str, Any]) -> None:
    log = parse_dmesg(fx.text)
    if "errors" in exp:
        assert set(log.tags) == set(exp["errors"])
    if "gpu_bdfs" in exp:
        assert set(log.gpu_bdfs) == set(exp["gpu_bdfs"])
    if "ring" in exp:
        rings = [e.detail for e in log.events if e.tag == "ring_timeout"]
        assert rings and rings[0] == exp["ring"]
    if "log_format" in exp:
        assert log.log_format == exp["log_format"]
    if "bar_assign_failed_bdfs" in exp:
        got = {e.bdf for e in log.with_tag("bar_assign_failed")}
        assert got == set(exp["bar_assign_failed_bdfs"])


# --- os-release, sysfs ------------------------------------------------------------------------


def _os_release(fx: Fixture, exp: dict[str, Any]) -> None:
    rel = parse_os_release(fx.text)
    inferred = infer_os_release(fx.text)
    for key, got in (("id", rel.id), ("version_id", rel.version_id),
                     ("pretty_name", rel.pretty_name), ("id_inferred", inferred.id),
                     ("version_id_inferred", inferred.version_id),
                     ("id_like", " ".join(rel.id_like))):
        if key in exp:
            assert got == (exp[key] or ""), key


def _sysfs(fx: Fixture, exp: dict[str, Any]) -> None:
    if "pp_dpm_pcie" in exp:
        assert parse_pp_dpm_pcie(fx.text) == exp["pp_dpm_pcie"]
    files = parse_link_files(fx.text)
    for want in exp.get("devices", []):
        key = want.get("path") or f"/sys/bus/pci/devices/{want['bdf']}"
        got = files[key]
        from rocmprov.parse.pci import parse_speed, parse_width
        assert parse_speed(got["current_link_speed"]) == want["current_link_speed_gts"]
        assert parse_width(got["current_link_width"]) == want["current_link_width"]
        assert parse_speed(got["max_link_speed"]) == want["max_link_speed_gts"]
        assert parse_width(got["max_link_width"]) == want["max_link_width"]
        if "downgraded" in want:
            down = (parse_width(got["current_link_width"]) or 0) < (
                parse_width(got["max_link_width"]) or 0)
            assert down == want["downgraded"]


HANDLERS = {"lspci": _lspci, "rocminfo": _rocminfo, "rocm-smi": _rocm_smi, "amd-smi": _amd_smi,
            "dmesg": _dmesg, "os-release": _os_release, "sysfs": _sysfs}
HANDLED = {
    "lspci": {"devices", "gpu_count", "bridge_count", "vram_bar_bytes", "caps_denied"},
    "rocminfo": {"agents_gpu", "agents_gpu_shown", "agents_cpu", "gfx", "marketing_names",
                 "rocm_runtime_version", "rock_module_version", "chip_ids", "bdfids",
                 "compute_units", "isa", "rock_not_loaded_line", "error"},
    "rocm-smi": {"keys", "format", "gpu_count", "cards", "vram_total_bytes", "product_names",
                 "gfx", "pci_bus", "warning"},
    "amd-smi": {"keys", "preamble_line", "shape"},
    "dmesg": {"errors", "gpu_bdfs", "ring", "log_format", "bar_assign_failed_bdfs"},
    "os-release": {"id", "version_id", "pretty_name", "id_inferred", "version_id_inferred",
                   "id_like"},
    "sysfs": {"pp_dpm_pcie", "devices"},
}


# --- the audit on each capture ----------------------------------------------------------------


def _probe_id(fx: Fixture) -> str | None:
    if fx.kind in ("lspci", "rocminfo", "dmesg", "os-release"):
        return fx.kind
    if fx.kind == "rocm-smi":
        return "rocm-smi" if load_json(fx.text) is not None or fx.expect.get("format") == "json" \
            else None
    if fx.kind == "amd-smi":
        if fx.expect.get("format") == "text":
            return None
        return "amd-smi-static" if "static" in fx.path.name else "amd-smi-metric"
    return None  # sysfs fixtures are single files, not the pci-sysfs probe's dump


# dmesg tags -> the check the dmesg check must raise
DMESG_CHECK = {
    "probe_failed_-12": ("dmesg.amdgpu.probe_enomem", "critical"),
    "probe_failed_-22": ("dmesg.amdgpu.probe_einval", "critical"),
    "fatal_gpu_init": ("dmesg.amdgpu.init", "critical"),
    "atombios_stuck": ("dmesg.amdgpu.init", "critical"),
    "not_supported_in_kfd": ("dmesg.kfd.unsupported", "critical"),
    "bar_resize_failed": ("dmesg.pci.bar", "warning"),
    "bar_assign_failed": ("dmesg.pci.bar", "warning"),
    "ring_timeout": ("dmesg.gpu.ring_timeout", "warning"),
    "ras_uncorrectable": ("dmesg.gpu.ras", "critical"),
    "ring_reset_failed": ("dmesg.gpu.hang", "critical"),
    "mes_failed": ("dmesg.gpu.hang", "critical"),
    "vram_lost": ("dmesg.gpu.hang", "critical"),
    "cp_unrecoverable_preemption_failed": ("dmesg.gpu.hang", "critical"),
    "failed_to_restore_process_queues": ("dmesg.gpu.hang", "critical"),
    "page_fault": ("dmesg.gpu.page_fault", "warning"),
    "ip_init_failed": ("dmesg.amdgpu.init", "critical"),
}


def audit_fixture(fx: Fixture) -> list[dict[str, Any]]:
    probe = _probe_id(fx)
    assert probe is not None
    bundle = Bundle(host=fx.path.stem, outputs={
        probe: ProbeOutput(id=probe, command="fixture", rc=0, stdout=fx.text)})
    report = audit_bundle(bundle, Policy())
    json.dumps([f.to_dict() for f in report.findings])  # renderable
    return [f.to_dict() for f in report.findings]


@pytest.mark.parametrize("fx", [f for f in FIXTURES if _probe_id(f)],
                         ids=[f.name for f in FIXTURES if _probe_id(f)])
def test_audit(fx: Fixture) -> None:
    findings = audit_fixture(fx)
    assert not [f for f in findings if f["check"].startswith("internal.")], findings
    wanted = list(fx.header.get("audit") or [])
    if fx.kind == "dmesg":
        for tag in fx.expect.get("errors", []):
            if tag in DMESG_CHECK:
                check, sev = DMESG_CHECK[tag]
                wanted.append({"check": check, "severity": sev})
        if not any(t in DMESG_CHECK for t in fx.expect.get("errors", [])):
            wanted.append({"check": "dmesg", "severity": "ok"})
    for want in wanted:
        hits = [f for f in findings if f["check"] == want["check"]
                and f["severity"] == want["severity"]
                and ("subject" not in want or want["subject"] in f["subject"])]
        assert hits, (want, [(f["check"], f["severity"], f["subject"]) for f in findings])
    for f in findings:
        if f["severity"] in ("warning", "critical"):
            assert f["summary"] and f["fix"] and f["ref"].startswith("https://"), f
