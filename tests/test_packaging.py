"""The wheel carries what rocmprov needs at run time: playbooks, data files, the smoke script."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def test_wheel_ships_playbooks_and_data(tmp_path: Path) -> None:
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", str(REPO), "-w",
                    str(tmp_path)], check=True, capture_output=True, timeout=600)
    (wheel,) = tmp_path.glob("rocmprov-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    roles = {p.name for p in (REPO / "playbooks" / "roles").iterdir() if p.is_dir()}
    assert "rocmprov/playbooks/site.yml" in names
    assert "rocmprov/playbooks/ansible.cfg" in names
    for role in roles:
        assert f"rocmprov/playbooks/roles/{role}/tasks/main.yml" in names, role
    for data in ("kb/core.yaml", "support_matrix.yaml", "torch_rocm.yaml", "remedies.yaml",
                 "bios.yaml"):
        assert f"rocmprov/data/{data}" in names, data
    assert "rocmprov/actions/smoke.py" in names
    assert "rocmprov/report/templates/fleet.html" in names
    assert not any(n.startswith("tests/") for n in names)
