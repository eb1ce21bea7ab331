"""ansible-runner events -> per-host results (counts, current task, failure, notes)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

# ------------------------------------------------------------------ results


@dataclass(frozen=True)
class FailedTask:
    task: str
    message: str
    role: str = ""


@dataclass(frozen=True)
class HostResult:
    host: str
    ok: int = 0
    changed: int = 0
    failed: int = 0
    unreachable: int = 0
    skipped: int = 0
    rescued: int = 0
    ignored: int = 0
    failure: FailedTask | None = None
    notes: tuple[str, ...] = ()
    # What changed (or, in check mode, would change): the task, and the diff when --diff.
    changes: tuple[str, ...] = ()

    @property
    def status(self) -> str:
        if self.unreachable:
            return "unreachable"
        if self.failed:
            return "failed"
        return "changed" if self.changed else "ok"

    def to_dict(self) -> dict[str, Any]:
        return {
            "host": self.host,
            "status": self.status,
            "ok": self.ok,
            "changed": self.changed,
            "failed": self.failed,
            "unreachable": self.unreachable,
            "skipped": self.skipped,
            "rescued": self.rescued,
            "ignored": self.ignored,
            "failed_task": (
                {
                    "task": self.failure.task,
                    "role": self.failure.role,
                    "message": self.failure.message,
                }
                if self.failure and (self.failed or self.unreachable)
                else None
            ),
            "notes": list(self.notes),
            "changes": list(self.changes),
        }


# ------------------------------------------------------------------ events


class EventCollector:
    """Turns ansible-runner events into per-host counts, current tasks and failures.

    Thread-safe: runner calls the handler from its own thread while progress reads it.
    """

    def __init__(self, on_change: Callable[[EventCollector, dict[str, Any]], None] | None = None):
        self.lock = threading.Lock()
        self.on_change = on_change
        self.current_task = ""
        self.task_count = 0
        self.host_task: dict[str, str] = {}
        self.counts: dict[str, dict[str, int]] = {}
        self.failures: dict[str, FailedTask] = {}
        self.notes: dict[str, list[str]] = {}
        self.changes: dict[str, list[str]] = {}
        self.stats: dict[str, dict[str, int]] | None = None

    def _count(self, host: str, key: str) -> None:
        c = self.counts.setdefault(
            host, {"ok": 0, "changed": 0, "failed": 0, "unreachable": 0, "skipped": 0}
        )
        c[key] += 1

    def handle(self, event: dict[str, Any]) -> bool:
        kind = event.get("event", "")
        data = event.get("event_data") or {}
        host = data.get("host") or ""
        with self.lock:
            if kind == "playbook_on_task_start":
                self.current_task = data.get("task") or data.get("name") or ""
                self.task_count += 1
            elif kind == "runner_on_start" and host:
                self.host_task[host] = data.get("task") or ""
                self.counts.setdefault(
                    host, {"ok": 0, "changed": 0, "failed": 0, "unreachable": 0, "skipped": 0}
                )
            elif kind == "runner_on_ok" and host:
                res = data.get("res") or {}
                self._count(host, "changed" if res.get("changed") else "ok")
                self._note(host, res)
                if res.get("changed"):
                    self._change(host, data.get("task") or "", res)
            elif kind == "runner_on_skipped" and host:
                self._count(host, "skipped")
            elif kind == "runner_on_failed" and host:
                self._count(host, "failed")
                if not data.get("ignore_errors"):
                    self.failures[host] = FailedTask(
                        task=data.get("task") or "",
                        message=failure_message(data.get("res")),
                        role=data.get("role") or "",
                    )
            elif kind == "runner_on_unreachable" and host:
                self._count(host, "unreachable")
                self.failures[host] = FailedTask(
                    task=data.get("task") or "",
                    message=failure_message(data.get("res")),
                    role=data.get("role") or "",
                )
            elif kind == "playbook_on_stats":
                self.stats = {
                    key: dict(data.get(key) or {})
                    for key in (
                        "ok",
                        "changed",
                        "failures",
                        "dark",
                        "skipped",
                        "rescued",
                        "ignored",
                        "processed",
                    )
                }
        if self.on_change:
            self.on_change(self, event)
        return True  # without True, runner keeps no events and no stats

    def _note(self, host: str, res: Mapping[str, Any]) -> None:
        facts = res.get("ansible_facts") or {}
        if facts.get("rocmprov_reboot_required") in (True, "True", "true"):
            self._add_note(host, "reboot required (rerun with -e rocmprov_reboot=true)")
        report = facts.get("rocmprov_torch_report")
        if isinstance(report, dict):
            self._add_note(host, f"torch {report.get('torch')} hip {report.get('hip')}")
        fw = facts.get("rocmprov_firmware_report")
        if isinstance(fw, dict):
            self._add_note(host, f"firmware: {str(fw.get('state', '')).strip()}")
        ctr = facts.get("rocmprov_containers_report")
        if isinstance(ctr, dict):
            self._add_note(host, f"containers: {str(ctr.get('state', '')).strip()}")

    def _change(self, host: str, task: str, res: Mapping[str, Any]) -> None:
        changes = self.changes.setdefault(host, [])
        if len(changes) < MAX_CHANGES:
            changes.append(describe_change(task, res))

    def _add_note(self, host: str, note: str) -> None:
        notes = self.notes.setdefault(host, [])
        if note not in notes:
            notes.append(note)

    def results(self) -> tuple[HostResult, ...]:
        with self.lock:
            hosts: list[str] = list(self.counts)
            stats = self.stats
            if stats:
                for key in stats.values():
                    for h in key:
                        if h not in hosts:
                            hosts.append(h)
            out = []
            for h in hosts:
                if stats:
                    s = {k: int(v.get(h, 0)) for k, v in stats.items()}
                    r = HostResult(
                        host=h,
                        ok=s["ok"],
                        changed=s["changed"],
                        failed=s["failures"],
                        unreachable=s["dark"],
                        skipped=s["skipped"],
                        rescued=s["rescued"],
                        ignored=s["ignored"],
                        failure=self.failures.get(h),
                        notes=tuple(self.notes.get(h, ())),
                        changes=tuple(self.changes.get(h, ())),
                    )
                else:  # interrupted: what the events said so far
                    c = self.counts.get(h, {})
                    r = HostResult(
                        host=h,
                        ok=c.get("ok", 0) + c.get("changed", 0),
                        changed=c.get("changed", 0),
                        failed=c.get("failed", 0),
                        unreachable=c.get("unreachable", 0),
                        skipped=c.get("skipped", 0),
                        failure=self.failures.get(h),
                        notes=tuple(self.notes.get(h, ())),
                        changes=tuple(self.changes.get(h, ())),
                    )
                out.append(r)
            return tuple(sorted(out, key=lambda r: r.host))


MAX_CHANGES = 200  # per host
MAX_CHANGE_CHARS = 4000  # per change


def describe_change(task: str, res: Mapping[str, Any]) -> str:
    """One change as the admin reads it: the task, a short message (e.g. the key URL check mode
    would fetch), and a unified diff of each file when Ansible sent one (--diff); a loop's
    changed items each with theirs. Scrubbed, bounded."""
    from rocmprov.collect.scrub import scrub

    lines = [task]
    items = res.get("results")
    if isinstance(items, list):
        for item in items:
            if isinstance(item, Mapping) and item.get("changed"):
                label = item.get("_ansible_item_label", item.get("item", ""))
                lines.append(f"  item {label}")
                lines += _change_lines(item)
    else:
        lines += _change_lines(res)
    text = scrub("\n".join(lines))
    return text if len(text) <= MAX_CHANGE_CHARS else text[:MAX_CHANGE_CHARS] + "\n  ... (cut)"


def _change_lines(res: Mapping[str, Any]) -> list[str]:
    import difflib

    lines: list[str] = []
    msg = res.get("msg")
    if isinstance(msg, str) and msg and msg != "All items completed":
        first = msg.strip().splitlines()
        lines += [f"  {m}" for m in first[:3]] + (["  ..."] if len(first) > 3 else [])
    diffs = res.get("diff")
    for d in diffs if isinstance(diffs, list) else [diffs] if isinstance(diffs, dict) else []:
        if not isinstance(d, dict):
            continue
        if isinstance(d.get("prepared"), str):
            lines += d["prepared"].rstrip("\n").splitlines()[:40]
            continue
        before, after = d.get("before"), d.get("after")
        if isinstance(before, str) and isinstance(after, str):
            lines += difflib.unified_diff(
                before.splitlines(),
                after.splitlines(),
                str(d.get("before_header", "before")),
                str(d.get("after_header", "after")),
                lineterm="",
            )
        elif isinstance(before, dict) and isinstance(after, dict):  # file state, mode...
            lines += [f"  {k}: {before.get(k)} -> {v}" for k, v in after.items()
                      if before.get(k) != v]  # fmt: skip
    return lines


def failure_message(res: Any, limit: int = 500) -> str:
    """One readable line from a failed task's result."""
    if not isinstance(res, dict):
        return str(res or "")[:limit]
    parts: list[str] = []
    msg = res.get("msg")
    if msg:
        parts.append(str(msg))
    stderr = (res.get("stderr") or "").strip()
    if stderr and stderr not in parts[0:1]:
        parts.append(stderr.splitlines()[-1] if len(stderr) > limit else stderr)
    if not parts:
        out = (res.get("stdout") or "").strip()
        if out:
            parts.append(out.splitlines()[-1])
    if not parts and res.get("results"):  # a loop: the first failed item
        for item in res["results"]:
            if isinstance(item, dict) and item.get("failed"):
                return failure_message(item, limit)
    text = " | ".join(" ".join(p.split()) for p in parts) or "failed (no message)"
    return text if len(text) <= limit else text[: limit - 3] + "..."
