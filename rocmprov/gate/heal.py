"""Self-healing for nodes the gate drained: what to do, given the node's Slurm state, a fresh
audit, the node's journal and the site's recovery policy. Pure: no I/O here (commands/heal.py
runs the plan; gate/heal_io.py keeps the journal, the lock, the hook and the metrics).

Per node (plan_node):

| node                                     | findings (drain policy's, CRITICAL) | step     |
|------------------------------------------|-------------------------------------|----------|
| not drained by the gate (admin, escalated)| any                                | leave    |
| drained by the gate, the reason names a  | any (the gate keeps kernel lines    | escalate |
| hardware or BIOS check                   | sticky for the boot)                |          |
| drained by the gate                      | audit failed (host unreachable)     | wait     |
| drained by the gate                      | a hardware/BIOS finding, or one     | escalate |
|                                          | without an automatic remedy         |          |
| drained by the gate                      | only software findings with a remedy| fix      |
|                                          | attempts in window >= max_attempts  | escalate |
|                                          | the fix needs a reboot, not allowed | escalate |
|                                          | jobs still run (DRAINING)           | wait     |
| drained by the gate                      | none left (fixed meanwhile)         | resume   |

Then plan_fleet applies the caps: at most `per_partition` nodes of one partition in hand at
once (a fix or a resume), at most `max_reboots` reboots per window over the whole fleet, one
isolation or put-back per run (each restarts slurmctld); a node over a cap waits for a later run
(`defer`). Escalation takes no slot.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from fnmatch import fnmatchcase
from typing import Any

from rocmprov.gate.gres import bdfs
from rocmprov.gate.policy import DrainPolicy
from rocmprov.gate.slurm import REASON_PREFIX, NodeState, clean
from rocmprov.model import Finding, HostReport, Severity

ESCALATED_PREFIX = "rocmprov-heal:"  # not REASON_PREFIX: the gate leaves it alone (not ours)
NEEDS_HUMAN = f"{ESCALATED_PREFIX} needs a human:"
# the drain while isolated GPUs are put back (a failed put-back leaves it: the next run resumes)
RESTORING = f"{REASON_PREFIX} gres.restore putting isolated GPUs back"
# findings no software on the node can fix, whatever remedies.yaml says: the card, its link,
# the kernel's GPU errors (RAS, hangs), firmware settings
HARDWARE = ("gpu.*", "pcie.*", "dmesg.*", "boot.*", "kernel.iommu", "ssh.hostkey")
VERIFY_LEVELS = ("audit", "smoke")
NO_PARTITION = "(no partition)"


class Step(Enum):
    LEAVE = "leave"
    WAIT = "wait"
    FIX = "fix"
    RESUME = "resume"
    ESCALATE = "escalate"
    DEFER = "defer"
    ISOLATE = "isolate"  # take the bad GPUs out of Slurm's gres, resume with the rest
    RESTORE = "restore"  # put isolated GPUs that pass again back


@dataclass(frozen=True)
class HealPolicy:
    """The site's recovery policy (docs/health.md, "Self-healing")."""

    max_attempts: int = 3  # fix attempts per node per window before a human is asked
    window_s: float = 86400.0
    allow_reboot: bool = False
    max_reboots: int = 2  # reboots per window, the whole fleet together
    per_partition: int = 1  # nodes of one partition in hand at once
    # per-GPU isolation changes a GPU count, which only a slurmctld restart takes (cluster-wide):
    # off, a node with one bad GPU is escalated instead
    allow_ctld_restart: bool = False

    def __post_init__(self) -> None:
        if not 1 <= self.max_attempts <= 100:
            raise ValueError("max attempts must be between 1 and 100")
        if not 60 <= self.window_s <= 90 * 86400:
            raise ValueError("the window must be between 60 seconds and 90 days")
        if not 0 <= self.max_reboots <= 10000:
            raise ValueError("max reboots must be between 0 and 10000")
        if not 1 <= self.per_partition <= 10000:
            raise ValueError("nodes per partition must be between 1 and 10000")


