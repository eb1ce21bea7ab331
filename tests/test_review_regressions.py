"""Regressions found by a hostile second read of issues 12 and 13, each reproduced first."""

from __future__ import annotations

import dataclasses
import gzip
import io
import os
import tarfile
from pathlib import Path

import pytest

from rocmprov.audit.host import audit_bundle
from rocmprov.checks.policy import Policy
from rocmprov.collect.bundle import Bundle, ProbeOutput, read_bundle, write_bundle
from rocmprov.collect.probes import build_probes
from rocmprov.exitcodes import InputError
from rocmprov.knowledge import releases
from tests.growth import assert_linear

REAL = Path(__file__).parent / "data" / "h200-vm-bundle-2026-12-01.tar.gz"
UBUNTU = {"os_family": "Debian", "distribution": "Ubuntu", "distribution_version": "24.04"}


def test_the_manifest_command_field_is_scrubbed(tmp_path: Path) -> None:
    probe = next(
        p for p in build_probes(python="/home/alice/venvs/t/bin/python") if p.id == "torch"
    )
    bundle = Bundle("h", {"torch": ProbeOutput("torch", probe.command, 0, "{}")})
    out = write_bundle(bundle, tmp_path)
    manifest = (out / "manifest.json").read_text()
    assert "/home/USER/venvs" in manifest and "alice" not in manifest


def test_apt_ignores_save_and_dist_upgrade_copies_so_does_the_audit() -> None:
    base = read_bundle(REAL)
    source = (
        "deb [arch=amd64 signed-by=/etc/apt/keyrings/rocm.gpg] "
        "https://repo.radeon.com/rocm/apt/6.4.1 noble main"
    )
    text = "".join(
        f"== file /etc/apt/sources.list.d/{name}\n{source}\n"
        for name in ("rocm.list", "rocm.list.save", "rocm.list.distUpgrade")
    )
    outputs = {**base.outputs, "apt-rocm": ProbeOutput("apt-rocm", "t", 0, text)}
    report = audit_bundle(dataclasses.replace(base, outputs=outputs), Policy())
    by = {f.check: f for f in report.findings}
    assert "configured in" not in by["repo.sources"].summary
    # one real file naming a keyring that is absent is still found
    assert by["repo.key"].summary == "a source names a keyring that is not there"
    assert by["repo.key"].actual == "/etc/apt/keyrings/rocm.gpg"


def test_the_10x_driver_repository_next_to_therock_is_one_release_and_needs_no_pin() -> None:
    """Issue 24: TheRock 10.x takes amdgpu-dkms from AMD's driver repository on
    repo.radeon.com; the audit must not call that a second (legacy) release nor want a pin."""
    base = read_bundle(REAL)
    # AMD's own lines: the 10.0 install page (amdrocm-stable.sources) and the amdgpu-docs
    # Ubuntu template filled for 31.50 / noble (amdgpu.list)
    text = (
        "== file /etc/apt/sources.list.d/amdrocm-stable.sources\n"
        "X-Repo-Id: amdrocm-stable\nTypes: deb\n"
        "URIs: https://stable.repo.amd.com/rocm/core/packages/ubuntu2404/\n"
        "Suites: stable\nComponents: main\nArchitectures: amd64\n"
        "Signed-By: /etc/apt/keyrings/amdrocm.gpg\nEnabled: yes\n"
        "== file /etc/apt/sources.list.d/amdgpu.list\n"
        "deb [arch=amd64 signed-by=/etc/apt/keyrings/rocm.gpg] "
        "https://repo.radeon.com/amdgpu/31.50/ubuntu noble main\n"
    )
    outputs = {**base.outputs, "apt-rocm": ProbeOutput("apt-rocm", "t", 0, text)}
    report = audit_bundle(dataclasses.replace(base, outputs=outputs), Policy())
    found = [f for f in report.findings if f.check in ("repo.sources", "repo.pin")]
    assert not any("more than one ROCm release" in f.summary for f in found), found
    assert not any(f.check == "repo.pin" for f in found), found
    # a legacy rocm/apt source next to TheRock's is still two releases
    legacy = text.replace("amdgpu/31.50/ubuntu", "rocm/apt/7.2.1")
    outputs = {**base.outputs, "apt-rocm": ProbeOutput("apt-rocm", "t", 0, legacy)}
    report = audit_bundle(dataclasses.replace(base, outputs=outputs), Policy())
    assert any("more than one ROCm release" in f.summary for f in report.findings
               if f.check == "repo.sources")


def test_a_tarball_bigger_than_anything_it_may_hold_is_refused_at_once(tmp_path: Path) -> None:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        data = b'{"schema": "rocmprov.bundle/1", "host": "h", "probes": []}'
        info = tarfile.TarInfo("h/manifest.json")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    def padded(mib: int) -> Path:  # sparse zero padding: 0 bytes on disk, `mib` MiB long
        path = tmp_path / f"h{mib}.tar.gz"
        path.write_bytes(gzip.compress(buf.getvalue()))
        with path.open("r+b") as f:
            f.truncate(mib * 1024 * 1024)
        return path

    def refused(path: Path) -> None:
        with pytest.raises(InputError, match="larger than 72 MiB"):
            read_bundle(path)

    # at once: 4x the padding (80 -> 320 MiB) costs about the same, not 4x (read through)
    assert_linear(padded, refused, 80, bound=2.0)
    for path in tmp_path.glob("h*.tar.gz"):
        os.unlink(path)


def test_a_major_picks_its_newest_production_release_not_an_unconfirmed_one() -> None:
    row = releases.find("10")
    assert row is not None and row.status == "production"
    assert releases.resolve("10", UBUNTU)["error"] == ""


def test_a_version_that_yaml_made_a_number_is_refused() -> None:
    assert "quote it" in releases.resolve(7.10, UBUNTU)["error"]


def test_mirror_credentials_in_extra_vars_are_scrubbed_from_run_records() -> None:
    from rocmprov.provision.record import Scrubber

    token = "glpat-0123456789abcdefghij"
    mirrors = {"rocmprov_mirrors": {"https://repo.radeon.com": f"https://ci:{token}@m.corp/r"}}
    scrubber = Scrubber.for_run(mirrors, {})
    line = f"URIs: https://ci:{token}@m.corp/r/rocm/apt/7.2.1"
    assert token not in scrubber.text(line)
    assert "m.corp/r/rocm/apt/7.2.1" in scrubber.text(line)
