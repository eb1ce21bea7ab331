"""Run the packaged playbooks (playbooks/site.yml) through ansible-runner; events -> results.

One run = one fresh private data directory under the user's state directory
($XDG_STATE_HOME or ~/.local/state)/rocmprov/runs/<timestamp>-<n>/: a reused one would replay
old env/cmdline (even --check). The directory is the durable record of the run (command,
stdout, rc, status, job_events/*.json), kept with secrets scrubbed.

Traps of ansible-runner handled here: the event_handler returns True (else events and stats are
dropped), check/diff go through `cmdline`, and a cancel_callback is always given (else runner
installs its own SIGINT handler).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rocmprov.exitcodes import Exit, UsageError

SCHEMA = "rocmprov.apply/1"
PLAYBOOK = "site.yml"

# Connection speed-ups, also in playbooks/ansible.cfg (read because the run's working
# directory is the playbooks directory); set here too so a user's ANSIBLE_CONFIG cannot drop them.
BASE_ENV: dict[str, str] = {
    # ansible-runner turns host key checking OFF unless this is set: keep it on, always.
    "ANSIBLE_HOST_KEY_CHECKING": "True",
    "ANSIBLE_PIPELINING": "True",
    "ANSIBLE_SSH_ARGS": "-o ControlMaster=auto -o ControlPersist=60s -o ServerAliveInterval=15",
    "ANSIBLE_RETRY_FILES_ENABLED": "False",
    "ANSIBLE_NOCOLOR": "1",
    "ANSIBLE_FORCE_COLOR": "0",
    "ANSIBLE_DEPRECATION_WARNINGS": "False",
    "ANSIBLE_INTERPRETER_PYTHON": "auto_silent",
}

# Extra-var names whose values never reach the run record.
SECRET_KEY = re.compile(r"pass|secret|token|credential|vault|private_key|api_key", re.I)
PRIVATE_KEY_BLOCK = re.compile(
    r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?-----END [A-Z ]*PRIVATE KEY-----", re.S
)
REDACTED = "********"
_VAR_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


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
        }


@dataclass(frozen=True)
class ApplyOptions:
    inventory: str
    check: bool = False
    diff: bool = False
    limit: str | None = None
    tags: str | None = None
    skip_tags: str | None = None
    forks: int | None = None
    extravars: Mapping[str, Any] = field(default_factory=dict)
    playbook_dir: str | None = None  # default: the packaged playbooks
    state_dir: str | None = None  # default: $XDG_STATE_HOME/rocmprov/runs
    timeout: int | None = None


@dataclass(frozen=True)
class ApplyResult:
    status: str  # successful | failed | canceled | timeout | error
    ansible_rc: int | None
    hosts: tuple[HostResult, ...]
    run_dir: str
    duration: float
    check: bool
    command: str
    message: str = ""

    @property
    def exit_code(self) -> Exit:
        if self.status == "canceled":
            return Exit.INTERRUPTED
        if any(h.failed for h in self.hosts):
            return Exit.CRITICAL
        if any(h.unreachable for h in self.hosts):
            return Exit.UNKNOWN
        if self.status != "successful" or not self.hosts:
            return Exit.UNKNOWN
        return Exit.OK

    def to_dict(self) -> dict[str, Any]:
        totals = {
            k: sum(getattr(h, k) for h in self.hosts)
            for k in ("ok", "changed", "failed", "unreachable", "skipped", "rescued", "ignored")
        }
        return {
            "schema": SCHEMA,
            "status": self.status,
            "exit_code": int(self.exit_code),
            "check": self.check,
            "ansible_rc": self.ansible_rc,
            "duration_s": round(self.duration, 2),
            "run_dir": self.run_dir,
            "command": self.command,
            "message": self.message,
            "totals": totals,
            "hosts": [h.to_dict() for h in self.hosts],
        }


# ------------------------------------------------------------------ inputs


def parse_extravars(items: Sequence[str]) -> dict[str, Any]:
    """-e k=v (true/false become booleans, the rest stays text), -e @file.yml, -e '{json}'."""
    import yaml

    out: dict[str, Any] = {}
    for item in items:
        item = item.strip()
        if item.startswith("@"):
            path = Path(item[1:]).expanduser()
            try:
                data = yaml.safe_load(path.read_text())
            except OSError as exc:
                raise UsageError(f"-e {item}: {exc.strerror or exc}") from exc
            except yaml.YAMLError as exc:
                raise UsageError(f"-e {item}: not YAML ({str(exc).splitlines()[0]})") from exc
            if not isinstance(data, dict):
                raise UsageError(f"-e {item}: the file must hold a mapping of variables")
            pairs = data.items()
        elif item.startswith("{"):
            try:
                data = json.loads(item)
            except json.JSONDecodeError as exc:
                raise UsageError(f"-e {item!r}: not JSON ({exc.msg})") from exc
            if not isinstance(data, dict):
                raise UsageError(f"-e {item!r}: must be a JSON object")
            pairs = data.items()
        else:
            key, sep, value = item.partition("=")
            if not sep:
                raise UsageError(f"-e {item!r}: expected KEY=VALUE, @FILE or a JSON object")
            low = value.strip().lower()
            pairs = [(key.strip(), True if low == "true" else False if low == "false" else value)]
        for key, value in pairs:
            if not isinstance(key, str) or not _VAR_NAME.match(key):
                raise UsageError(f"-e: {key!r} is not a valid variable name")
            out[key] = value
    return out


def playbook_dir() -> Path:
    """The packaged playbooks (rocmprov.playbooks), a real directory on disk."""
    from rocmprov.paths import playbooks_dir

    path = playbooks_dir()
    if not (path / PLAYBOOK).is_file():
        raise UsageError(f"the packaged playbooks are missing ({path / PLAYBOOK})")
    return path


def state_root(override: str | None = None) -> Path:
    if override:
        return Path(override)
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "rocmprov" / "runs"


def fresh_run_dir(root: Path) -> Path:
    """A new, never used directory (0700) for this run's private data and artifacts."""
    root.mkdir(parents=True, exist_ok=True, mode=0o700)
    stamp = time.strftime("%Y%m%dT%H%M%S")
    for n in range(1000):
        d = root / (stamp if n == 0 else f"{stamp}-{n}")
        try:
            d.mkdir(mode=0o700)
        except FileExistsError:
            continue
        return d
    raise UsageError(f"cannot make a run directory under {root}")


