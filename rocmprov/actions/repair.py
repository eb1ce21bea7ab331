"""rocmprov repair: audit -> apply only the remedies of the software findings -> audit again.

Findings and remedies are linked by data (rocmprov/data/remedies.yaml); hardware and BIOS
findings become a checklist (rocmprov/data/bios.yaml) for a human.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any

import yaml

from rocmprov.model import AuditResult, Finding, HostReport, Severity

SCHEMA = "rocmprov.repair/1"
PROBLEM = (Severity.WARNING, Severity.CRITICAL)


@cache
def remedies() -> dict[str, Any]:
    text = resources.files("rocmprov.data").joinpath("remedies.yaml").read_text("utf-8")
    return yaml.safe_load(text)


@cache
def bios_checklist() -> dict[str, Any]:
    try:
        text = resources.files("rocmprov.data").joinpath("bios.yaml").read_text("utf-8")
    except OSError:
        return {}
    data = yaml.safe_load(text)
    return data if isinstance(data, dict) else {}


@dataclass(frozen=True)
class HumanStep:
    host: str
    finding: Finding
    title: str
    steps: tuple[str, ...] = ()
    bios: tuple[dict[str, str], ...] = ()
    prove: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()


@dataclass(frozen=True)
class Plan:
    """Per host: the tags that fix its software findings, and the human checklist."""

    tags: dict[str, tuple[str, ...]] = field(default_factory=dict)
    software: dict[str, tuple[Finding, ...]] = field(default_factory=dict)
    human: tuple[HumanStep, ...] = ()
    untreated: dict[str, tuple[Finding, ...]] = field(default_factory=dict)
    # The ROCm each host runs (audit facts): repair keeps it unless the inventory or -e names one.
    installed: dict[str, str] = field(default_factory=dict)

    def runs(self) -> tuple[tuple[tuple[str, ...], tuple[str, ...], str], ...]:
        """One apply per (tags, installed ROCm): (hosts, tags, installed release), so each host
        gets its own plan and keeps its own release and stream."""
        groups: dict[tuple[tuple[str, ...], str], list[str]] = {}
        for host in self.hosts:
            groups.setdefault((self.tags[host], self.installed.get(host, "")), []).append(host)
        return tuple((tuple(h), t, v) for (t, v), h in groups.items())

    @property
    def all_tags(self) -> tuple[str, ...]:
        return tuple(sorted({t for tags in self.tags.values() for t in tags}))

    @property
    def hosts(self) -> tuple[str, ...]:
        return tuple(h for h, t in self.tags.items() if t)


def plan(before: AuditResult) -> Plan:
    """Pure: which remedy each problem gets. Unreachable hosts get nothing."""
    soft_map = remedies().get("software") or {}
    human_map = remedies().get("human") or {}
    tags: dict[str, tuple[str, ...]] = {}
    software: dict[str, tuple[Finding, ...]] = {}
    untreated: dict[str, tuple[Finding, ...]] = {}
    human: list[HumanStep] = []
    installed: dict[str, str] = {}
    for host in before.hosts:
        if host.failure:
            continue
        problems = [f for f in host.findings if f.severity in PROBLEM]
        soft = [f for f in problems if f.check in soft_map]
        software[host.host] = tuple(soft)
        installed[host.host] = str(host.facts.get("rocm") or "")
        tags[host.host] = tuple(sorted({t for f in soft for t in soft_map[f.check]["tags"]}))
        human += [
            _human(host.host, f, human_map[f.check]) for f in problems if f.check in human_map
        ]
        untreated[host.host] = tuple(
            f for f in problems if f.check not in soft_map and f.check not in human_map
        )
    return Plan(tags, software, tuple(human), untreated, installed)


def _human(host: str, f: Finding, key: str | None) -> HumanStep:
    entry = bios_checklist().get(key or "", {}) if key else {}
    fill = {
        "bdf": f.subject.split(" ")[0] if f.subject else "<bdf>",
        "upstream": _upstream(f.subject),
    }
    return HumanStep(
        host=host,
        finding=f,
        title=str(entry.get("title") or f.summary),
        steps=tuple(_fill(s, fill) for s in entry.get("steps") or ([f.fix] if f.fix else [])),
        bios=tuple(dict(b) for b in entry.get("bios") or ()),
        prove=tuple(_fill(s, fill) for s in entry.get("prove") or ()),
        sources=tuple(entry.get("sources") or ([f.ref] if f.ref else [])),
    )


def _upstream(subject: str) -> str:
    marker = "slot link at "
    if marker in subject:
        return subject.split(marker, 1)[1].rstrip(")")
    return subject.split(" ")[0] if subject else "<bdf>"


def _fill(text: str, values: dict[str, str]) -> str:
    for key, value in values.items():
        text = text.replace("{" + key + "}", value)
    return text


@dataclass(frozen=True)
class Outcome:
    host: str
    check: str
    subject: str
    state: str  # fixed | still broken | needs a human | not attempted
    before: str
    after: str = ""


def outcomes(before: AuditResult, after: AuditResult | None, p: Plan) -> tuple[Outcome, ...]:
    """Pure: compare the audits per (host, check, subject)."""
    after_by_host = {h.host: h for h in after.hosts} if after else {}
    out: list[Outcome] = []
    for host in before.hosts:
        later = after_by_host.get(host.host)
        for f in p.software.get(host.host, ()):
            now = _same(later, f)
            if after is None:
                state, text = "not attempted", ""
            elif later is None or later.failure:
                state = "still broken"
                text = f"not audited after repair: {later.failure if later else 'missing'}"
            elif now is None or now.severity not in PROBLEM:
                state, text = "fixed", now.summary if now else "no longer reported"
            else:
                state, text = "still broken", now.summary
            out.append(Outcome(host.host, f.check, f.subject, state, f.summary, text))
        for step in (s for s in p.human if s.host == host.host):
            out.append(
                Outcome(
                    host.host,
                    step.finding.check,
                    step.finding.subject,
                    "needs a human",
                    step.finding.summary,
                    step.title,
                )
            )
        for f in p.untreated.get(host.host, ()):
            out.append(
                Outcome(
                    host.host,
                    f.check,
                    f.subject,
                    "needs a human",
                    f.summary,
                    f.fix or "no automatic remedy",
                )
            )
    return tuple(out)


def _same(report: HostReport | None, f: Finding) -> Finding | None:
    if report is None:
        return None
    same = [g for g in report.findings if g.check == f.check and g.subject == f.subject]
    return max(same, key=lambda g: g.severity.rank, default=None)
