"""Issue 26, seen on the way (no review script): `--tags torch` alone works on a host without
python3-setuptools (Ansible's pip module needs it), and `rocmprov_gpu_users=alice` as a plain
string in an INI inventory adds alice (not the letters a, l, i, c, e)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.lab import Lab, LabHost
from tests.test_apply_lab import apply, legacy_row, torch_wheels
from tests.test_owns_lab import inventory, sh

pytestmark = pytest.mark.lab
__all__ = ["torch_wheels"]  # the fixture, used by name


def test_tags_torch_alone_on_a_host_without_setuptools(
    lab: Lab, clean_host: LabHost, torch_wheels: str, tmp_path: Path
) -> None:
    h = clean_host
    assert "ii" not in sh(lab, h, "dpkg-query -W -f '${db:Status-Abbrev}' python3-setuptools")
    inv = inventory(
        lab,
        tmp_path,
        h,
        {
            "rocmprov_rocm_version": str(legacy_row()["version"]),
            "rocmprov_torch_wheel_dir": torch_wheels,
        },
    )
    rc, doc, _ = apply(inv, tmp_path, "--tags", "torch")
    assert rc == 0, json.dumps(doc["hosts"], indent=1)
    assert (h.root / "opt/rocmprov/torch-venv/.rocmprov-created").exists()
    rc, doc, _ = apply(inv, tmp_path, "--tags", "uninstall")
    assert rc == 0, json.dumps(doc["hosts"], indent=1)
    assert not (h.root / "opt/rocmprov").exists()
    assert "ii" not in sh(lab, h, "dpkg-query -W -f '${db:Status-Abbrev}' python3-setuptools")


def test_a_plain_string_of_gpu_users_in_an_ini_inventory(
    lab: Lab, clean_host: LabHost, tmp_path: Path
) -> None:
    h = clean_host
    sh(lab, h, "useradd -m alice")
    inv = inventory(lab, tmp_path, h, {})
    text = inv.read_text().replace(
        f"{h.name} ansible_host=", f"{h.name} rocmprov_gpu_users=alice ansible_host="
    )
    inv.write_text(text)
    rc, doc, _ = apply(inv, tmp_path, "--tags", "users")
    assert rc == 0, json.dumps(doc["hosts"], indent=1)
    assert {"render", "video"} <= set(sh(lab, h, "id -nG alice").split())
