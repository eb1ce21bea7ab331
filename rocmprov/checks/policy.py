"""What a host is expected to be: defaults, overridden per host by inventory variables."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Policy:
    rocm_version: str = ""  # the release the site targets; "" = judge what is installed
    expected_pcie_gen: int | None = None  # e.g. 4 for MI210 in a Gen4 server
    expected_pcie_width: int | None = None
    expected_gpu_count: int | None = None
    require_gpu: bool = True  # a host without an AMD GPU is CRITICAL (it cannot run ROCm work)
    repo_source: str = ""  # "amd" | "distro" | "" (infer from the host)
    # The package lists apply was told to install (the packages role's variables): the audit
    # judges "package missing" against exactly these when they are set.
    packages_amd: tuple[str, ...] = ()
    packages_distro: tuple[str, ...] = ()
    packages_extra: tuple[str, ...] = ()
    # MI300-series partition modes the site runs (checks/health.py): "" = not judged
    compute_partition: str = ""  # SPX | DPX | TPX | QPX | CPX
    memory_partition: str = ""  # NPS1 | NPS2 | NPS4 | NPS8
    power_cap_ok: bool = False  # a socket power cap below the board's maximum is deliberate

    @classmethod
    def from_vars(cls, hostvars: Mapping[str, Any]) -> Policy:
        """Inventory variables (group_vars/host_vars) -> Policy; bad values are ignored."""
        return cls(
            rocm_version=str(hostvars.get("rocmprov_rocm_version") or ""),
            expected_pcie_gen=_int(hostvars.get("rocmprov_expected_pcie_gen")),
            expected_pcie_width=_int(hostvars.get("rocmprov_expected_pcie_width")),
            expected_gpu_count=_int(
                hostvars.get("rocmprov_expected_gpu_count", hostvars.get("rocmprov_gpu_count"))
            ),
            require_gpu=_bool(hostvars.get("rocmprov_require_gpu"), True),
            repo_source=str(hostvars.get("rocmprov_repo_source") or ""),
            packages_amd=_names(hostvars.get("rocmprov_packages_amd")),
            packages_distro=_names(hostvars.get("rocmprov_packages_distro")),
            packages_extra=_names(hostvars.get("rocmprov_packages_extra")),
            compute_partition=str(hostvars.get("rocmprov_compute_partition") or "").upper(),
            memory_partition=str(hostvars.get("rocmprov_memory_partition") or "").upper(),
            power_cap_ok=_bool(hostvars.get("rocmprov_power_cap_ok"), False),
        )

    def target(self, installed: str | None) -> str:
        """The release a host is judged against: the inventory's, else what is really
        installed, else the release table's default (the one `rocmprov apply` installs)."""
        from rocmprov.knowledge import releases

        return self.rocm_version or installed or releases.default_version()


def _names(v: Any) -> tuple[str, ...]:
    if isinstance(v, str):
        return tuple(p for p in v.replace(",", " ").split() if p)
    if isinstance(v, list | tuple):
        return tuple(str(p) for p in v if isinstance(p, str | int) and str(p))
    return ()


def _int(v: Any) -> int | None:
    try:
        return int(v) if v is not None and not isinstance(v, bool) else None
    except (TypeError, ValueError):
        return None


def _bool(v: Any, default: bool) -> bool:
    if isinstance(v, bool):
        return v
    if isinstance(v, str) and v.lower() in ("true", "yes", "1", "false", "no", "0"):
        return v.lower() in ("true", "yes", "1")
    return default