@dataclass(frozen=True)
class Remedy:
    tags: tuple[str, ...]
    verify: str = "audit"
    reboot: bool = False


@dataclass(frozen=True)
class Event:
    """One journal line: `event` is attempt | fixed | failed | resumed | escalated | deferred."""

    ts: float
    node: str
    event: str
    detail: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class NodePlan:
    node: str
    step: Step
    why: str
    tags: tuple[str, ...] = ()
    reboot: bool = False
    verify: str = "audit"
    reason: str = ""  # the escalation reason for Slurm
    checks: tuple[str, ...] = ()
    partitions: tuple[str, ...] = ()
    gpus: tuple[str, ...] = ()  # PCI addresses to isolate or restore


def remedy_table(data: Mapping[str, Any]) -> dict[str, Remedy]:
    """remedies.yaml's `software` map -> Remedy per check id. ValueError on a bad row."""
    out: dict[str, Remedy] = {}
    for check, row in (data.get("software") or {}).items():
        verify = str(row.get("verify") or "audit")
        if verify not in VERIFY_LEVELS:
            raise ValueError(f"remedy {check}: verify must be one of {', '.join(VERIFY_LEVELS)}")
        out[str(check)] = Remedy(tuple(row.get("tags") or ()), verify, bool(row.get("reboot")))
    return out


def is_hardware(check: str) -> bool:
    return any(fnmatchcase(check, p) or check == p.removesuffix(".*") for p in HARDWARE)


def reason_check(reason: str) -> str:
    """The check id the gate's reason names (`rocmprov: pcie.link.width x8<x16` -> the id)."""
    if not reason.startswith(REASON_PREFIX):
        return ""
    words = reason[len(REASON_PREFIX) :].split()
    return words[0] if words else ""


def attempts(journal: Iterable[Event], now: float, window_s: float) -> int:
    """Fix attempts in the window since the last escalation (a human who resumed an escalated
    node starts a fresh count; a fix that held and broke again still counts: no flapping)."""
    count = 0
    for e in journal:
        if e.event == "escalated":
            count = 0
        elif e.event == "attempt" and now - e.ts < window_s:
            count += 1
    return count


def repeats(journal: Sequence[Event], event: str, why: str) -> bool:
    """The journal's newest line is this event for the same reason (a node deferred run after
    run is written once, so its journal grows with what heal does, not with how often it runs)."""
    return bool(journal) and journal[-1].event == event and journal[-1].detail.get("why") == why


def isolated_now(journal: Iterable[Event]) -> tuple[str, ...]:
    """The GPUs (PCI addresses) the journal says are out of Slurm's gres now."""
    out: dict[str, None] = {}
    for e in journal:
        raw = e.detail.get("gpus")
        gpus = [g.lower() for g in raw if isinstance(g, str)] if isinstance(raw, list) else []
        if e.event == "isolated":
            out.update(dict.fromkeys(gpus))
        elif e.event == "restored":
            for g in gpus:
                out.pop(g, None)
    return tuple(out)


def needs_human(check: str, what: str) -> str:
    """`rocmprov-heal: needs a human: <check> <what>`, bounded for Slurm's reason."""
    return clean(f"{NEEDS_HUMAN} {check} {what}".rstrip())


