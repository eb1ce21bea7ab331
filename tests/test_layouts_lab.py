"""Issue 29's done-when on a real host: a lab host (Debian 12, systemd, sshd) with a TheRock
tarball unpacked in /opt/rocm-10.1.0 and TheRock's rocm-sdk-core wheel in a virtual environment;
`rocmprov audit` over SSH names both, with their versions and layouts.

The tree is TheRock's documented layout, ROCm/TheRock@89553ce RELEASES.md ("Installing
multi-arch tarballs": a flat /opt/rocm-like tree, the per-GPU kernel packs in .kpack/ such as
blas_lib_gfx1100.kpack; "Using multi-arch ROCm Python packages": rocm-sdk-core==7.15.0a20260630
in a venv), https://github.com/ROCm/TheRock/blob/89553ce3746eda74ade42557470d25e37c91b6f0/RELEASES.md,
with rocm-core's <prefix>/.info/version that TheRock's own test helper reads
(tests/extended_tests/utils/system/rocm_detector.py). Only files, no GPU: what the probe sees.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers import rocmprov
from tests.lab import Lab, LabHost
from tests.test_releases_lab import inventory, sh

pytestmark = pytest.mark.lab

WHEEL = "7.15.0a20260630"


def test_audit_names_a_tarball_in_opt_rocm_10_1_0_and_a_rocm_sdk_venv(
    lab: Lab, clean_host: LabHost, tmp_path: Path
) -> None:
    sh(lab, clean_host, (
        "set -e; p=/opt/rocm-10.1.0; mkdir -p $p/.info $p/.kpack $p/bin $p/lib; "
        "echo 10.1.0 > $p/.info/version; : > $p/.kpack/blas_lib_gfx1100.kpack; "
        "v=/opt/ml/.venv; mkdir -p $v/bin; "
        "py=python3.11; "  # Debian 12's python
        f"d=$v/lib/$py/site-packages/rocm_sdk_core-{WHEEL}.dist-info; mkdir -p $d; "
        "printf 'Metadata-Version: 2.1\\nName: rocm-sdk-core\\n' > $d/METADATA; "
        "c=/opt/conda/envs/sdk/lib/$py/site-packages/rocm_sdk_core-7.14.0.dist-info; "
        "mkdir -p $c; "
        "chmod -R a+rX /opt/rocm-10.1.0 /opt/ml /opt/conda"
    ))  # fmt: skip
    inv = inventory(lab, tmp_path, [(clean_host, "10.1")])
    run = rocmprov("audit", str(inv), "--format", "json")
    doc = json.loads(run.stdout)
    (host,) = doc["hosts"]
    assert host["status"] == "audited", host
    (layouts,) = [f for f in host["findings"] if f["check"] == "rocm.layouts"]
    assert "AMD ROCm Core SDK (TheRock) 10.1.0 (tarball at /opt/rocm-10.1.0)" in layouts["summary"]
    assert f"ROCm SDK wheels (TheRock, pip) {WHEEL} (pip in /opt/ml/.venv)" in layouts["summary"]
    assert host["facts"]["rocm"] == "10.1.0" and host["facts"]["rocm_source"] == "therock"
    assert host["facts"]["rocm_installs"] == [
        "AMD ROCm Core SDK (TheRock) 10.1.0",
        "ROCm SDK wheels (TheRock, pip) 7.14.0",  # a conda environment, found too
        f"ROCm SDK wheels (TheRock, pip) {WHEEL}",
    ]
