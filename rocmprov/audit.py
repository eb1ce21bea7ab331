"""The audit flow: a Bundle -> facts -> checks -> HostReport, for one host or a fleet."""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from rocmprov.checks import run_checks
from rocmprov.checks.policy import Policy
from rocmprov.collect.bundle import Bundle
from rocmprov.facts import build_facts
from rocmprov.model import HostReport


def audit_bundle(
    bundle: Bundle, policy: Policy | None = None, *, duration: float = 0.0
) -> HostReport:
    """Pure: the same bundle always gives the same report, live or read from disk."""
    facts = build_facts(bundle)
    findings = run_checks(facts, policy or Policy())
    return HostReport(host=bundle.host, findings=findings, facts=facts.summary(), duration=duration)


def audit_local(
    *,
    become: bool = False,
    gpu_user: str = "",
    python: str = "python3",
    hostvars: Mapping[str, Any] | None = None,
) -> tuple[HostReport, Bundle]:
    from rocmprov.collect.local import collect_local
    from rocmprov.probes import build_probes

    start = time.monotonic()
    bundle = collect_local(build_probes(gpu_user=gpu_user, python=python), become=become)
    report = audit_bundle(
        bundle, Policy.from_vars(hostvars or {}), duration=time.monotonic() - start
    )
    return report, bundle
