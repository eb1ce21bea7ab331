"""Pure checks: HostFacts + Policy -> findings. A check never runs a command."""

from __future__ import annotations

from collections.abc import Callable

from rocmprov.checks import (
    cdi,
    containers,
    dmesg,
    driver,
    gpu,
    health,
    health_limits,
    logs,
    packages,
    pcie,
    repo,
    software,
    system,
)
from rocmprov.checks.policy import Policy
from rocmprov.facts.host import HostFacts
from rocmprov.model import Finding, Severity

Check = Callable[[HostFacts, Policy], list[Finding]]

CHECKS: tuple[Check, ...] = (
    gpu.check_present,
    gpu.check_count,
    gpu.check_gfx,
    health.check_ecc,
    health.check_ras,
    health.check_bad_pages,
    health.check_xgmi,
    health_limits.check_throttle,
    health_limits.check_power_cap,
    health_limits.check_temperature,
    health_limits.check_partition,
    pcie.check_link,
    pcie.check_bar,
    driver.check_amdgpu,
    driver.check_nodes,
    driver.check_groups,
    driver.check_dkms,
    driver.check_secureboot,
    dmesg.check_dmesg,
    system.check_os,
    system.check_iommu,
    system.check_numa,
    system.check_gpu_manager,
    software.check_rocm,
    software.check_layouts,
    software.check_torch,
    repo.check_repo,
    packages.check_packages,
    packages.check_prerequisites,
    logs.check_logs,
    containers.check_runtime,
    containers.check_toolkit,
    containers.check_docker_config,
    cdi.check_cdi_spec,
    cdi.check_cdi_stale,
    cdi.check_cdi_conflict,
    containers.check_users,
)


def run_checks(facts: HostFacts, policy: Policy | None = None) -> tuple[Finding, ...]:
    """Every check over one host's facts. A check that breaks on odd facts is UNKNOWN."""
    policy = policy or Policy()
    findings: list[Finding] = []
    for check in CHECKS:
        try:
            findings.extend(check(facts, policy))
        except Exception as exc:  # a parser gap must never hide the other checks
            name = f"{check.__module__.rsplit('.', 1)[-1]}.{check.__name__}"
            findings.append(
                Finding(
                    f"internal.{name}",
                    Severity.UNKNOWN,
                    f"check failed on these facts: {type(exc).__name__}: {exc}",
                )
            )
    return tuple(logs.merge_dmesg(findings))
