"""The driver role: the default release (TheRock 10.x) installs amdgpu-dkms from AMD's own
driver repository (repo.radeon.com/amdgpu/31.50/ubuntu, legacy key, Ubuntu codename suite;
issue 24), and a release whose table row has no amdgpu repository says so and goes on,
instead of failing on an amdgpu-dkms that no configured repository has (hostile review)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rocmprov.knowledge import releases
from tests.helpers import rocmprov
from tests.lab import Lab, LabHost
from tests.lab.amdrepo import Served
from tests.test_apply_lab import apply, kernel_headers_source
from tests.test_releases_lab import extra, inventory, sh

pytestmark = pytest.mark.lab


def test_no_amdgpu_repository_means_a_clear_skip_not_a_failure(
    lab: Lab, clean_host: LabHost, amd_mirror: Served, tmp_path: Path
) -> None:
    debian12 = {"os_family": "Debian", "distribution": "Debian", "distribution_version": "12"}
    # the newest production row the table gives no amdgpu repository for Debian 12
    row = max((r for r in releases.all_releases() if r.status == "production"
               and not releases.resolve(r.version, debian12)["error"]
               and releases.resolve(r.version, debian12)["amdgpu_url"] == ""),
              key=lambda r: releases.version_key(r.version))
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


def test_the_default_release_installs_amdgpu_dkms_from_amds_driver_repository(
    lab: Lab, clean_host: LabHost, amd_mirror: Served, tmp_path: Path
) -> None:
    row = releases.find("default")
    assert row is not None and row.stream == "therock"
    inv = inventory(lab, tmp_path, [(clean_host, row.version)])
    kernel_headers_source(lab, clean_host, tmp_path)
    rc, doc, _ = apply(inv, tmp_path, "--tags", "repo,driver", "-e", extra(amd_mirror),
                       "-e", "rocmprov_driver_force=true")  # fmt: skip
    assert rc == 0, json.dumps(doc["hosts"], indent=1)
    root = clean_host.root
    sources = (root / "etc/apt/sources.list.d/amdgpu.sources").read_text()
    # AMD's driver repository for 31.50, as amdgpu-docs writes it: amdgpu/<driver>/ubuntu,
    # the Ubuntu codename (Debian 12: jammy), signed with repo.radeon.com's key.
    assert "/repo.radeon.com/amdgpu/31.50/ubuntu" in sources, sources
    assert "Suites: jammy" in sources.splitlines(), sources
    assert "Signed-By: /etc/apt/keyrings/rocmprov-amdgpu.asc" in sources.splitlines(), sources
    rocm = (root / "etc/apt/sources.list.d/rocm.sources").read_text()
    assert "Suites: stable" in rocm.splitlines() and "rocmprov-therock.asc" in rocm
    key = (root / "etc/apt/keyrings/rocmprov-amdgpu.asc").read_text()
    assert key == amd_mirror.repos.key_text("https://repo.radeon.com/rocm/rocm.gpg.key")
    dkms = sh(lab, clean_host, "dpkg-query -W -f '${Version} ${Status}' amdgpu-dkms").stdout
    assert dkms.startswith("1:") and dkms.endswith("install ok installed"), dkms
    policy = sh(lab, clean_host, "apt-cache policy amdgpu-dkms").stdout
    assert "/repo.radeon.com/amdgpu/31.50/ubuntu jammy/main" in policy, policy
    # a second run changes nothing (the driver key is not fetched again and again)
    rc, doc, _ = apply(inv, tmp_path, "--tags", "repo,driver", "-e", extra(amd_mirror),
                       "-e", "rocmprov_driver_force=true")  # fmt: skip
    assert rc == 0 and doc["hosts"][0]["changed"] == 0, json.dumps(doc["hosts"], indent=1)
    # the audit calls the driver repository next to TheRock's neither a second release nor a
    # legacy source that wants a pin
    report = json.loads(rocmprov("audit", str(inv), "--format", "json").stdout)
    repo = [f for f in report["hosts"][0]["findings"] if f["check"].startswith("repo.")]
    assert repo and all(f["severity"] == "ok" for f in repo), repo
