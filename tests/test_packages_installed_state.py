"""rocmprov_packages (and rocmprov_driver) read dpkg-query's `${db:Status-Abbrev}` to decide
(1) whether the apt task can be skipped on a converged host and (2) which of AMD's prerequisites
(and the driver package) apply installed (their markers are what `--tags uninstall` removes).
A package that is installed but held ("hi") is installed; one half-installed ("iU", "iF") or
needing a reinstall (third character R) is not.

The status letters: dpkg-query(1), "db:Status-Abbrev ... the abbreviated package status (as
three characters), such as 'ii ' or 'iHR'"; desired action u/i/h/r/p, package status
n/c/H/U/F/W/t/i, error flag ' ' or R.
Source: https://man7.org/linux/man-pages/man1/dpkg-query.1.html

The role's own vars/main.yml is evaluated by ansible-playbook on localhost (no host changed).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
VARS = REPO / "playbooks/roles/rocmprov_packages/vars/main.yml"
PLAYBOOK = f"""
- hosts: localhost
  gather_facts: false
  vars_files: [{VARS}]
  tasks:
    - ansible.builtin.copy:
        dest: "{{{{ playbook_dir }}}}/out.json"
        mode: "0600"
        content: "{{{{ {{'installed': _rocmprov_packages_installed,
                       'missing': _rocmprov_packages_prereq_missing}} | to_json }}}}"
"""


def _evaluate(tmp_path: Path, lines: list[str]) -> dict:
    (tmp_path / "pb.yml").write_text(PLAYBOOK)
    extra = {
        # what the apt task names: AMD's meta-package, no extras, AMD's prerequisites
        "rocmprov_packages_source": "amd",
        "rocmprov_packages_amd": ["rocm"],
        "rocmprov_packages_extra": [],
        "_rocmprov_packages_prereq_enabled": True,
        "_rocmprov_packages_prereq_state": {"changed": False, "stdout_lines": lines},
    }
    (tmp_path / "vars.json").write_text(json.dumps(extra))
    _play(tmp_path)
    return json.loads((tmp_path / "out.json").read_text())


def _play(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "ANSIBLE_CONFIG": "",
        "ANSIBLE_NOCOLOR": "1",
    }
    cp = subprocess.run(
        [
            str(Path(sys.executable).parent / "ansible-playbook"),
            "-i",
            "localhost,",
            "-c",
            "local",
            "-e",
            f"ansible_python_interpreter={sys.executable}",
            "-e",
            f"@{tmp_path / 'vars.json'}",
            str(tmp_path / "pb.yml"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=tmp_path,
        check=False,
    )
    assert cp.returncode == 0, cp.stdout + cp.stderr


def test_held_packages_count_as_installed_and_broken_ones_do_not(tmp_path: Path) -> None:
    lines = [
        "rocm ii ",
        "python3-setuptools hi ",  # held by the admin: installed before apply, not apply's
        "python3-wheel iU ",  # unpacked, not configured: apt must run
        "amdgpu-dkms iHR",  # half-installed, reinstall required
        "rocm-core iiR",  # installed but flagged reinstall-required
        "rocm-smi-lib rc ",  # removed, config files left
        "libdrm-amdgpu1 ii",  # the last line may lose its trailing blank
    ]
    got = _evaluate(tmp_path, lines)
    assert got["installed"] == ["rocm", "python3-setuptools", "libdrm-amdgpu1"]
    # only the named package that was really missing gets a marker (--tags uninstall removes it)
    assert got["missing"] == ["python3-wheel"]


DRIVER_VARS = REPO / "playbooks/roles/rocmprov_driver/vars/main.yml"
DRIVER_PLAYBOOK = f"""
- hosts: localhost
  gather_facts: false
  vars_files: [{DRIVER_VARS}]
  tasks:
    - ansible.builtin.copy:
        dest: "{{{{ playbook_dir }}}}/driver-{{{{ idx }}}}.json"
        mode: "0600"
        content: "{{{{ _rocmprov_driver_preinstalled | bool | to_json }}}}"
      vars:
        _rocmprov_driver_before: {{stdout: "{{{{ item }}}}"}}
      loop: "{{{{ statuses }}}}"
      loop_control:
        index_var: idx
"""


def test_a_held_driver_package_is_not_noted_as_installed_by_apply(tmp_path: Path) -> None:
    """The driver role writes its marker (what `--tags uninstall` removes) only when the
    package was not installed before: a held amdgpu-dkms ("hi ") was the admin's."""
    statuses = {"ii ": True, "hi ": True, "iU ": False, "iHR": False, "rc ": False, "": False}
    (tmp_path / "pb.yml").write_text(DRIVER_PLAYBOOK)
    (tmp_path / "vars.json").write_text(json.dumps({"statuses": list(statuses)}))
    _play(tmp_path)
    got = [json.loads((tmp_path / f"driver-{i}.json").read_text()) for i in range(len(statuses))]
    assert got == list(statuses.values())
