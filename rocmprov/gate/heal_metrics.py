"""The Prometheus textfile of `rocmprov heal` (node_exporter's textfile collector): pure, from
the nodes' journals. Names are stable (docs/health.md, "Metrics")."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

from rocmprov.gate.heal import Event, isolated_now

EVENTS = ("attempt", "fixed", "failed", "resumed", "escalated", "deferred", "isolated", "restored")
METRIC_NAMES = (
    "rocmprov_heal_events",
    "rocmprov_heal_escalated",
    "rocmprov_heal_isolated_gpus",
    "rocmprov_heal_last_run_timestamp_seconds",
)


def _label(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def escalated(events: Sequence[Event]) -> bool:
    """The node's newest decisive event is an escalation (a resume or fix afterwards clears)."""
    for e in reversed(events):
        if e.event == "escalated":
            return True
        if e.event in ("resumed", "fixed", "isolated"):
            return False
    return False


def render(journals: Mapping[str, Sequence[Event]], now: float, window_s: float) -> str:
    lines = [
        "# HELP rocmprov_heal_events Heal events per node and kind in the policy window.",
        "# TYPE rocmprov_heal_events gauge",
    ]
    for node in sorted(journals):
        counts = Counter(e.event for e in journals[node] if now - e.ts < window_s)
        for event in EVENTS:
            lines.append(
                f'rocmprov_heal_events{{node="{_label(node)}",event="{event}"}} {counts[event]}'
            )
    lines += [
        "# HELP rocmprov_heal_escalated 1 while the node waits for a human (heal gave up).",
        "# TYPE rocmprov_heal_escalated gauge",
    ]
    for node in sorted(journals):
        lines.append(
            f'rocmprov_heal_escalated{{node="{_label(node)}"}} {int(escalated(journals[node]))}'
        )
    lines += [
        "# HELP rocmprov_heal_isolated_gpus GPUs of the node taken out of Slurm's gres by heal.",
        "# TYPE rocmprov_heal_isolated_gpus gauge",
    ]
    for node in sorted(journals):
        n = len(isolated_now(journals[node]))
        lines.append(f'rocmprov_heal_isolated_gpus{{node="{_label(node)}"}} {n}')
    lines += [
        "# HELP rocmprov_heal_last_run_timestamp_seconds When rocmprov heal last ran.",
        "# TYPE rocmprov_heal_last_run_timestamp_seconds gauge",
        f"rocmprov_heal_last_run_timestamp_seconds {now:.3f}",
    ]
    return "\n".join(lines) + "\n"