def plan_node(
    node: NodeState,
    report: HostReport | None,
    journal: Sequence[Event],
    policy: HealPolicy,
    remedies: Mapping[str, Remedy],
    now: float,
    drain: DrainPolicy | None = None,
    partitions: tuple[str, ...] = (),
    gpus: Mapping[str, str] | None = None,
    isolated: tuple[str, ...] = (),
) -> NodePlan:
    """The table in the module docstring, for one node. `gpus`: the node's GPUs for Slurm
    (PCI address -> gres.conf File=), empty where per-GPU isolation is not set up;
    `isolated`: those taken out already."""

    def plan(step: Step, why: str, **kw: Any) -> NodePlan:
        return NodePlan(node.name, step, why, partitions=partitions, **kw)

    audited = report is not None and not report.failure
    critical = _critical(report, drain, isolated) if audited else []
    if not (node.touchable and node.drained and node.ours):
        raw = _critical(report, drain, ()) if audited else []  # the isolated GPUs' own too
        back = tuple(b for b in isolated if audited and not _names(raw, b))
        if back and node.touchable and not node.drained:
            if not policy.allow_ctld_restart:
                return plan(
                    Step.WAIT,
                    "isolated GPUs pass again: a put-back restarts slurmctld "
                    "(--allow-slurmctld-restart)",
                )
            if node.state.upper().split("+")[0] != "IDLE":
                return plan(Step.WAIT, "isolated GPUs pass again: put back once no job runs")
            return plan(Step.RESTORE, f"{', '.join(back)} pass again: put back", gpus=back)
        return plan(Step.LEAVE, "not drained by the rocmprov gate: left alone")
    named = reason_check(node.reason)
    out = _isolate(node, critical, gpus or {}, isolated) if audited else None
    if out is not None:
        checks = tuple(sorted({f.check for f in critical}))
        if not policy.allow_ctld_restart:
            return plan(
                Step.ESCALATE,
                f"{out[1]}: isolation restarts slurmctld, not allowed (--allow-slurmctld-restart)",
                reason=needs_human(checks[0], "bad GPU, isolation needs a slurmctld restart"),
                checks=checks,
            )
        return plan(out[0], out[1], gpus=out[2], checks=checks)
    if named and is_hardware(named):
        return plan(
            Step.ESCALATE,
            f"the drain names {named}: hardware, no software fix",
            reason=needs_human(named, _what(named, node.reason)),
            checks=(named,),
        )
    if report is None or report.failure:
        why = (report.failure if report else "") or "no audit"
        return plan(Step.WAIT, f"could not audit the node ({why}): next run")
    critical = [
        f
        for f in (drain or DrainPolicy()).select(report.findings)
        if f.severity is Severity.CRITICAL
    ]
    if not critical:
        remedy = remedies.get(named)
        return plan(
            Step.RESUME,
            "no drain finding left",
            verify=remedy.verify if remedy else "audit",
            checks=(named,) if named else (),
        )
    checks = tuple(sorted({f.check for f in critical}))
    human = [f for f in critical if is_hardware(f.check) or f.check not in remedies]
    if human:
        first = min(human, key=lambda f: (f.check, f.subject))
        kind = "hardware" if is_hardware(first.check) else "no automatic remedy"
        return plan(
            Step.ESCALATE,
            f"{first.check}: {kind}",
            reason=needs_human(first.check, _finding_what(first, kind)),
            checks=checks,
        )
    tried = attempts(journal, now, policy.window_s)
    if tried >= policy.max_attempts:
        return plan(
            Step.ESCALATE,
            f"{tried} fix attempts in the window did not hold",
            reason=needs_human(checks[0], f"{tried} repair attempts failed"),
            checks=checks,
        )
    chosen = [remedies[c] for c in checks]
    reboot = any(r.reboot for r in chosen)
    if reboot and not policy.allow_reboot:
        return plan(
            Step.ESCALATE,
            "the fix needs a reboot and the site does not allow one",
            reason=needs_human(checks[0], "fix needs a reboot (not allowed)"),
            checks=checks,
        )
    if node.state.upper().split("+")[0] != "IDLE":  # DRAINING: jobs run until they end
        return plan(Step.WAIT, "jobs still run on the node: the fix waits until it is idle")
    tags = tuple(sorted({t for r in chosen for t in r.tags}))
    verify = "smoke" if any(r.verify == "smoke" for r in chosen) else "audit"
    return plan(
        Step.FIX,
        f"attempt {tried + 1} of {policy.max_attempts}: --tags {','.join(tags)}",
        tags=tags,
        reboot=reboot,
        verify=verify,
        checks=checks,
    )


