"""The I/O of `rocmprov heal` (the plan is gate/heal.py, pure): the per-node journal, the run
lock, the escalation hook, the Prometheus textfile, and scontrol through a transport.

Everything lives in one private state directory (`<state>/heal`, 0700, never through a link):
`journal/<node>.jsonl` (one JSON object a line, 0600, appended), `lock` (flock: one heal run at
a time; a shared directory with working locks lets several controllers share it).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import shlex
import signal
import subprocess
import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rocmprov.gate.heal import Event
from rocmprov.gate.slurm import NodeState, SlurmError, clean, parse_show_node
from rocmprov.store.atomic import DIR_FLAGS, open_private_dir, replace_in_dir
from rocmprov.transport.base import Transport

JOURNAL_READ_MAX = 1024 * 1024  # the newest MiB of a node's journal is read
_APPEND = os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC
_NODE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
METRICS_FILE = "rocmprov_heal.prom"
HOOK_TIMEOUT_S = 30.0


class HealStateError(RuntimeError):
    """The state directory cannot be used (another user's, a link, locked by another run)."""


class StateDir:
    """`<state>/heal`, opened once (0700, no link followed)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            self.fd = open_private_dir(path)
            with contextlib.suppress(FileExistsError):
                os.mkdir("journal", 0o700, dir_fd=self.fd)
            self.journal_fd = os.open("journal", DIR_FLAGS, dir_fd=self.fd)
        except OSError as exc:
            raise HealStateError(f"{path}: {exc.strerror or exc}") from exc
        self._lock_fd: int | None = None

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """One heal run at a time: a second one stops at once with HealStateError."""
        fd = os.open(
            "lock", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600, dir_fd=self.fd
        )
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise HealStateError(f"another rocmprov heal holds {self.path}/lock") from None
            yield
        finally:
            os.close(fd)

    def append(self, event: Event) -> None:
        _check_node(event.node)
        line = json.dumps(
            {
                "ts": round(event.ts, 3),
                "node": event.node,
                "event": event.event,
                **dict(event.detail),
            },
            sort_keys=True,
        )
        fd = os.open(f"{event.node}.jsonl", _APPEND, 0o600, dir_fd=self.journal_fd)
        try:
            os.fchmod(fd, 0o600)
            size = os.fstat(fd).st_size
            # a line cut short (a run killed mid-write) is ended first: it alone is lost
            cut = size > 0 and os.pread(fd, 1, size - 1) != b"\n"
            os.write(fd, (("\n" if cut else "") + line + "\n").encode("utf-8"))
        finally:
            os.close(fd)

    def journal(self, node: str) -> list[Event]:
        """The node's events (the newest MiB); a line that is not ours is skipped."""
        _check_node(node)
        try:
            fd = os.open(
                f"{node}.jsonl", os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=self.journal_fd
            )
        except FileNotFoundError:
            return []
        with os.fdopen(fd, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            fh.seek(max(0, size - JOURNAL_READ_MAX))
            data = fh.read(JOURNAL_READ_MAX)
        events = []
        for raw in data.decode("utf-8", "replace").splitlines():
            try:
                doc = json.loads(raw)
            except ValueError:
                continue
            if isinstance(doc, dict) and isinstance(doc.get("ts"), int | float):
                detail = {k: v for k, v in doc.items() if k not in ("ts", "node", "event")}
                events.append(Event(float(doc["ts"]), node, str(doc.get("event")), detail))
        return events

    def journals(self) -> dict[str, list[Event]]:
        """Every node's journal (the fleet-wide reboot cap counts nodes back in service too)."""
        return {n: self.journal(n) for n in self.nodes()}

    def nodes(self) -> list[str]:
        return sorted(
            n.removesuffix(".jsonl")
            for n in os.listdir(self.journal_fd)
            if n.endswith(".jsonl") and _NODE.fullmatch(n.removesuffix(".jsonl"))
        )


def _check_node(node: str) -> None:
    if not _NODE.fullmatch(node):
        raise ValueError(f"not a Slurm node name: {node!r}")


# --- the escalation hook -------------------------------------------------------------------


@dataclass(frozen=True)
class HookResult:
    rc: int | None
    error: str = ""


def run_hook(argv: Sequence[str], event: Mapping[str, Any], timeout: float) -> HookResult:
    """The site's hook: argv as given (no shell), the event as one JSON document on stdin and
    ROCMPROV_HEAL_NODE / ROCMPROV_HEAL_EVENT in a small environment of its own (PATH, HOME,
    locale, proxies; nothing else of ours, which may hold a vault password or a token; nothing
    secret on a command line either: a ticket token stays in the hook's own configuration).
    Its stdout is discarded, the first HOOK_OUTPUT_MAX bytes of stderr kept (the rest read and
    dropped); after `timeout` it is killed with every process it started (its own session)."""
    env = {k: v for k, v in os.environ.items() if k in _HOOK_ENV or k.startswith("LC_")}
    env["ROCMPROV_HEAL_NODE"] = str(event.get("node", ""))
    env["ROCMPROV_HEAL_EVENT"] = str(event.get("event", ""))
    try:
        proc = subprocess.Popen(
            list(argv),
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env=env,
            start_new_session=True,
        )
    except OSError as exc:
        return HookResult(None, clean(f"{argv[0]}: {exc.strerror or exc}", 160))
    kept = bytearray()
    reader = threading.Thread(target=_drain, args=(proc.stderr, kept), daemon=True)
    reader.start()
    with contextlib.suppress(OSError):  # a hook that does not read its stdin
        assert proc.stdin is not None
        proc.stdin.write(json.dumps(dict(event), sort_keys=True).encode("utf-8"))
        proc.stdin.close()
    try:
        rc: int | None = proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        rc = None
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    reader.join(5)  # a child still holding stderr: left to the daemon thread
    if rc is None:
        return HookResult(None, f"timed out after {timeout:g}s")
    err = clean(bytes(kept).decode("utf-8", "replace"), 160) if rc else ""
    return HookResult(rc, err)


_HOOK_ENV = frozenset(
    {
        "PATH",
        "HOME",
        "USER",
        "LOGNAME",
        "LANG",
        "TZ",
        "TMPDIR",
        "http_proxy",
        "https_proxy",
        "no_proxy",
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "NO_PROXY",
    }
)
HOOK_OUTPUT_MAX = 4096


def _drain(stream: Any, kept: bytearray) -> None:
    """Read `stream` to its end, keeping its first HOOK_OUTPUT_MAX bytes."""
    with contextlib.suppress(OSError, ValueError):
        while chunk := stream.read1(65536):
            if len(kept) < HOOK_OUTPUT_MAX:
                kept.extend(chunk[: HOOK_OUTPUT_MAX - len(kept)])


# --- Prometheus textfile -------------------------------------------------------------------


def write_metrics(directory: Path, text: str) -> None:
    """`rocmprov_heal.prom` in node_exporter's textfile directory, replaced atomically."""
    fd = open_private_dir(directory) if not directory.exists() else _open_dir(directory)
    try:
        replace_in_dir(fd, METRICS_FILE, text.encode("utf-8"), 0o644)
    finally:
        os.close(fd)


def _open_dir(directory: Path) -> int:
    return os.open(directory, DIR_FLAGS)


# --- scontrol through a transport (this machine, or the Slurm controller over SSH) ----------


class Slurm:
    def __init__(self, transport: Transport, scontrol: str = "scontrol", timeout: float = 20):
        self.transport, self.scontrol, self.timeout = transport, scontrol, timeout

    def _run(self, *args: str) -> str:
        cmd = "LC_ALL=C " + shlex.join([self.scontrol, *args])
        res = self.transport.run(cmd, timeout=self.timeout)
        if not res.ok:
            err = clean(res.stderr or res.stdout or f"exit {res.rc}", 200)
            raise SlurmError(f"scontrol {' '.join(args[:2])} failed: {err}")
        return res.stdout

    def show(self, name: str) -> tuple[NodeState, tuple[str, ...]]:
        text = self._run("show", "node", name)
        return parse_show_node(text, name), parse_partitions(text)

    def drain(self, name: str, reason: str) -> None:
        self._run("update", f"nodename={name}", "state=drain", f"reason={clean(reason)}")

    def resume(self, name: str) -> None:
        self._run("update", f"nodename={name}", "state=resume")


def parse_partitions(text: str) -> tuple[str, ...]:
    """`Partitions=main,gpu` of `scontrol show node` (none: ())."""
    for token in text.split():
        if token.startswith("Partitions="):
            value = token[len("Partitions=") :]
            return tuple(p for p in value.split(",") if p and p != "(null)")
    return ()
