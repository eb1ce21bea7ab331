"""The README's first command: `rocmprov audit` of this machine, checked against the machine."""

from __future__ import annotations

import json
import os
from pathlib import Path

import distro

from rocmprov.collect.probes import build_probes
from rocmprov.collect.sysfs import pci_sysfs_text
from rocmprov.transport.local import LocalTransport
from tests.helpers import rocmprov


def _sysfs_gpus() -> tuple[list[str], list[str]]:
    """Independent read of /sys: (AMD GPU BDFs, all GPU vendor:device)."""
    amd, gpus = [], []
    for dev in sorted(Path("/sys/bus/pci/devices").glob("*")):
        cls = (dev / "class").read_text().strip()
        if cls[2:4] not in ("03", "12"):
            continue
        vendor = (dev / "vendor").read_text().strip()[2:]
        device = (dev / "device").read_text().strip()[2:]
        gpus.append(f"{vendor}:{device}")
        if vendor == "1002":
            amd.append(dev.name)
    return amd, gpus


def test_local_audit_reports_this_machine() -> None:
    run = rocmprov("audit", "--format", "json")
    doc = json.loads(run.stdout)
    assert doc["schema"] == "rocmprov.audit/1"
    (host,) = doc["hosts"]
    facts = host["facts"]
    assert facts["kernel"] == os.uname().release
    assert facts["os"] == f"{distro.id()} {distro.version()}"
    amd, gpus = _sysfs_gpus()
    assert facts["amd_gpus"] == amd
    assert facts["gpus"] == gpus
    assert facts["rocm"] == (
        Path("/opt/rocm/.info/version").read_text().split("-")[0]
        if Path("/opt/rocm/.info/version").exists()
        else ""
    )
    present = next(f for f in host["findings"] if f["check"] == "gpu.amd.present")
    if not amd:
        # said plainly, and everything else is still reported
        assert present["severity"] == "critical"
        assert "no AMD GPU" in present["summary"]
        assert run.rc == 2
        checks = {f["check"] for f in host["findings"]}
        assert {"rocm.installed", "service.gpu-manager", "user.groups"} <= checks
    assert run.rc == doc["exit_code"]


def test_table_says_no_amd_gpu_plainly() -> None:
    amd, _ = _sysfs_gpus()
    run = rocmprov("audit")
    assert "Traceback" not in run.stderr
    if not amd:
        assert "no AMD GPU on this host" in run.stdout
        assert "overall: CRITICAL (exit 2)" in run.stdout


def test_pyudev_sysfs_equals_the_shell_probe() -> None:
    """The local pyudev path and the shell probe (used over SSH) write the same bundle file."""
    probe = next(p for p in build_probes() if p.id == "pci-sysfs")
    shell = LocalTransport().run(probe.command, timeout=30)
    assert shell.rc == 0
    assert pci_sysfs_text() == shell.stdout
    assert shell.stdout.count("bdf ") == len(list(Path("/sys/bus/pci/devices").iterdir()))


def test_missing_tools_are_recorded_not_raised(tmp_path: Path) -> None:
    out = tmp_path / "b"
    run = rocmprov("collect", "-o", str(out), env={"PATH": "/usr/bin:/bin"})
    assert run.rc == 0, run.stderr
    (bundle,) = [p for p in out.iterdir() if p.is_dir()]
    manifest = json.loads((bundle / "manifest.json").read_text())
    status = {p["id"]: p["status"] for p in manifest["probes"]}
    assert set(status) == {p.id for p in build_probes()}
    # rocminfo is not installed on the CI machine: recorded as missing, exit 127
    if not any(Path(d, "rocminfo").exists() for d in ("/usr/bin", "/bin")):
        assert status["rocminfo"] == "missing"
        entry = next(p for p in manifest["probes"] if p["id"] == "rocminfo")
        assert entry["rc"] == 127