def build_cmdline(opts: ApplyOptions) -> list[str]:
    args: list[str] = []
    if opts.check:
        args.append("--check")
    if opts.diff:
        args.append("--diff")
    if opts.tags:
        args += ["--tags", opts.tags]
    if opts.skip_tags:
        args += ["--skip-tags", opts.skip_tags]
    return args


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
                    )
                out.append(r)
            return tuple(sorted(out, key=lambda r: r.host))


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


# ------------------------------------------------------------------ scrubbing


def secret_values(extravars: Mapping[str, Any]) -> list[str]:
    vals: list[str] = []
    for k, v in extravars.items():
        if SECRET_KEY.search(k):
            if isinstance(v, str | int | float) and str(v) and str(v) not in ("True", "False"):
                vals.append(str(v))
        elif isinstance(v, Mapping):
            vals += secret_values(v)
    return sorted(set(vals), key=len, reverse=True)


def scrub_run_dir(run_dir: Path, extravars: Mapping[str, Any]) -> int:
    """Remove credentials from the run record; returns how many files were rewritten."""
    for name in ("env/passwords", "env/ssh_key"):
        (run_dir / name).unlink(missing_ok=True)
    secrets = [s for s in secret_values(extravars) if len(s) >= 3]
    rewritten = 0
    for path in run_dir.rglob("*"):
        if not path.is_file() or path.is_symlink():
            continue
        try:
            text = path.read_text(errors="strict")
        except (UnicodeDecodeError, OSError):
            continue
        new = PRIVATE_KEY_BLOCK.sub(REDACTED, text)
        for s in secrets:
            new = new.replace(s, REDACTED)
            encoded = json.dumps(s)[1:-1]
            if encoded != s:
                new = new.replace(encoded, REDACTED)
        if new != text:
            path.write_text(new)
            rewritten += 1
        with contextlib.suppress(OSError):
            path.chmod(0o600)
    return rewritten


