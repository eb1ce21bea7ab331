"""What the playbooks install, read from the playbooks' own files (one source of truth).

The audit judges "ROCm package removed" against exactly the list `rocmprov apply` installs.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import yaml

from rocmprov.parse.datafile import load_yaml
from rocmprov.paths import playbooks_dir

# os-release ID -> Ansible's distribution name and os_family (the vars files' names)
_DISTRIBUTION = {
    "debian": ("Debian", "Debian"),
    "ubuntu": ("Ubuntu", "Debian"),
    "rhel": ("RedHat", "RedHat"),
    "rocky": ("Rocky", "RedHat"),
    "almalinux": ("AlmaLinux", "RedHat"),
    "ol": ("OracleLinux", "RedHat"),
    "centos": ("CentOS", "RedHat"),
    "fedora": ("Fedora", "RedHat"),
    "sles": ("SLES", "Suse"),
}


@cache
def _vars(role: str, name: str) -> dict[str, Any] | None:
    base = playbooks_dir() / "roles" / role / "vars" / name
    try:
        data = load_yaml(base.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError):
        return None
    return data if isinstance(data, dict) else None


def distro_packages(os_id: str, version_id: str) -> list[str]:
    """The distribution's ROCm packages the packages role installs (first_found order)."""
    dist, family = _DISTRIBUTION.get(os_id, ("", ""))
    major = version_id.split(".")[0]
    for name in (f"{dist}-{major}.yml", f"{dist}.yml", f"{family}.yml", "default.yml"):
        data = _vars("rocmprov_packages", name) if dist or name == "default.yml" else None
        if data and "_rocmprov_packages_distro_map" in data:
            return [str(p) for p in data["_rocmprov_packages_distro_map"] or []]
    return []


def ansible_facts_for(os_id: str, version_id: str) -> dict[str, str]:
    """The Ansible facts the playbooks would see on a host with this os-release, for the
    release resolver (rocmprov.knowledge.releases.resolve) that the playbooks use."""
    dist, family = _DISTRIBUTION.get(os_id, (os_id.capitalize(), ""))
    return {
        "distribution": dist,
        "distribution_version": version_id,
        "distribution_major_version": version_id.split(".")[0],
        "os_family": family,
    }
