"""Result types shared by checks, reports and commands. Frozen dataclasses, no behaviour."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from rocmprov.exitcodes import Exit


class Severity(Enum):
    """A finding's state. `skipped` (not applicable) is neither a pass nor a problem."""

    OK = "ok"
    SKIPPED = "skipped"
    UNKNOWN = "unknown"
    WARNING = "warning"
    CRITICAL = "critical"

    @property
    def rank(self) -> int:
        """Worse is higher: UNKNOWN counts only when nothing is worse (Nagios)."""
        return _RANK[self]

    @property
    def exit_code(self) -> Exit:
        return _EXIT[self]


_RANK = {
    Severity.OK: 0,
    Severity.SKIPPED: 0,
    Severity.UNKNOWN: 1,
    Severity.WARNING: 2,
    Severity.CRITICAL: 3,
}
_EXIT = {
    Severity.OK: Exit.OK,
    Severity.SKIPPED: Exit.OK,
    Severity.UNKNOWN: Exit.UNKNOWN,
    Severity.WARNING: Exit.WARNING,
    Severity.CRITICAL: Exit.CRITICAL,
}


def worst(severities: list[Severity] | tuple[Severity, ...]) -> Severity:
    return max(severities, key=lambda s: s.rank, default=Severity.OK)


@dataclass(frozen=True)
class Finding:
    """One check's verdict on one host. `check` is a stable dotted id, e.g. pcie.link.width."""

    check: str
    severity: Severity
    summary: str
    actual: str = ""
    expected: str = ""
    fix: str = ""
    ref: str = ""
    kb: str = ""
    subject: str = ""  # what it is about on the host, e.g. a PCI address

    def to_dict(self) -> dict[str, Any]:
        return {
            "check": self.check,
            "severity": self.severity.value,
            "summary": self.summary,
            "subject": self.subject,
            "actual": self.actual,
            "expected": self.expected,
            "fix": self.fix,
            "ref": self.ref,
            "kb": self.kb,
        }


@dataclass(frozen=True)
class HostReport:
    """One host's audit: either findings, or `failure` naming why it could not be audited."""

    host: str
    findings: tuple[Finding, ...] = ()
    facts: dict[str, Any] = field(default_factory=dict)
    failure: str = ""  # a FailureClass value; empty when the host was audited
    message: str = ""
    duration: float = 0.0
    inventory: dict[str, Any] = field(default_factory=dict)  # inventory_versions.build_inventory

    @property
    def severity(self) -> Severity:
        if self.failure:
            return worst([Severity.UNKNOWN, *(f.severity for f in self.findings)])
        return worst([f.severity for f in self.findings])

    @property
    def status(self) -> str:
        return self.failure or "audited"


@dataclass(frozen=True)
class FleetGroup:
    """Hosts sharing one problem: same check, severity and actual value."""

    check: str
    severity: Severity
    summary: str
    hosts: tuple[str, ...]


@dataclass(frozen=True)
class AuditResult:
    hosts: tuple[HostReport, ...]

    @property
    def severity(self) -> Severity:
        return worst([h.severity for h in self.hosts])

    @property
    def exit_code(self) -> Exit:
        return self.severity.exit_code

    def groups(self) -> tuple[FleetGroup, ...]:
        """Problems across the fleet, most hosts first (e.g. '12 hosts: PCIe x8 on slot')."""
        buckets: dict[tuple[str, Severity, str], list[str]] = {}
        for host in self.hosts:
            if host.failure:
                key = (
                    f"host.{host.failure}",
                    Severity.UNKNOWN,
                    f"host not audited: {host.failure}",
                )
                buckets.setdefault(key, []).append(host.host)
            for f in host.findings:
                if f.severity.rank >= Severity.UNKNOWN.rank:
                    key = (f.check, f.severity, f.summary)
                    if host.host not in buckets.get(key, []):
                        buckets.setdefault(key, []).append(host.host)
        groups = [FleetGroup(c, s, m, tuple(h)) for (c, s, m), h in buckets.items()]
        groups.sort(key=lambda g: (-g.severity.rank, -len(g.hosts), g.check))
        return tuple(groups)


def count(n: int, noun: str) -> str:
    """ "1 host", "2 hosts": a number with its noun (nouns here take a plain -s)."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"
