"""Change only what rocmprov owns (issue 26), on the session lab's clean host: an admin's apt
files are never removed or changed (r01), AMD's one-line sources are set aside with a backup
that uninstall restores, uninstall removes only the packages apply installed and works on a
distro-source host (r04, r14), and never deletes a venv apply did not create (r05)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from tests.lab import Lab, LabHost
from tests.test_apply_lab import apply

pytestmark = [pytest.mark.lab, pytest.mark.long]  # minutes in CI: scheduled first


def sh(lab: Lab, host: LabHost, cmd: str) -> str:
    return lab.exec(host, ["sh", "-c", cmd], check=False, timeout=600).stdout


def inventory(lab: Lab, tmp: Path, host: LabHost, hostvars: dict[str, object]) -> Path:
    text = lab.inventory.read_text()
    d = tmp / f"inv-{time.monotonic_ns()}"
    (d / "host_vars").mkdir(parents=True)
    (d / "host_vars" / f"{host.name}.yml").write_text(json.dumps(hostvars) + "\n")
    inv = d / "hosts.ini"
    inv.write_text(
        f"[lab]\n{host.name} ansible_host={host.address}\n\n" + text[text.index("[lab:vars]") :]
    )
    return inv


def test_distro_host_keeps_admin_apt_files_and_preinstalled_packages(
    lab: Lab, clean_host: LabHost, tmp_path: Path
) -> None:
    h = clean_host
    admin = {
        "etc/apt/sources.list.d/rocm.list": "# corp\n# deb http://corp.invalid/rocm x main\n",
        "etc/apt/sources.list.d/graphics.list": "# another vendor\n",
        "etc/apt/trusted.gpg.d/rocm.gpg": "not really a key\n",
        "etc/apt/keyrings/rocm.asc": "the admin's key\n",
    }
    amd_line = ("deb [signed-by=/etc/apt/keyrings/rocm.gpg] "
                "https://repo.radeon.com/amdgpu/6.4/ubuntu jammy main\n")
    for path, text in {**admin, "etc/apt/sources.list.d/amdgpu.list": amd_line}.items():
        (h.root / path).parent.mkdir(parents=True, exist_ok=True)
        (h.root / path).write_text(text)
    assert "ii" in sh(
        lab,
        h,
        "apt-get update -o Dir::Etc::sourcelist=/etc/apt/sources.list "
        "-o Dir::Etc::sourceparts=- >/dev/null 2>&1; apt-get install -y lm-sensors "
        ">/dev/null 2>&1; dpkg-query -W -f '${db:Status-Abbrev}' lm-sensors",
    )
    before = sh(lab, h, "dpkg-query -W -f '${Package} ${Version}\\n' | sort")
    inv = inventory(
        lab,
        tmp_path,
        h,
        {
            "rocmprov_repo_source": "distro",
            "rocmprov_packages_distro": ["rocminfo"],
            "rocmprov_packages_extra": ["lm-sensors"],
            "rocmprov_torch_enabled": False,
        },
    )
    # AMD's amdgpu.list names repo.radeon.com: set aside (apt update would fail on it offline)
    rc, doc, _ = apply(inv, tmp_path, "--tags", "repo,packages")
    assert rc == 0, json.dumps(doc["hosts"], indent=1)
    for path, text in admin.items():
        assert (h.root / path).read_text() == text, f"{path} changed by apply"
    assert not (h.root / "etc/apt/sources.list.d/amdgpu.list").exists()
    assert "rocminfo" in sh(lab, h, "dpkg-query -W rocminfo")
    assert sh(lab, h, "stat -c %a /var/lib/rocmprov").strip() == "700"

    rc, doc, _ = apply(inv, tmp_path, "--tags", "uninstall")
    assert rc == 0, json.dumps(doc["hosts"], indent=1)
    for path, text in admin.items():
        assert (h.root / path).read_text() == text, f"{path} changed by uninstall"
    assert (h.root / "etc/apt/sources.list.d/amdgpu.list").read_text() == amd_line
    after = sh(lab, h, "dpkg-query -W -f '${Package} ${Version}\\n' | sort")
    assert after == before, "uninstall did not leave the package list as it was"


def test_uninstall_keeps_a_venv_apply_did_not_create(
    lab: Lab, clean_host: LabHost, tmp_path: Path
) -> None:
    h = clean_host
    sh(
        lab,
        h,
        "apt-get update >/dev/null 2>&1; apt-get install -y python3-venv >/dev/null 2>&1; "
        "python3 -m venv /opt/ml && mkdir -p /opt/ml/runs && echo 1 > /opt/ml/runs/results.csv",
    )
    inv = inventory(lab, tmp_path, h, {"rocmprov_torch_venv": "/opt/ml"})
    rc, doc, _ = apply(inv, tmp_path, "--tags", "uninstall")
    assert rc == 0, json.dumps(doc["hosts"], indent=1)
    assert (h.root / "opt/ml/runs/results.csv").exists(), "uninstall deleted the admin's venv"
    assert (h.root / "opt/ml/bin/python").exists()
