"""A bundle collected by rocmprov on a real GPU server (an NVIDIA H200 VM), audited here."""

from __future__ import annotations

import json
from pathlib import Path

from rocmprov.audit.host import audit_bundle
from rocmprov.collect.bundle import read_bundle
from rocmprov.facts.host import build_facts
from rocmprov.model import Severity
from tests.helpers import rocmprov

H200 = Path(__file__).parent / "data" / "h200-vm-bundle.tar.gz"


def test_h200_facts_from_real_sysfs() -> None:
    facts = build_facts(read_bundle(H200))
    assert facts.pci_source == "sysfs"
    (gpu,) = [d for d in facts.pci or () if d.is_gpu]
    assert (gpu.vendor_id, gpu.device_id) == ("10de", "2335")
    assert gpu.parent == ""  # directly on the root bus, no bridge above it
    assert gpu.link_sta.speed_gts == 32.0 and gpu.link_sta.width == 16
    assert max(b.size for b in gpu.bars if b.prefetchable) == 256 << 30  # 256 GiB BAR
    assert facts.os is not None and (facts.os.id, facts.os.version_id) == ("ubuntu", "24.04")
    assert facts.torch is not None and facts.torch.version == "2.11.0+cu130"
    assert facts.probe_status["lspci"] == "missing"


def test_h200_audit_says_no_amd_gpu_and_what_it_found() -> None:
    report = audit_bundle(read_bundle(H200))
    present = next(f for f in report.findings if f.check == "gpu.amd.present")
    assert present.severity is Severity.CRITICAL
    assert "no AMD GPU" in present.summary
    assert "found NVIDIA H200 at 32 GT/s x16" in present.summary
    # GPU-specific checks do not apply, and a CUDA torch is not a ROCm problem there
    by_check = {f.check: f for f in report.findings}
    assert by_check["pcie.link.width"].severity is Severity.SKIPPED
    assert by_check["torch.rocm"].severity is Severity.OK


def test_h200_bundle_through_the_cli() -> None:
    run = rocmprov("audit", "--bundle", str(H200), "--format", "json")
    assert run.rc == 2
    doc = json.loads(run.stdout)
    assert doc["hosts"][0]["facts"]["gpus"] == ["10de:2335"]
