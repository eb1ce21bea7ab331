"""Run the packaged playbooks (playbooks/site.yml) through ansible-runner; events -> results.

One run = one fresh private data directory under the user's state directory
($XDG_STATE_HOME or ~/.local/state)/rocmprov/runs/<timestamp>-<n>/: a reused one would replay
old env/cmdline (even --check). The directory is the durable record of the run (command,
stdout, rc, status, job_events/*.json), kept with secrets scrubbed (record.py).

Traps of ansible-runner handled here: the event_handler returns True (else events and stats are
dropped), check/diff go through `cmdline`, and a cancel_callback is always given (else runner
installs its own SIGINT handler). Two more, for secrets: a dict of extravars goes on
ansible-playbook's argv (so ours go through a private file, extravars.py), and runner seeds
ansible-playbook's environment with all of os.environ and records it in artifacts/<run>/command
(so the runner is built with init_runner and its environment replaced by an allow-list before
it starts).
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rocmprov.exitcodes import Exit, UsageError
from rocmprov.provision import deathsig
from rocmprov.provision.cancel import GracefulCancel
from rocmprov.provision.events import EventCollector, FailedTask, HostResult, failure_message
from rocmprov.provision.extravars import parse_extravars, private_vars_file, remove_vars_file
from rocmprov.provision.extravars import sweep_stale as sweep_stale_vars
from rocmprov.provision.record import (
    REQUEST_FILE,
    Scrubber,
    child_env,
    fresh_run_dir,
    redacted_vars,
    scrub_run_dir,
    state_root,
    write_private,
)
from rocmprov.provision.sshcontrol import control_env
from rocmprov.provision.strategy import strategy_env

# Kept importable from here (commands/repair.py, tests).
__all__ = [
    "ApplyOptions",
    "ApplyResult",
    "EventCollector",
    "FailedTask",
    "HostResult",
    "failure_message",
    "fresh_run_dir",
    "parse_extravars",
    "run_apply",
    "scrub_run_dir",
    "state_root",
]

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
    # ansible-runner would keep every host's facts in a jsonfile cache under the run directory
    # (a file write per host and fact update; facts are not a record we keep): in memory only.
    "ANSIBLE_CACHE_PLUGIN": "memory",
}

# Events kept in the run directory (job_events/): what happened to each host and task. Task
# starts per host and skips (two thirds of a no-op re-apply's events) still reach the progress
# display and the counts, but are not written (a file each) nor scrubbed again at the end.
UNRECORDED_EVENTS = frozenset({"runner_on_start", "runner_on_skipped", "runner_item_on_skipped"})


# ------------------------------------------------------------------ options and result


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
    fast: bool = True  # Mitogen's strategy when installed (strategy_env)


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


def playbook_dir() -> Path:
    """The packaged playbooks (rocmprov.playbooks), a real directory on disk."""
    from rocmprov.paths import playbooks_dir

    path = playbooks_dir()
    if not (path / PLAYBOOK).is_file():
        raise UsageError(f"the packaged playbooks are missing ({path / PLAYBOOK})")
    return path


def on_request_roles(project: Path) -> dict[str, frozenset[str]]:
    """Roles that site.yml runs only when asked for by tag (`tags: [never, ...]`), with those
    tags, read from site.yml itself. Ansible still runs each one's argument check (tagged
    always) on every host; skipping them by tag up front saves a task per role and host."""
    import yaml

    try:
        plays = yaml.safe_load((project / PLAYBOOK).read_text()) or []
    except (OSError, yaml.YAMLError):
        return {}
    out: dict[str, frozenset[str]] = {}
    for play in plays if isinstance(plays, list) else []:
        for role in (play.get("roles") or []) if isinstance(play, dict) else []:
            tags = set(role.get("tags") or []) if isinstance(role, dict) else set()
            if "never" in tags and role.get("role"):
                out[str(role["role"])] = frozenset(tags - {"never"})
    return out


def _project(opts: ApplyOptions) -> Path:
    return Path(opts.playbook_dir) if opts.playbook_dir else playbook_dir()


def build_cmdline(opts: ApplyOptions) -> list[str]:
    args: list[str] = []
    if opts.check:
        args.append("--check")
    if opts.diff:
        args.append("--diff")
    if opts.tags:
        args += ["--tags", opts.tags]
    asked = {t.strip() for t in (opts.tags or "").split(",")}
    skip = [t.strip() for t in (opts.skip_tags or "").split(",") if t.strip()]
    skip += [
        role
        for role, tags in on_request_roles(_project(opts)).items()
        # --tags uninstall takes back what every role added, these ones included
        if not asked & (tags | {"never", "uninstall"}) and role not in skip
    ]
    if skip:
        args += ["--skip-tags", ",".join(skip)]
    return args


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
    """Run site.yml against opts.inventory; never raises for host failures (see the result).

    Secrets: extra vars reach ansible-playbook as `-e @FILE` (a private 0600 file, removed
    once ansible-playbook has read it and in any case at the end), its environment is
    allow-listed (record.child_env), and events are scrubbed before they are written.
    """
    from ansible_runner.interface import init_runner

    inventory = Path(opts.inventory).expanduser().resolve()
    project = _project(opts)
    sockets = control_env(inventory)  # a directory short enough for ssh's sockets, or UsageError
    run_dir = fresh_run_dir(state_root(opts.state_dir))
    cmdline = build_cmdline(opts)
    collector = EventCollector(on_event)
    scrubber = Scrubber.for_run(opts.extravars)
    ours = {**BASE_ENV, **strategy_env(opts.fast), "ANSIBLE_CONFIG": str(project / "ansible.cfg")}
    ours.update(sockets)
    # ansible-playbook of this interpreter's environment first (a venv that is not activated).
    bindir = str(Path(sys.executable).parent)
    ours["PATH"] = os.pathsep.join([bindir, os.environ.get("PATH", os.defpath)])
    if os.environ.get("ANSIBLE_CONFIG"):
        ours["ANSIBLE_CONFIG"] = os.environ["ANSIBLE_CONFIG"]

    write_private(
        run_dir / REQUEST_FILE,
        json.dumps(
            {
                "schema": SCHEMA,
                "inventory": str(inventory),
                "playbook": str(project / PLAYBOOK),
                "cmdline": cmdline,
                "limit": opts.limit,
                "forks": opts.forks,
                "extravars": redacted_vars(opts.extravars, scrubber),
            },
            indent=2,
            default=str,
        ),
    )
    sweep_stale_vars()
    start = time.monotonic()
    try:
        with _vars_file(opts.extravars) as vars_path, sigint_as_flag() as flag:
            cancel_callback = GracefulCancel(flag, *([cancel] if cancel else []))

            def handle(event: dict[str, Any]) -> bool:
                cancel_callback.note(event)
                if vars_path and event.get("event") == "playbook_on_start":
                    remove_vars_file(vars_path)  # loaded by now: off the disk at once
                clean = scrubber.obj(event)  # in place: runner writes this very dict
                event.clear()
                event.update(clean)
                collector.handle(event)
                return event.get("event") not in UNRECORDED_EVENTS  # False: runner writes no file

            args = [*cmdline, "-e", f"@{vars_path}"] if vars_path else cmdline
            runner = init_runner(
                private_data_dir=str(run_dir),
                project_dir=str(project),
                playbook=PLAYBOOK,
                inventory=str(inventory),
                cmdline=shlex.join(args) if args else None,
                limit=opts.limit,
                forks=opts.forks,
                # "" drops a caller's callback path: only runner's own callback is added
                envvars={**ours, "ANSIBLE_CALLBACK_PLUGINS": ""},
                event_handler=handle,
                cancel_callback=cancel_callback,
                suppress_env_files=True,
                quiet=True,
                timeout=opts.timeout,
                ident="run",
            )
            # runner seeds the environment with all of os.environ: keep the allowed part only
            runner.config.env = child_env(ours, runner.config.env)
            # ansible-playbook ends when rocmprov does, even by SIGKILL (provision/deathsig.py)
            runner.config.command = deathsig.wrap(list(runner.config.command))
            runner.run()
    finally:
        scrub_run_dir(run_dir, opts.extravars, scrubber)
    duration = time.monotonic() - start
    command = ""
    cmd_file = run_dir / "artifacts" / "run" / "command"
    if cmd_file.is_file():
        try:
            command = shlex.join(
                deathsig.unwrap(json.loads(cmd_file.read_text()).get("command", []))
            )
        except (ValueError, AttributeError):
            command = ""
    status = runner.status or "error"
    if cancel_callback.signalled:  # ansible-playbook stopped on our SIGINT: runner says failed
        status = "canceled"
    hosts = collector.results()
    message = ""
    if status == "canceled":
        message = "interrupted: ansible-playbook was stopped; rerun to converge"
    elif not hosts:
        message = _stdout_error(run_dir) or "no hosts were run (check the inventory and --limit)"
    return ApplyResult(
        status=status,
        ansible_rc=runner.rc,
        hosts=hosts,
        run_dir=str(run_dir),
        duration=duration,
        check=opts.check,
        command=command,
        message=message,
    )


@contextmanager
def _vars_file(extravars: Mapping[str, Any]) -> Iterator[Path | None]:
    if not extravars:
        yield None
        return
    with private_vars_file(extravars) as path:
        yield path


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
