"""The driver role on a release whose table row has no amdgpu repository (TheRock: AMD ships
the driver through its separate driver docs): apply says so and goes on, instead of failing
on an amdgpu-dkms that no configured repository has (found by the hostile review)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rocmprov import releases
from tests.lab import Lab, LabHost
from tests.lab.amdrepo import Served
from tests.test_apply_lab import apply
from tests.test_releases_lab import extra, inventory, sh

pytestmark = pytest.mark.lab


def test_no_amdgpu_repository_means_a_clear_skip_not_a_failure(
    lab: Lab, clean_host: LabHost, amd_mirror: Served, tmp_path: Path
) -> None:
    row = releases.find("latest")
    assert row is not None and row.stream == "therock"
    assert releases.resolve(row.version, {"os_family": "Debian", "distribution": "Debian",
                            "distribution_version": "12"})["amdgpu_url"] == ""  # fmt: skip
    inv = inventory(lab, tmp_path, [(clean_host, row.version)])
    rc, doc, _ = apply(inv, tmp_path, "--tags", "repo,driver", "-e", extra(amd_mirror),
                       "-e", "rocmprov_driver_force=true")  # fmt: skip
    assert rc == 0, json.dumps(doc["hosts"], indent=1)
    (host,) = doc["hosts"]
    assert host["status"] in ("ok", "changed") and host["failed_task"] is None
    dkms = sh(lab, clean_host, "dpkg-query -W amdgpu-dkms 2>&1 || true").stdout
    assert "no packages found" in dkms  # nothing installed, nothing failed
    stdout = "".join(p.read_text() for p in Path(doc["run_dir"]).rglob("stdout"))
    assert "is in no configured repository" in stdout