# ------------------------------------------------------------------ the run


@contextmanager
def sigint_as_flag() -> Iterator[threading.Event]:
    """Ctrl-C sets a flag that cancel_callback reads (the main thread only)."""
    flag = threading.Event()
    if threading.current_thread() is not threading.main_thread():
        yield flag
        return

    def handler(_signum: int, _frame: Any) -> None:
        flag.set()

    old = signal.signal(signal.SIGINT, handler)
    old_term = signal.signal(signal.SIGTERM, handler)
    try:
        yield flag
    finally:
        signal.signal(signal.SIGINT, old)
        signal.signal(signal.SIGTERM, old_term)


def run_apply(
    opts: ApplyOptions,
    on_event: Callable[[EventCollector, dict[str, Any]], None] | None = None,
    cancel: threading.Event | None = None,
) -> ApplyResult:
    """Run site.yml against opts.inventory; never raises for host failures (see the result)."""
    import ansible_runner

    inventory = Path(opts.inventory).expanduser().resolve()
    project = Path(opts.playbook_dir) if opts.playbook_dir else playbook_dir()
    run_dir = fresh_run_dir(state_root(opts.state_dir))
    cmdline = build_cmdline(opts)
    collector = EventCollector(on_event)
    env = {**BASE_ENV, "ANSIBLE_CONFIG": str(project / "ansible.cfg")}
    # ansible-playbook of this interpreter's environment first (a venv that is not activated).
    bindir = str(Path(sys.executable).parent)
    env["PATH"] = os.pathsep.join([bindir, os.environ.get("PATH", os.defpath)])
    if os.environ.get("ANSIBLE_CONFIG"):
        env["ANSIBLE_CONFIG"] = os.environ["ANSIBLE_CONFIG"]

    (run_dir / "rocmprov-apply.json").write_text(
        json.dumps(
            {
                "schema": SCHEMA,
                "inventory": str(inventory),
                "playbook": str(project / PLAYBOOK),
                "cmdline": cmdline,
                "limit": opts.limit,
                "forks": opts.forks,
                "extravars": {
                    k: (REDACTED if SECRET_KEY.search(k) else v) for k, v in opts.extravars.items()
                },
            },
            indent=2,
            default=str,
        )
    )
    start = time.monotonic()
    with sigint_as_flag() as flag:
        cancelled = cancel or flag

        def cancel_callback() -> bool:
            return flag.is_set() or cancelled.is_set()

        r = ansible_runner.run(
            private_data_dir=str(run_dir),
            project_dir=str(project),
            playbook=PLAYBOOK,
            inventory=str(inventory),
            cmdline=shlex.join(cmdline) if cmdline else None,
            limit=opts.limit,
            forks=opts.forks,
            extravars=dict(opts.extravars) or None,
            envvars=env,
            event_handler=collector.handle,
            cancel_callback=cancel_callback,
            suppress_env_files=True,
            quiet=True,
            timeout=opts.timeout,
            ident="run",
        )
    duration = time.monotonic() - start
    scrub_run_dir(run_dir, opts.extravars)
    command = ""
    cmd_file = run_dir / "artifacts" / "run" / "command"
    if cmd_file.is_file():
        try:
            command = shlex.join(json.loads(cmd_file.read_text()).get("command", []))
        except (ValueError, AttributeError):
            command = ""
    status = r.status or "error"
    hosts = collector.results()
    message = ""
    if status == "canceled":
        message = "interrupted: ansible-playbook was stopped; rerun to converge"
    elif not hosts:
        message = _stdout_error(run_dir) or "no hosts were run (check the inventory and --limit)"
    return ApplyResult(
        status=status,
        ansible_rc=r.rc,
        hosts=hosts,
        run_dir=str(run_dir),
        duration=duration,
        check=opts.check,
        command=command,
        message=message,
    )


def _stdout_error(run_dir: Path) -> str:
    """The first error line ansible-playbook printed, else its last line."""
    last = ""
    for f in run_dir.rglob("stdout"):
        for line in f.read_text(errors="replace").splitlines():
            line = line.strip()
            if line.startswith(("ERROR!", "[ERROR]")):
                return line
            if line:
                last = line
    return last
