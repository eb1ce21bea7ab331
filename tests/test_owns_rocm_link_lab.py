"""Change only what rocmprov owns (issue 26, r15): an admin's /opt/rocm link to a ROCm it runs
from a tarball is recorded before AMD's packages take /opt/rocm over, and --tags uninstall puts
it back (the tarball's files are never touched)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.lab import Lab, LabHost
from tests.lab.amdrepo import Served
from tests.test_apply_lab import apply
from tests.test_owns_lab import inventory, sh
from tests.test_releases_lab import legacy_full

pytestmark = pytest.mark.lab


def test_admins_opt_rocm_link_is_given_back(
    lab: Lab, clean_host: LabHost, amd_mirror: Served, tmp_path: Path
) -> None:
    h = clean_host
    # a ROCm the admin unpacked under /opt/rocm-6.1.0 with an /opt/rocm link to it (the layout
    # of the review's reproduction r15); AMD's packages' own link: tests/lab/amdrepo.py
    sh(
        lab,
        h,
        "mkdir -p /opt/rocm-6.1.0/bin /opt/rocm-6.1.0/.info && echo 6.1.0-82 > "
        "/opt/rocm-6.1.0/.info/version && ln -s /opt/rocm-6.1.0 /opt/rocm",
    )
    inv = inventory(
        lab,
        tmp_path,
        h,
        {
            "rocmprov_rocm_version": str(legacy_full()["version"]),
            "rocmprov_mirrors": amd_mirror.mirrors,
            "rocmprov_torch_enabled": False,
        },
    )
    rc, doc, _ = apply(inv, tmp_path, "--tags", "repo,packages")
    assert rc == 0, json.dumps(doc["hosts"], indent=1)
    record = json.loads((h.root / "var/lib/rocmprov/opt-rocm-link.json").read_text())
    assert record == {"path": "/opt/rocm", "link": "/opt/rocm-6.1.0"}
    assert sh(lab, h, "readlink -f /opt/rocm").strip() != "/opt/rocm-6.1.0"  # AMD's packages
    rc, doc, _ = apply(inv, tmp_path, "--tags", "uninstall")
    assert rc == 0, json.dumps(doc["hosts"], indent=1)
    assert sh(lab, h, "readlink /opt/rocm").strip() == "/opt/rocm-6.1.0"
    assert (h.root / "opt/rocm-6.1.0/.info/version").read_text() == "6.1.0-82\n"
    assert not (h.root / "var/lib/rocmprov/opt-rocm-link.json").exists()
