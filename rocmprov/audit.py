"""The audit flow: a Bundle -> facts -> checks -> HostReport, for one host or a fleet."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

from rocmprov.checks import run_checks
from rocmprov.checks.policy import Policy
from rocmprov.collect.bundle import Bundle, ProbeOutput
from rocmprov.facts import build_facts
from rocmprov.inventory_versions import build_inventory
from rocmprov.model import Finding, HostReport, Severity

# Checks whose only source is a probe the quick profile leaves out: UNKNOWN there means "not
# collected", which the quick profile reports as SKIPPED.
CHECK_PROBES: dict[str, tuple[str, ...]] = {
    "torch.rocm": ("torch",),
    "gpu.gfx": ("rocminfo",),
}


def audit_bundle(
    bundle: Bundle, policy: Policy | None = None, *, duration: float = 0.0
) -> HostReport:
    """Pure: the same bundle always gives the same report, live or read from disk."""
    facts = build_facts(bundle)
    findings = run_checks(facts, policy or Policy())
    left_out = set(bundle.meta.get("profile_skipped") or ())
    if left_out:
        findings = tuple(_not_collected(f, left_out) for f in findings)
    return HostReport(
        host=bundle.host,
        findings=findings,
        facts=facts.summary(),
        duration=duration,
        inventory=build_inventory(bundle, facts),
    )


def audit_local(
    *,
    become: bool = False,
    gpu_users: Sequence[str] = (),
    python: str = "python3",
    python_fallback: str = "",
    hostvars: Mapping[str, Any] | None = None,
    profile: str = "full",
) -> tuple[HostReport, Bundle]:
    """Collect and audit this machine. The quick profile leaves out the slow probes
    (probes.PROFILES) and reads the kernel log only since its last run (collect.cursor)."""
    from rocmprov.collect.local import collect_local
    from rocmprov.probes import build_probes, for_profile

    start = time.monotonic()
    probes = build_probes(gpu_users=gpu_users, python=python, python_fallback=python_fallback)
    probes, left_out = for_profile(probes, profile)
    bundle = collect_local(probes, become=become)
    cursor = None
    if profile == "quick":
        bundle, cursor = _dmesg_since_last_run(bundle)
        bundle = Bundle(
            bundle.host,
            bundle.outputs,
            {**bundle.meta, "profile": profile, "profile_skipped": list(left_out)},
        )
    report = audit_bundle(
        bundle, Policy.from_vars(hostvars or {}), duration=time.monotonic() - start
    )
    if cursor is not None:
        from rocmprov.collect.cursor import save_cursor

        save_cursor(cursor)
    return report, bundle


def _not_collected(f: Finding, left_out: set[str]) -> Finding:
    from dataclasses import replace

    from rocmprov.probes import PROFILE_SKIPPED

    needs = CHECK_PROBES.get(f.check, ())
    if f.severity is Severity.UNKNOWN and needs and left_out.issuperset(needs):
        return replace(f, severity=Severity.SKIPPED, summary=PROFILE_SKIPPED, fix="")
    return f


def _dmesg_since_last_run(bundle: Bundle):
    """The bundle with its dmesg output cut to the lines after the saved cursor, and the cursor
    to save once the audit is done (None when the kernel log could not be read)."""
    from rocmprov.collect.cursor import current_boot_id, cursor_after, lines_since, load_cursor

    out = bundle.get("dmesg")
    if out is None or out.status != "ok":
        return bundle, None
    boot = current_boot_id()
    recent = lines_since(out.stdout, load_cursor(), boot)
    cut = ProbeOutput(
        out.id, out.command, out.rc, recent, out.stderr, out.duration, out.collected_at
    )
    meta = {**bundle.meta, "dmesg": "whole log" if recent == out.stdout else "since last run"}
    return Bundle(bundle.host, {**bundle.outputs, "dmesg": cut}, meta), cursor_after(
        out.stdout, boot
    )
