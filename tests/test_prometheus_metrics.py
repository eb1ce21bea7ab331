"""Prometheus output: per-GPU metrics from amd-smi of both eras, the textfile written atomically,
parsed by prometheus_client and served by the real node_exporter; the shipped rules and
dashboard use only names the renderer writes. And the quick profile (`--profile quick`)."""

from __future__ import annotations

import json
import os
import shutil
import socket
import stat
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest
import yaml
from helpers import assert_one_line_error, rocmprov
from prometheus_client.parser import text_string_to_metric_families

from rocmprov.audit.host import audit_bundle
from rocmprov.collect.bundle import Bundle, ProbeOutput
from rocmprov.collect.cursor import Cursor, cursor_after, lines_since, load_cursor, save_cursor
from rocmprov.collect.probes import PROFILE_SKIPPED, build_probes, for_profile
from rocmprov.model import AuditResult, Severity
from rocmprov.parse.smi import parse_amd_smi_metric
from rocmprov.report import prometheus

REPO = Path(__file__).resolve().parent.parent
H200_BUNDLE = REPO / "tests" / "data" / "h200-vm-bundle-2026-12-01.tar.gz"
RULES = REPO / "docs" / "prometheus" / "rocmprov-rules.yml"
DASHBOARD = REPO / "docs" / "prometheus" / "rocmprov-dashboard.json"
NODE_EXPORTER = Path("/usr/bin/prometheus-node-exporter")

# amd-smi metric --json shapes (key names as amd-smi 6.x prints them; values made up): a GPU
# with every reading, and one where the tool says N/A. ROCm 7.x wraps the list in gpu_data.
_GPU0 = {
    "gpu": 0,
    "usage": {"gfx_activity": {"value": 42, "unit": "%"}},
    "power": {"socket_power": {"value": 151, "unit": "W"}, "gfx_voltage": "N/A"},
    "temperature": {
        "edge": "N/A",
        "hotspot": {"value": 48, "unit": "C"},
        "mem": {"value": 41, "unit": "C"},
    },
    "ecc": {"total_correctable_count": 3, "total_uncorrectable_count": 0},
    "mem_usage": {
        "total_vram": {"value": 196592, "unit": "MB"},
        "used_vram": {"value": 283, "unit": "MB"},
    },
}
_GPU1 = {"gpu": 1, "usage": "N/A", "power": "N/A", "temperature": {"edge": "N/A"}, "ecc": "N/A"}
METRIC_6X = json.dumps([_GPU0, _GPU1], indent=4)
METRIC_7X = "'CTRL' + 'C' to stop watching output:\n" + json.dumps({"gpu_data": [_GPU0, _GPU1]})
STATIC = json.dumps(
    [
        {"gpu": 0, "bus": {"bdf": "0000:c1:00.0"}, "asic": {"market_name": "MI300X"}},
        {"gpu": 1, "bus": {"bdf": "0000:c2:00.0"}, "asic": {"market_name": "MI300X"}},
    ]
)
# pci-sysfs of two GPUs: the first behind the card's own AMD switch (its slot link is x8 at
# 16 GT/s, the endpoint reports x16 at 32 GT/s), the second straight on the root port.
_DEV = "/sys/devices/pci0000:c0"
PCI_SYSFS = f"""bdf 0000:c0:01.1
path {_DEV}/0000:c0:01.1
vendor 0x1022
class 0x060400
current_link_speed 16.0 GT/s PCIe
current_link_width 8

bdf 0000:c0:02.0
path {_DEV}/0000:c0:01.1/0000:c0:02.0
vendor 0x1002
device 0x14a0
class 0x060400
current_link_speed 16.0 GT/s PCIe
current_link_width 8
max_link_speed 32.0 GT/s PCIe
max_link_width 16

bdf 0000:c1:00.0
path {_DEV}/0000:c0:01.1/0000:c0:02.0/0000:c1:00.0
vendor 0x1002
device 0x74a1
class 0x120000
current_link_speed 32.0 GT/s PCIe
current_link_width 16
max_link_speed 32.0 GT/s PCIe
max_link_width 16

bdf 0000:c2:00.0
path {_DEV}/0000:c0:01.2/0000:c2:00.0
vendor 0x1002
device 0x74a1
class 0x120000
current_link_speed 32.0 GT/s PCIe
current_link_width 16
max_link_speed 32.0 GT/s PCIe
max_link_width 16
"""


def _bundle(metric: str, extra_meta: dict | None = None, **more: str) -> Bundle:
    outputs = {"amd-smi-metric": metric, "amd-smi-static": STATIC, "pci-sysfs": PCI_SYSFS, **more}
    return Bundle(
        "gpu-node",
        {
            k.replace("_", "-"): ProbeOutput(k.replace("_", "-"), "", 0, v)
            for k, v in outputs.items()
        },
        dict(extra_meta or {}),
    )


