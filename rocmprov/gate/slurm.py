"""The Slurm node health gate: an audit result + the node's state -> drain, resume or nothing.

Only the findings the drain policy selects count (gate/policy.py: GPU, driver and kernel-GPU
families by default); "the audit" below means those findings. Decision table (decide(), pure):

| audit (worst)         | node                                        | action                     |
|-----------------------|---------------------------------------------|----------------------------|
| any                   | not in a state the gate may touch (DOWN,    | nothing: the admin's       |
|                       | FAIL, MAINT, REBOOT_*, POWER*, FUTURE, ...) |                            |
| CRITICAL              | in service, not drained                     | drain, reason `rocmprov:`  |
| CRITICAL              | drained by rocmprov                         | drain again only if the    |
|                       |                                             | reason changed             |
| CRITICAL              | drained by someone else                     | nothing (their reason)     |
| OK / WARNING          | drained by rocmprov                         | resume                     |
| OK / WARNING          | anything else                               | nothing                    |
| UNKNOWN (or no audit) | any                                         | nothing: never drain, never|
|                       |                                             | resume on what it can't see|

A state the gate may touch: base state IDLE, ALLOCATED or MIXED, and no flag but DRAIN,
COMPLETING, RESERVED, PLANNED, CLOUD, DYNAMIC or DYNAMIC_NORM. Slurm's `state=resume` clears
DRAIN *and* FAIL and turns DOWN into IDLE, and `state=drain` replaces the reason: so a node an
admin set DOWN, FAIL or into maintenance is never drained (its reason would be lost) nor
resumed.
"Drained by rocmprov" means the node's reason starts with REASON_PREFIX; an admin's drain
("admin: bad fan") is never resumed. I/O (show_node, update_node) runs scontrol with an argv
list, no shell, a timeout and LC_ALL=C.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass
from enum import Enum

from rocmprov.gate.policy import DrainPolicy
from rocmprov.model import Finding, HostReport, Severity, worst

REASON_PREFIX = "rocmprov:"
REASON_MAX = 120  # Slurm keeps more, but `sinfo -R` shows a short column
TIMEOUT_S = 10.0

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")
# scontrol appends "[user@time]" to the reason it shows
_REASON_STAMP = re.compile(r"\s*\[[^\[\]]*@[^\[\]]*\]\s*$")
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
IN_SERVICE = frozenset({"IDLE", "ALLOCATED", "MIXED"})
HARMLESS_FLAGS = frozenset(
    {"DRAIN", "COMPLETING", "RESERVED", "PLANNED", "CLOUD", "DYNAMIC", "DYNAMIC_NORM"}
)


class Action(Enum):
    NONE = "none"
    DRAIN = "drain"
    RESUME = "resume"


@dataclass(frozen=True)
class NodeState:
    """What `scontrol show node` says: State (e.g. IDLE+DRAIN) and Reason (stamp removed)."""

    name: str
    state: str
    reason: str = ""

    @property
    def flags(self) -> frozenset[str]:
        return frozenset(p for p in self.state.upper().split("+") if p)

    @property
    def drained(self) -> bool:
        """DRAIN flag set (DRAINING and DRAINED in sinfo are IDLE/ALLOCATED + DRAIN here)."""
        return bool(self.flags & {"DRAIN", "DRAINING", "DRAINED"})

    @property
    def ours(self) -> bool:
        return self.reason.startswith(REASON_PREFIX)

    @property
    def touchable(self) -> bool:
        """In service or drained, nothing else: the gate may drain or resume it."""
        # sinfo-style suffixes (IDLE* not responding, IDLE~ powered off, IDLE$ maintenance...)
        # are not IDLE: left alone like their flags
        base, *flags = [p for p in self.state.upper().split("+") if p] or [""]
        return base in IN_SERVICE and set(flags) <= HARMLESS_FLAGS


@dataclass(frozen=True)
class Decision:
    action: Action
    reason: str = ""  # the drain reason, for Action.DRAIN
    why: str = ""  # one line for the log


def clean(text: str, limit: int = REASON_MAX) -> str:
    """One line, no control characters, no quotes (scontrol strips them), at most `limit`."""
    text = _CONTROL.sub(" ", text).replace('"', "'")
    text = " ".join(text.split())
    if len(text) > limit:
        text = text[: max(limit - 3, 0)].rstrip() + "..."
    return text


def _compare(actual: str, expected: str) -> str:
    """`x8<x16`: the sign from the numbers in both where each has one, else `!=`."""
    if not expected:
        return actual
    if not actual:
        return f"want {expected}"
    if expected[:1] in "<>=!":
        return f"{actual}{expected}"
    a, e = _NUMBER.findall(actual), _NUMBER.findall(expected)
    if len(a) == 1 and len(e) == 1:
        x, y = float(a[0]), float(e[0])
        sign = "<" if x < y else ">" if x > y else "!="
        return f"{actual}{sign}{expected}"
    return f"{actual}!={expected}"


def drain_reason(findings: Iterable[Finding]) -> str:
    """`rocmprov: pcie.link.width x8<x16` for the first critical finding (by check id),
    `(+N more)` when there are others; cleaned and bounded."""
    critical = sorted(
        (f for f in findings if f.severity is Severity.CRITICAL),
        key=lambda f: (f.check, f.subject),
    )
    if not critical:
        return ""
    first = critical[0]
    if _NUMBER.search(first.expected) or len(first.expected) <= 24:
        detail = _compare(clean(first.actual, 40), clean(first.expected, 40))
    else:  # "no such line in the kernel log": the line itself says it
        detail = clean(first.actual, 80)
    detail = detail or clean(first.summary, 60)
    more = f" (+{len(critical) - 1} more)" if len(critical) > 1 else ""
    head = clean(f"{REASON_PREFIX} {first.check} {detail}", REASON_MAX - len(more))
    return head + more


def decide(
    report: HostReport | None, node: NodeState, policy: DrainPolicy | None = None
) -> Decision:
    """The decision table in the module docstring. `report` None: the audit could not run."""
    if report is None:
        return Decision(Action.NONE, why="audit did not run: no change")
    if not node.touchable:
        return Decision(
            Action.NONE,
            why=f"node {clean(node.state, 40)} ({clean(node.reason, 60) or 'no reason'}): "
            "not a state the gate touches, left alone",
        )
    findings = (policy or DrainPolicy()).select(report.findings)
    severity = Severity.UNKNOWN if report.failure else worst([f.severity for f in findings])
    if severity is Severity.CRITICAL:
        reason = drain_reason(findings)
        if node.drained and not node.ours:
            return Decision(
                Action.NONE,
                why=f"drained by someone else ({clean(node.reason, 60)}): "
                f"left alone; would be {reason}",
            )
        if node.drained and node.reason == reason:
            return Decision(Action.NONE, why=f"still drained: {reason}")
        return Decision(Action.DRAIN, reason=reason, why=f"drain: {reason}")
    if severity is Severity.UNKNOWN:
        return Decision(Action.NONE, why="drain findings UNKNOWN: never drains, no change")
    if node.drained and node.ours:
        return Decision(
            Action.RESUME,
            why=f"drain findings {severity.value.upper()}: resume (was {clean(node.reason, 60)})",
        )
    if node.drained:
        return Decision(
            Action.NONE,
            why=f"drain findings {severity.value.upper()}: drained by someone "
            f"else ({clean(node.reason, 60)}), left alone",
        )
    return Decision(Action.NONE, why=f"drain findings {severity.value.upper()}: no change")


# --- scontrol ---------------------------------------------------------------------------------


class SlurmError(RuntimeError):
    """scontrol is missing, timed out, or refused: the gate could not do its job."""


def parse_show_node(text: str, name: str) -> NodeState:
    """`scontrol show node NAME` (multi-line form) -> NodeState. Reason has spaces: its own line."""
    state = ""
    reason = ""
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("Reason="):
            reason = _REASON_STAMP.sub("", stripped[len("Reason=") :]).strip()
            continue
        for token in stripped.split():
            if token.startswith("State="):
                state = token[len("State=") :]
    if not state:
        raise SlurmError(f"no State= for node {name} in scontrol's output")
    if reason in ("(null)", "None"):
        reason = ""
    return NodeState(name=name, state=state, reason=reason)


def _scontrol(argv: list[str], timeout: float) -> str:
    env = {**os.environ, "LC_ALL": "C"}
    try:
        done = subprocess.run(
            argv,
            capture_output=True,
            text=True,
            timeout=timeout,
            env=env,
            check=False,
            stdin=subprocess.DEVNULL,
        )
    except FileNotFoundError as exc:
        raise SlurmError(f"{argv[0]} not found") from exc
    except subprocess.TimeoutExpired as exc:
        raise SlurmError(f"{' '.join(argv[:3])} timed out after {timeout:g}s") from exc
    except OSError as exc:
        raise SlurmError(f"{argv[0]}: {exc.strerror or exc}") from exc
    if done.returncode != 0:
        err = clean(done.stderr or done.stdout or f"exit {done.returncode}", 200)
        raise SlurmError(f"{' '.join(argv[:3])} failed: {err}")
    return done.stdout


def show_node(name: str, *, scontrol: str = "scontrol", timeout: float = TIMEOUT_S) -> NodeState:
    return parse_show_node(_scontrol([scontrol, "show", "node", name], timeout), name)


def update_argv(name: str, decision: Decision, scontrol: str = "scontrol") -> list[str] | None:
    """The scontrol argv that carries out `decision` (None for Action.NONE)."""
    if decision.action is Action.DRAIN:
        return [
            scontrol,
            "update",
            f"nodename={name}",
            "state=drain",
            f"reason={clean(decision.reason)}",
        ]
    if decision.action is Action.RESUME:
        return [scontrol, "update", f"nodename={name}", "state=resume"]
    return None


def apply_decision(
    name: str, decision: Decision, *, scontrol: str = "scontrol", timeout: float = TIMEOUT_S
) -> None:
    argv = update_argv(name, decision, scontrol)
    if argv:
        _scontrol(argv, timeout)


# --- an audit document as input (testing, forensics, or an audit run elsewhere) --------------

AUDIT_SCHEMA = "rocmprov.audit/1"


def report_from_document(doc: object) -> HostReport:
    """The first host of a `rocmprov.audit/1` document (`rocmprov audit --format json`).
    ValueError names what is wrong."""
    if not isinstance(doc, dict) or doc.get("schema") != AUDIT_SCHEMA:
        raise ValueError(f"not a {AUDIT_SCHEMA} document")
    hosts = doc.get("hosts")
    if not isinstance(hosts, list) or len(hosts) != 1 or not isinstance(hosts[0], dict):
        raise ValueError("the document must hold exactly one host")
    host = hosts[0]
    findings = []
    for i, f in enumerate(host.get("findings") or []):
        if not isinstance(f, dict) or not isinstance(f.get("check"), str):
            raise ValueError(f"finding {i} has no check")
        try:
            severity = Severity(f.get("severity"))
        except ValueError:
            raise ValueError(f"finding {i} has an unknown severity") from None
        text = {k: str(f.get(k) or "") for k in ("summary", "actual", "expected", "subject")}
        findings.append(Finding(f["check"], severity, **text))
    status = str(host.get("status") or "audited")
    return HostReport(
        host=str(host.get("host") or ""),
        findings=tuple(findings),
        failure="" if status == "audited" else status,
        message=str(host.get("message") or ""),
    )
