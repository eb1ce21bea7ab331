"""Live per-host progress of an apply on stderr: a rich table on a TTY, plain lines otherwise.

Host names and task names come from the inventory and the playbooks: printed with markup off.
"""

from __future__ import annotations

import sys
import threading
import time
from typing import Any, TextIO

from rocmprov.provision.runner import ApplyResult, EventCollector
from rocmprov.report.safe import printable


class PlainProgress:
    """One line per task start and per failure/unreachable host (logs, CI, pipes)."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stderr
        self.lock = threading.Lock()

    def __enter__(self) -> PlainProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def __call__(self, col: EventCollector, event: dict[str, Any]) -> None:
        kind = event.get("event", "")
        data = event.get("event_data") or {}
        line = ""
        if kind == "playbook_on_task_start":
            line = f"[{col.task_count:3d}] {data.get('task') or data.get('name') or ''}"
        elif kind == "runner_on_failed" and not data.get("ignore_errors"):
            f = col.failures.get(data.get("host", ""))
            line = f"      FAILED {data.get('host')}: {f.message if f else ''}"
        elif kind == "runner_on_unreachable":
            f = col.failures.get(data.get("host", ""))
            line = f"      UNREACHABLE {data.get('host')}: {f.message if f else ''}"
        if line:
            with self.lock:
                print(printable(line), file=self.stream, flush=True)


class RichProgress:
    """A live table: host | ok | changed | failed | unreachable | skipped | current task."""

    def __init__(self, stream: TextIO | None = None) -> None:
        from rich.console import Console

        self.console = Console(file=stream or sys.stderr, markup=False, highlight=False)
        self.live: Any = None
        self.col: EventCollector | None = None
        self.started = time.monotonic()
        self.last = 0.0

    def __enter__(self) -> RichProgress:
        from rich.live import Live

        self.live = Live(
            self._render(), console=self.console, refresh_per_second=4, transient=False
        )
        self.live.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.live:
            self.live.update(self._render())
            self.live.__exit__(None, None, None)

    def __call__(self, col: EventCollector, event: dict[str, Any]) -> None:
        self.col = col
        now = time.monotonic()
        if self.live and now - self.last > 0.2:
            self.last = now
            self.live.update(self._render())

    def _render(self) -> Any:
        from rich.table import Table
        from rich.text import Text

        elapsed = time.monotonic() - self.started
        col = self.col
        title = f"rocmprov apply  {elapsed:5.0f}s"
        if col:
            title += f"  task {col.task_count}: {col.current_task}"
        title_text = Text(printable(title, one_line=True))
        table = Table(title=title_text, title_justify="left", expand=False)
        for name in ("host", "ok", "changed", "failed", "unreach.", "skipped", "current task"):
            table.add_column(name, justify="left" if name in ("host", "current task") else "right")
        if col:
            with col.lock:
                rows = sorted(col.counts.items())
                for host, c in rows:
                    fail = col.failures.get(host)
                    task = (
                        f"FAILED: {fail.task} (the message follows the table)"
                        if fail and (c["failed"] or c["unreachable"])
                        else col.host_task.get(host, "")
                    )
                    table.add_row(
                        Text(printable(host, one_line=True)),
                        str(c["ok"]),
                        str(c["changed"]),
                        str(c["failed"]),
                        str(c["unreachable"]),
                        str(c["skipped"]),
                        Text(printable(task[:100], one_line=True)),
                    )
        return table


def progress_for(stream: TextIO, quiet: bool = False) -> Any:
    if quiet:
        return None
    return RichProgress(stream) if stream.isatty() else PlainProgress(stream)


def failure_block(host: str, task: str, message: str, *, unreachable: bool = False) -> str:
    """One host's error, readable: host, task and the whole message, each line indented."""
    head = "UNREACHABLE" if unreachable else "FAILED"
    lines = [
        f"{head} {printable(host, one_line=True)}",
        f"  task:    {printable(task, one_line=True)}",
    ]
    body = printable(message).splitlines() or [""]
    lines.append(f"  message: {body[0]}")
    lines += [f"           {ln}" for ln in body[1:]]
    return "\n".join(lines)


def render_summary(result: ApplyResult, stream: TextIO) -> None:
    """The final per-host table (text, no markup)."""
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    console = Console(file=stream, markup=False, highlight=False, width=max(100, 0))
    mode = " (check mode: nothing was changed)" if result.check else ""
    table = Table(
        title=Text(f"rocmprov apply: {result.status}{mode}, {result.duration:.1f}s"),
        title_justify="left",
    )
    for name in (
        "host",
        "status",
        "ok",
        "changed",
        "failed",
        "unreach.",
        "skipped",
        "rescued",
        "details",
    ):
        table.add_column(name, justify="left" if name in ("host", "status", "details") else "right")
    for h in result.hosts:
        details = list(h.notes)
        if h.failure and (h.failed or h.unreachable):
            details.insert(0, "FAILED, see below" if h.failed else "UNREACHABLE, see below")
        table.add_row(
            Text(h.host),
            h.status,
            str(h.ok),
            str(h.changed),
            str(h.failed),
            str(h.unreachable),
            str(h.skipped),
            str(h.rescued),
            Text("; ".join(details)),
        )
    console.print(table)
    for h in result.hosts:  # each error as a block of its own, never inside a table cell
        if h.failure and (h.failed or h.unreachable):
            console.print(Text(failure_block(h.host, h.failure.task, h.failure.message,
                                             unreachable=not h.failed)))  # fmt: skip
    for h in result.hosts:
        if h.changes:
            verb = "would change" if result.check else "changed"
            console.print(Text(printable(f"{h.host} {verb}:", one_line=True), style="bold"))
            for change in h.changes:
                console.print(Text(printable("  " + change.replace("\n", "\n    "))))
    if result.message:
        console.print(Text(result.message))
    console.print(Text(f"run record: {result.run_dir}"))