def _families(text: str) -> dict:
    return {f.name: f for f in text_string_to_metric_families(text)}


def _samples(text: str, name: str) -> dict[tuple, float]:
    return {
        tuple(sorted(s.labels.items())): s.value
        for f in text_string_to_metric_families(text)
        for s in f.samples
        if s.name == name
    }


@pytest.mark.parametrize("text", [METRIC_6X, METRIC_7X], ids=["rocm6-list", "rocm7-gpu_data"])
def test_amd_smi_metric_both_eras(text: str) -> None:
    first, second = parse_amd_smi_metric(text)
    assert first.temperatures_celsius == (("hotspot", 48.0), ("mem", 41.0))
    assert first.power_watts == 151.0
    assert first.vram_total_bytes == 196592 << 20 and first.vram_used_bytes == 283 << 20
    assert (first.ecc_correctable, first.ecc_uncorrectable) == (3, 0)
    assert second.index == 1 and second.temperatures_celsius == ()
    assert second.power_watts is None and second.ecc_correctable is None


def test_amd_smi_metric_garbage_gives_nothing() -> None:
    assert parse_amd_smi_metric("") == []
    assert parse_amd_smi_metric('[1, 2, {"gpu": "x", "power": {"socket_power": "hot"}}]') == [
        parse_amd_smi_metric('[{"gpu": 0}]')[0]
    ]
    bad_unit = json.dumps([{"gpu": 0, "temperature": {"edge": {"value": 300, "unit": "K"}}}])
    assert parse_amd_smi_metric(bad_unit)[0].temperatures_celsius == ()


@pytest.mark.parametrize("text", [METRIC_6X, METRIC_7X], ids=["rocm6-list", "rocm7-gpu_data"])
def test_gpu_gauges_parse_with_prometheus_client(text: str) -> None:
    out = prometheus.render(AuditResult((audit_bundle(_bundle(text)),)), timestamp=1.0)
    fams = _families(out)
    assert set(fams) <= {n.removesuffix("_total") for n in prometheus.METRIC_NAMES}
    gpu0 = (("bdf", "0000:c1:00.0"), ("gpu", "0"), ("host", "gpu-node"))
    gpu1 = (("bdf", "0000:c2:00.0"), ("gpu", "1"), ("host", "gpu-node"))
    temps = _samples(out, "rocmprov_gpu_temperature_celsius")
    assert temps == {
        (*gpu0[:2], ("host", "gpu-node"), ("sensor", "hotspot")): 48.0,
        (*gpu0[:2], ("host", "gpu-node"), ("sensor", "mem")): 41.0,
    }
    assert _samples(out, "rocmprov_gpu_power_watts") == {gpu0: 151.0}  # N/A is left out
    assert _samples(out, "rocmprov_gpu_vram_total_bytes") == {gpu0: float(196592 << 20)}
    assert _samples(out, "rocmprov_gpu_vram_used_bytes") == {gpu0: float(283 << 20)}
    assert fams["rocmprov_gpu_ecc_correctable_errors"].type == "counter"
    assert _samples(out, "rocmprov_gpu_ecc_correctable_errors_total") == {gpu0: 3.0}
    assert _samples(out, "rocmprov_gpu_ecc_uncorrectable_errors_total") == {gpu0: 0.0}
    # the slot's link (the card's upstream switch port), not the endpoint's link to it
    assert _samples(out, "rocmprov_gpu_pcie_link_width") == {gpu0: 8.0, gpu1: 16.0}
    assert _samples(out, "rocmprov_gpu_pcie_link_speed_transfers_per_second") == {
        gpu0: 16e9,
        gpu1: 32e9,
    }
    assert _samples(out, "rocmprov_gpu_pcie_link_max_width") == {gpu0: 16.0, gpu1: 16.0}
    # the existing names stay
    assert {"rocmprov_host_status", "rocmprov_check_status", "rocmprov_host_audited"} <= set(fams)


def test_no_gpu_readings_no_gpu_metrics() -> None:
    out = prometheus.render(AuditResult((audit_bundle(Bundle("bare", {})),)))
    assert not [n for n in _families(out) if n.startswith("rocmprov_gpu_")]
    assert _samples(out, "rocmprov_host_status") == {(("host", "bare"),): 3.0}


