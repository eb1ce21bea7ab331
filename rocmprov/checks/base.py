"""Helpers every check module uses to build findings."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rocmprov.model import Finding, Severity

if TYPE_CHECKING:
    from rocmprov.knowledge.matrix import Verdict

OK, SKIPPED, UNKNOWN = Severity.OK, Severity.SKIPPED, Severity.UNKNOWN
WARNING, CRITICAL = Severity.WARNING, Severity.CRITICAL

NO_AMD_GPU = "no AMD GPU on this host"


def stray_note(libs: tuple[str, ...]) -> str:
    """ "; libamdhip64-5 5.7.1 is a distribution library, not a ROCm install" (or "")."""
    if not libs:
        return ""
    what = "is a distribution library" if len(libs) == 1 else "are distribution libraries"
    return f"; {', '.join(libs)} {what}, not a ROCm install"


def unknown(check: str, why: str, *, subject: str = "", fix: str = "") -> Finding:
    return Finding(check, UNKNOWN, why, actual="not collected", subject=subject, fix=fix)


def skipped(check: str, why: str = NO_AMD_GPU) -> Finding:
    return Finding(check, SKIPPED, why)


def from_verdict(
    check: str, verdict: Verdict, summary: str, *, fix: str = "", subject: str = ""
) -> Finding:
    """A support-matrix verdict (rocmprov.knowledge.matrix) as a finding."""
    return Finding(
        check,
        verdict.severity,
        summary,
        actual=verdict.actual,
        expected=verdict.expected,
        fix=fix if verdict.status != "ok" else "",
        ref=verdict.source,
        subject=subject,
    )
