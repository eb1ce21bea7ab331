"""The audit flow: a Bundle -> facts -> checks -> HostReport, for one host or a fleet."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

from rocmprov.checks import run_checks
from rocmprov.checks.policy import Policy
from rocmprov.collect.bundle import Bundle, ProbeOutput
from rocmprov.facts.host import build_facts
from rocmprov.facts.versions import build_inventory
from rocmprov.model import Finding, HostReport, Severity

# Checks whose only source is a probe the quick profile leaves out: UNKNOWN there means "not
# collected", which the quick profile reports as SKIPPED.
CHECK_PROBES: dict[str, tuple[str, ...]] = {
    "torch.rocm": ("torch",),
    "gpu.gfx": ("rocminfo",),
}


def audit_bundle(
    bundle: Bundle,
    policy: Policy | None = None,
    *,
    duration: float = 0.0,
    ras_before: Mapping[str, Mapping[str, int]] | None = None,
) -> HostReport:
    """Pure: the same bundle always gives the same report, live or read from disk. Facts that
    a parser cannot take (a gap, one host's odd output) make this host's report an error,
    never an exception that ends a fleet's audit (checks have their own guard).
    `ras_before`: the previous run's ECC counts per GPU serial (collect/ras_state.py): adds
    gpu.ecc.rising (a comparison with the state: the one finding a bundle alone cannot give)."""
    try:
        facts = build_facts(bundle)
        inventory = build_inventory(bundle, facts)
    except Exception as exc:  # one host's bytes must not end the others
        from rocmprov.transport.base import FailureClass

        why = " ".join(f"{type(exc).__name__}: {exc}".split())[:300]
        return HostReport(
            host=bundle.host,
            failure=FailureClass.ERROR.value,
            message=f"its outputs could not be read as facts ({why})",
            duration=duration,
        )
    findings = run_checks(facts, policy or Policy())
    if ras_before is not None:
        from rocmprov.checks.health_trend import check_ecc_trend

        findings = (*findings, *check_ecc_trend(facts, ras_before))
    left_out = set(bundle.meta.get("profile_skipped") or ())
    if left_out:
        findings = tuple(_not_collected(f, left_out) for f in findings)
    return HostReport(
        host=bundle.host,
        findings=findings,
        facts=facts.summary(),
        duration=duration,
        inventory=inventory,
    )


def audit_local(
    *,
    become: bool = False,
    gpu_users: Sequence[str] = (),
    python: str = "python3",
    python_fallback: str = "",
    hostvars: Mapping[str, Any] | None = None,
    profile: str = "full",
    consumer: str = "audit",
    keep_state: bool = True,
    deadline: float | None = None,
) -> tuple[HostReport, Bundle]:
    """Collect and audit this machine. The quick profile leaves out the slow probes
    (probes.PROFILES) and reads the kernel log since `consumer`'s last run plus the GPU lines
    it kept from earlier in the boot (collect.cursor); `keep_state` False (a dry run, check
    mode) leaves that state as it was. `deadline`: seconds for all probes together (they run
    in parallel), None: each probe's own timeout, one after another."""
    from rocmprov.collect.local import collect_local
    from rocmprov.collect.probes import build_probes, for_profile

    start = time.monotonic()
    probes = build_probes(gpu_users=gpu_users, python=python, python_fallback=python_fallback)
    probes, left_out = for_profile(probes, profile)
    bundle = collect_local(probes, become=become, deadline=deadline)
    cursor = None
    if profile == "quick":
        bundle, cursor = _dmesg_since_last_run(bundle, consumer)
        bundle = Bundle(
            bundle.host,
            bundle.outputs,
            {**bundle.meta, "profile": profile, "profile_skipped": list(left_out)},
        )
    ras_before = None
    if profile != "quick":  # amd-smi (the serials and counts) runs in the full profile only
        from rocmprov.collect.ras_state import load_ras_counts

        ras_before = load_ras_counts()
    report = audit_bundle(
        bundle,
        Policy.from_vars(hostvars or {}),
        duration=time.monotonic() - start,
        ras_before=ras_before,
    )
    if ras_before is not None and keep_state and not report.failure:
        report = _save_ecc_counts(report, bundle, ras_before)
    if cursor is not None and keep_state:
        from rocmprov.collect.cursor import save_cursor

        try:
            save_cursor(consumer, cursor)
        except (OSError, ValueError) as exc:  # the report stands; the state is a finding
            report = _state_not_saved(report, exc)
    return report, bundle


def _save_ecc_counts(
    report: HostReport, bundle: Bundle, before: Mapping[str, Mapping[str, int]]
) -> HostReport:
    """Keep this run's ECC counts per GPU serial for the next run's gpu.ecc.rising."""
    from rocmprov.checks.health_trend import ecc_counts
    from rocmprov.collect.ras_state import save_ras_counts

    counts = ecc_counts(build_facts(bundle))
    if not counts:
        return report
    try:
        save_ras_counts(counts, before)
    except (OSError, ValueError) as exc:
        return _state_not_saved(report, exc, "ECC counts not saved: no ECC trend next run")
    return report


def _state_not_saved(
    report: HostReport,
    exc: Exception,
    what: str = "kernel-log state not saved: the next run reads the whole kernel log again",
) -> HostReport:
    from dataclasses import replace

    from rocmprov.collect.cursor import state_dir

    why = getattr(exc, "strerror", None) or str(exc)
    finding = Finding(
        "rocmprov.state",
        Severity.UNKNOWN,
        what,
        actual=f"{state_dir()}: {why}"[:200],
        expected="a private directory this user can write",
        fix="set ROCMPROV_STATE_DIR to a directory this user owns (a systemd unit: "
        "StateDirectory=), or run as root (/var/lib/rocmprov)",
    )
    return replace(report, findings=(*report.findings, finding))


def _not_collected(f: Finding, left_out: set[str]) -> Finding:
    from dataclasses import replace

    from rocmprov.collect.probes import PROFILE_SKIPPED

    needs = CHECK_PROBES.get(f.check, ())
    if f.severity is Severity.UNKNOWN and needs and left_out.issuperset(needs):
        return replace(f, severity=Severity.SKIPPED, summary=PROFILE_SKIPPED, fix="")
    return f


def _dmesg_since_last_run(bundle: Bundle, consumer: str):
    """The bundle with its dmesg output cut to the GPU lines kept earlier in this boot and the
    lines after the consumer's cursor, and the cursor to save once the audit is done (None
    when the kernel log could not be read)."""
    from rocmprov.collect.cursor import advance, current_boot_id, load_cursor
    from rocmprov.parse.dmesg import parse_dmesg

    out = bundle.get("dmesg")
    if out is None or out.status != "ok":
        return bundle, None
    boot = current_boot_id()

    def events(text: str) -> list[tuple[str, str]]:
        return [(e.tag, e.line) for e in parse_dmesg(text).events]

    shown, cursor, carried = advance(out.stdout, load_cursor(consumer), boot, events)
    cut = ProbeOutput(
        out.id, out.command, out.rc, shown, out.stderr, out.duration, out.collected_at
    )
    read = "whole log" if shown == out.stdout else "since last run"
    meta = {**bundle.meta, "dmesg": read, "dmesg_kept_lines": carried, "dmesg_state": consumer}
    return Bundle(bundle.host, {**bundle.outputs, "dmesg": cut}, meta), cursor