def test_output_file_written_atomically_for_every_format(tmp_path: Path) -> None:
    target = tmp_path / "rocmprov.prom"
    victim = tmp_path / "victim"
    victim.write_text("keep me\n")
    target.symlink_to(victim)  # a link at FILE is replaced, never followed
    run = rocmprov(
        "audit", "--bundle", str(H200_BUNDLE), "--format", "prometheus", "--output", str(target)
    )
    assert run.rc in (0, 1, 2), run.stderr
    assert run.stdout == ""
    assert victim.read_text() == "keep me\n"
    st = os.lstat(target)
    assert stat.S_ISREG(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o644
    assert "rocmprov_host_status" in _families(target.read_text())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rocmprov.prom", "victim"]  # no temp
    for fmt in ("json", "junit", "table"):
        out = tmp_path / f"report.{fmt}"
        again = rocmprov(
            "audit", "--bundle", str(H200_BUNDLE), "--format", fmt, "--output", str(out)
        )
        assert again.rc == run.rc and again.stdout == "" and out.stat().st_size > 0
    assert json.loads((tmp_path / "report.json").read_text())["schema"] == "rocmprov.audit/1"


@pytest.mark.parametrize("where", ["missing-dir/x.prom", "."])
def test_bad_output_is_one_line_and_64(tmp_path: Path, where: str) -> None:
    run = rocmprov("audit", "--bundle", str(H200_BUNDLE), "--output", str(tmp_path / where))
    assert run.rc == 64
    assert_one_line_error(run)


def test_bad_profile_is_one_line_and_64() -> None:
    for args in (("--profile", "fast"), ("--bundle", str(H200_BUNDLE), "--profile", "quick")):
        run = rocmprov("audit", *args)
        assert run.rc == 64
        assert_one_line_error(run)


# ---- the quick profile


def test_quick_profile_leaves_out_the_slow_probes() -> None:
    probes = build_probes()
    kept, left_out = for_profile(probes, "quick")
    assert {"torch", "rocminfo", "rocm-smi", "amd-smi-static", "amd-smi-metric"} <= set(left_out)
    # every probe left out starts a GPU runtime or an SMI CLI (more probes of that kind may come),
    # or walks users' homes (rocm-venvs: /home is often NFS)
    for p in probes:
        if p.id in left_out:
            assert p.id in ("torch", "rocm-venvs") or any(
                t in p.command for t in ("amd-smi ", "rocm-smi ", "rocminfo")
            ), p.id
    assert {p.id for p in kept} | set(left_out) == {p.id for p in probes}
    assert "dmesg" in {p.id for p in kept}
    assert for_profile(probes, "full") == (probes, ())


def test_checks_of_left_out_probes_say_skipped_not_unknown() -> None:
    left_out = ["torch", "rocminfo", "rocm-smi", "amd-smi-static", "amd-smi-metric"]
    full = audit_bundle(Bundle("n", {"pci-sysfs": ProbeOutput("pci-sysfs", "", 0, PCI_SYSFS)}))
    quick = audit_bundle(
        Bundle(
            "n",
            {"pci-sysfs": ProbeOutput("pci-sysfs", "", 0, PCI_SYSFS)},
            {"profile": "quick", "profile_skipped": left_out},
        )
    )
    by = {f.check: f for f in quick.findings}
    assert {f.check: f.severity for f in full.findings}["torch.rocm"] is Severity.UNKNOWN
    assert {f.check: f.severity for f in full.findings}["gpu.gfx"] is Severity.UNKNOWN
    for check in ("torch.rocm", "gpu.gfx"):
        assert by[check].severity is Severity.SKIPPED and by[check].summary == PROFILE_SKIPPED
    # the other checks still judge what the quick probes saw
    assert any(
        c.startswith("pcie.link") and f.severity is not Severity.SKIPPED for c, f in by.items()
    )


def test_dmesg_since_cursor() -> None:
    log = "[ 1.0] a\n[ 2.0] amdgpu: fault\n[ 3.0] c\n"
    boot = "b1"
    assert lines_since(log, None, boot) == log  # first run: whole log
    cur = cursor_after(log, boot)
    assert cur == Cursor("b1", "[ 3.0] c")
    assert lines_since(log + "[ 4.0] d\n", cur, boot) == "[ 4.0] d\n"
    assert lines_since(log, cur, boot) == ""
    assert lines_since(log, cur, "b2") == log  # another boot
    assert lines_since("[ 9.0] z\n", cur, boot) == "[ 9.0] z\n"  # rotated out: all is new


def test_cursor_file_private_and_not_through_links(tmp_path: Path) -> None:
    state = tmp_path / "state" / "rocmprov"
    save_cursor("metrics", Cursor("b", "[ 1.0] x", ("amdgpu: x",)), state)
    assert stat.S_IMODE(state.stat().st_mode) == 0o700
    assert stat.S_IMODE((state / "dmesg-cursor.metrics").stat().st_mode) == 0o600
    assert load_cursor("metrics", state) == Cursor("b", "[ 1.0] x", ("amdgpu: x",))
    assert load_cursor("health", state) is None  # each consumer its own
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    linked = tmp_path / "linked"
    linked.symlink_to(elsewhere)
    with pytest.raises(OSError):
        save_cursor("metrics", Cursor("b", "y"), linked)
    assert list(elsewhere.iterdir()) == []
    (state / "dmesg-cursor.metrics").unlink()
    (state / "dmesg-cursor.metrics").symlink_to(tmp_path / "state" / "nothing")
    assert load_cursor("metrics", state) is None  # a link is not a cursor: read the whole log
    with pytest.raises(ValueError):
        save_cursor("../x", Cursor("b", "y"), state)


def test_quick_local_audit_runs_and_keeps_a_cursor(tmp_path: Path) -> None:
    env = {"ROCMPROV_STATE_DIR": str(tmp_path / "st")}
    run = rocmprov(
        "audit", "--local", "--profile", "quick", "--format", "json", "--state", "metrics", env=env
    )
    assert run.rc in (0, 1, 2, 3), run.stderr
    host = json.loads(run.stdout)["hosts"][0]
    torch = [f for f in host["findings"] if f["check"] == "torch.rocm"]
    assert torch and torch[0]["severity"] == "skipped"
    assert all(f["severity"] != "unknown" or f["check"] != "gpu.gfx" for f in host["findings"])
    cursor = tmp_path / "st" / "dmesg-cursor.metrics"
    # the kernel log's verdict (`dmesg`, or `dmesg.<family>` for what this machine's log holds)
    kernel = [f for f in host["findings"] if f["check"].split(".")[0] == "dmesg"]
    assert kernel, host["findings"]
    if all(f["severity"] != "unknown" for f in kernel):  # readable: a cursor was kept
        assert stat.S_IMODE(cursor.stat().st_mode) == 0o600
        assert stat.S_IMODE(cursor.parent.stat().st_mode) == 0o700


# ---- the real node_exporter, promtool, the dashboard


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.skipif(not NODE_EXPORTER.exists(), reason="prometheus-node-exporter not installed")
def test_node_exporter_serves_the_textfile(tmp_path: Path) -> None:
    textdir = tmp_path / "textfile"
    textdir.mkdir()
    run = rocmprov(
        "audit",
        "--bundle",
        str(H200_BUNDLE),
        "--format",
        "prometheus",
        "--output",
        str(textdir / "rocmprov.prom"),
    )
    assert run.rc in (0, 1, 2), run.stderr
    port = _free_port()
    proc = subprocess.Popen(
        [
            str(NODE_EXPORTER),
            f"--web.listen-address=127.0.0.1:{port}",
            f"--collector.textfile.directory={textdir}",
            "--collector.disable-defaults",
            "--collector.textfile",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        body = ""
        for _ in range(100):  # bounded: about 10 s
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=2) as r:
                    body = r.read().decode()
                break
            except OSError:
                if proc.poll() is not None:
                    break
                time.sleep(0.1)
        assert body, proc.stderr.read().decode() if proc.poll() is not None else "no answer"
    finally:
        proc.kill()
        proc.wait(timeout=10)
    fams = _families(body)
    assert "rocmprov_host_status" in fams and "rocmprov_check_status" in fams
    # node_exporter read the file without complaint
    errors = [s for s in fams["node_textfile_scrape_error"].samples]
    assert errors and errors[0].value == 0.0
    host = _samples(body, "rocmprov_host_status")
    assert len(host) == 1 and next(iter(host.values())) == float(run.rc)
    checks = _samples(body, "rocmprov_check_status")
    assert any(dict(k)["check"] == "gpu.amd.present" for k in checks)


def test_rules_are_valid(tmp_path: Path) -> None:
    doc = yaml.safe_load(RULES.read_text())
    rules = [r for g in doc["groups"] for r in g["rules"]]
    assert rules and all(r.get("alert") and r.get("expr") for r in rules)
    used = {n for r in rules for n in _names(r["expr"])}
    assert used and used <= set(prometheus.METRIC_NAMES), used - set(prometheus.METRIC_NAMES)
    promtool = shutil.which("promtool")
    if promtool is None:
        pytest.skip("promtool (Debian package prometheus) not installed")
    res = subprocess.run(
        [promtool, "check", "rules", str(RULES)], capture_output=True, text=True, timeout=60
    )
    assert res.returncode == 0, res.stdout + res.stderr


def test_dashboard_uses_only_rendered_names() -> None:
    doc = json.loads(DASHBOARD.read_text())
    exprs = [t["expr"] for p in doc["panels"] for t in p.get("targets", ())]
    assert exprs
    used = {n for e in exprs for n in _names(e)}
    assert used and used <= set(prometheus.METRIC_NAMES), used - set(prometheus.METRIC_NAMES)


def _names(expr: str) -> set[str]:
    import re

    return set(re.findall(r"\brocmprov_[a-z0-9_]+", expr))
