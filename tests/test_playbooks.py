"""The playbooks themselves: ansible-lint (production profile), syntax, role conventions."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
PLAYBOOKS = ROOT / "playbooks"
ROLES = sorted(p for p in (PLAYBOOKS / "roles").iterdir() if p.is_dir())
BIN = Path(sys.executable).parent


def tool(name: str) -> str:
    found = BIN / name if (BIN / name).exists() else shutil.which(name)
    if not found:
        pytest.skip(f"{name} not installed (pip install ansible-lint)")
    return str(found)


def test_ansible_lint_production_profile_passes() -> None:
    cp = subprocess.run(
        [tool("ansible-lint"), "--profile", "production", "--strict", "--nocolor"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert cp.returncode == 0, cp.stdout[-4000:] + cp.stderr[-4000:]


def test_lint_config_has_no_skip_list() -> None:
    cfg = yaml.safe_load((ROOT / ".ansible-lint").read_text())
    assert cfg["profile"] == "production"
    assert not cfg.get("skip_list") and not cfg.get("warn_list")


def test_site_yml_syntax(tmp_path: Path) -> None:
    inv = tmp_path / "inv.ini"
    inv.write_text("h1 ansible_host=192.0.2.1\n")
    cp = subprocess.run(
        [tool("ansible-playbook"), "-i", str(inv), "--syntax-check", "site.yml"],
        cwd=PLAYBOOKS,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert cp.returncode == 0, cp.stdout + cp.stderr


def test_role_tags_list_every_role_and_firmware_flash_is_never_by_default(tmp_path: Path) -> None:
    inv = tmp_path / "inv.ini"
    inv.write_text("h1 ansible_host=192.0.2.1\n")
    cp = subprocess.run(
        [tool("ansible-playbook"), "-i", str(inv), "--list-tasks", "site.yml"],
        cwd=PLAYBOOKS,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert cp.returncode == 0, cp.stderr
    assert "Flash the firmware updates" not in cp.stdout
    cp = subprocess.run(
        [
            tool("ansible-playbook"),
            "-i",
            str(inv),
            "--list-tasks",
            "--tags",
            "rocmprov_firmware",
            "site.yml",
        ],
        cwd=PLAYBOOKS,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert "Flash the firmware updates" not in cp.stdout, "--tags rocmprov_firmware must not flash"
    cp = subprocess.run(
        [
            tool("ansible-playbook"),
            "-i",
            str(inv),
            "--list-tasks",
            "--tags",
            "firmware",
            "site.yml",
        ],
        cwd=PLAYBOOKS,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert "Flash the firmware updates" in cp.stdout
    assert "Ask fwupd for firmware updates" in cp.stdout


@pytest.mark.parametrize("role", ROLES, ids=lambda p: p.name)
def test_role_layout_and_prefixes(role: Path) -> None:
    defaults = yaml.safe_load((role / "defaults/main.yml").read_text()) or {}
    assert all(k.startswith(role.name + "_") for k in defaults), sorted(defaults)
    for f in (role / "vars").glob("*.yml"):
        for k in yaml.safe_load(f.read_text()) or {}:
            assert k.startswith("_" + role.name + "_"), f"{f}: {k}"
    specs = yaml.safe_load((role / "meta/argument_specs.yml").read_text())
    options = specs["argument_specs"]["main"]["options"]
    assert set(defaults) <= set(options), set(defaults) - set(options)
    text = "".join(p.read_text() for p in (role / "tasks").glob("*.yml"))
    assert " yes\n" not in text and " no\n" not in text


def test_packaged_playbooks_are_found() -> None:
    from rocmprov.provision.runner import playbook_dir

    assert (playbook_dir() / "site.yml").is_file()
    assert (playbook_dir() / "ansible.cfg").is_file()