def plan_fleet(
    plans: Sequence[NodePlan],
    journals: Mapping[str, Sequence[Event]],
    policy: HealPolicy,
    now: float,
) -> list[NodePlan]:
    """The caps over the per-node plans, in the given order (sorted by node name by the caller):
    `per_partition` nodes of a partition in hand at once, `max_reboots` reboots per window."""
    reboots = sum(
        1
        for events in journals.values()
        for e in events
        if e.event == "attempt" and e.detail.get("reboot") and now - e.ts < policy.window_s
    )
    busy: dict[str, int] = {}
    restarted = False  # an isolation or a put-back restarts slurmctld: one per run
    out: list[NodePlan] = []
    for p in plans:
        if p.step not in (Step.FIX, Step.RESUME, Step.ISOLATE, Step.RESTORE):
            out.append(p)
            continue
        # a node in no partition counts in one of its own kind: never uncapped
        parts = p.partitions or (NO_PARTITION,)
        full = [part for part in parts if busy.get(part, 0) >= policy.per_partition]
        if full:
            out.append(_defer(p, f"partition {full[0]} has {policy.per_partition} node(s) in hand"))
            continue
        if p.step in (Step.ISOLATE, Step.RESTORE) and restarted:
            out.append(_defer(p, "one slurmctld restart per run (a GPU count change)"))
            continue
        restarted = restarted or p.step in (Step.ISOLATE, Step.RESTORE)
        if p.step is Step.FIX and p.reboot and reboots >= policy.max_reboots:
            out.append(_defer(p, f"{reboots} reboot(s) in the window: the cap"))
            continue
        reboots += p.step is Step.FIX and p.reboot
        for part in parts:
            busy[part] = busy.get(part, 0) + 1
        out.append(p)
    return out


def _critical(
    report: HostReport | None, drain: DrainPolicy | None, isolated: tuple[str, ...]
) -> list[Finding]:
    """The drain policy's CRITICAL findings, less those about GPUs already isolated."""
    if report is None:
        return []
    return [
        f
        for f in drop_isolated((drain or DrainPolicy()).select(report.findings), isolated)
        if f.severity is Severity.CRITICAL
    ]


def drop_isolated(findings: Iterable[Finding], isolated: Iterable[str]) -> tuple[Finding, ...]:
    """Findings less those whose subject names only GPUs taken out of service (the gate uses
    this too, so an isolated GPU's sticky kernel line does not drain the node again)."""
    out = set(b.lower() for b in isolated)
    return tuple(f for f in findings if not (bdfs(f.subject) and set(bdfs(f.subject)) <= out))


def _names(findings: Iterable[Finding], bdf: str) -> bool:
    return any(bdf in bdfs(f.subject) for f in findings)


def _isolate(
    node: NodeState, critical: list[Finding], gpus: Mapping[str, str], isolated: tuple[str, ...]
) -> tuple[Step, str, tuple[str, ...]] | None:
    """(ISOLATE or WAIT, why, GPUs) when every drain finding is hardware on some GPUs of the node
    and at least one GPU stays good; None otherwise (the other rows of the table decide)."""
    if not gpus or not critical:
        return None
    bad: dict[str, None] = {}
    for f in critical:
        named = bdfs(f.subject)
        if not is_hardware(f.check) or not named or not set(named) <= set(gpus):
            return None
        bad.update(dict.fromkeys(named))
    left = set(gpus) - set(isolated) - set(bad)
    if not left:
        return None  # every GPU bad: the node is a human's
    if node.state.upper().split("+")[0] != "IDLE":
        return Step.WAIT, "jobs still run on the node: isolation waits until it is idle", ()
    gone = tuple(sorted(bad))
    return Step.ISOLATE, f"{', '.join(gone)} bad, {len(left)} GPU(s) good: isolate", gone


def _defer(p: NodePlan, why: str) -> NodePlan:
    return NodePlan(p.node, Step.DEFER, why, checks=p.checks, partitions=p.partitions)


def _what(check: str, reason: str) -> str:
    rest = reason[len(REASON_PREFIX) :].strip().removeprefix(check).strip()
    return f"{rest}: hardware, see the drain bundle" if rest else "hardware, see the drain bundle"


def _finding_what(f: Finding, kind: str) -> str:
    detail = f.actual or f.summary
    return f"{clean(detail, 40)}: {kind}" if detail else kind
