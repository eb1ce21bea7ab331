"""The fleet side of audit, collect and verify: inventory -> parallel SSH -> per-host results.

Hosts stream in as they finish (a rich progress bar on a terminal, on stderr); a host that
cannot be reached ends as a named failure class, never as a failed check or a traceback.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path
from typing import Any

from rocmprov.audit.host import audit_bundle
from rocmprov.checks.policy import Policy
from rocmprov.collect.bundle import Bundle
from rocmprov.fleet.options import FleetOptions
from rocmprov.inventory.hostnames import strip_brackets
from rocmprov.model import AuditResult, Finding, HostReport, Severity
from rocmprov.transport.base import FailureClass, HostUnreachable
from rocmprov.transport.ssh.known_hosts import forget_command, known_name


def _hosts(opts: FleetOptions, extra_vars: Mapping[str, Any] | None = None) -> list:
    from rocmprov.inventory.hosts import load_inventory

    hosts = load_inventory(opts.inventory, limit=opts.limit, extra_vars=extra_vars)
    overrides: dict[str, Any] = {}
    if opts.gpu_users:
        overrides["gpu_users"] = opts.gpu_users
    if opts.python:
        overrides["python"], overrides["python_fallback"] = opts.python, ""
    if opts.become:
        overrides["become"] = True
    if overrides:
        from dataclasses import replace

        hosts = [replace(h, **overrides) for h in hosts]
    return hosts


def _path(value: Any) -> Path | None:
    return Path(value) if value else None


def ssh_files(opts: FleetOptions, hosts: list) -> tuple[Path | None, Path | None]:
    """known_hosts and ssh_config: the flags, else what the inventory's
    ansible_ssh_common_args/ansible_ssh_extra_args say (-o UserKnownHostsFile=, -F) when
    every host says the same, so an inventory that works with Ansible works here."""
    known, config = _path(opts.known_hosts), _path(opts.ssh_config)
    seen = {_ssh_args(h.vars) for h in hosts}
    if len(seen) == 1:
        inv_known, inv_config = seen.pop()
        known = known or _path(inv_known)
        config = config or _path(inv_config)
    return known, config


def _ssh_args(hostvars: Mapping[str, Any]) -> tuple[str, str]:
    import shlex

    words: list[str] = []
    for key in ("ansible_ssh_common_args", "ansible_ssh_extra_args"):
        try:
            words += shlex.split(str(hostvars.get(key) or ""))
        except ValueError:
            continue
    known = config = ""
    for i, word in enumerate(words):
        nxt = words[i + 1] if i + 1 < len(words) else ""
        if word == "-F":
            config = nxt
        option = nxt if word == "-o" else word[2:] if word.startswith("-o") else ""
        name, _, value = option.partition("=")
        if name.strip().lower() == "userknownhostsfile" and value.strip():
            known = value.strip().split()[0]
    return known, config


def _stream(opts: FleetOptions, hosts: list) -> Iterator[tuple[Any, Bundle | HostUnreachable]]:
    from rocmprov.collect.fleet import collect_fleet
    from rocmprov.transport.ssh import SSHOptions

    known, config = ssh_files(opts, hosts)
    options = SSHOptions.load(known_hosts=known, ssh_config=config, accept_new=opts.accept_new)
    preflight(hosts, options)  # the same options (files read once, names looked up once)
    results = collect_fleet(hosts, forks=opts.forks, options=options)
    with _Progress(len(hosts)) as progress:
        for spec, result in results:
            progress.done(spec.name, result)
            yield spec, result


def preflight(hosts: list, options: Any) -> None:
    """Resolve every SSH host through ssh_config before any is contacted: a bad host name, user,
    port or jump host (from the inventory or ssh_config) stops the run here with one line
    (BadHostValue, exit 64), not as one host's failure after others were reached."""
    from rocmprov.transport.ssh import SSHTransport

    for spec in hosts:
        if spec.connection != "local":
            SSHTransport.from_spec(spec, options).close()


def host_report(
    spec_name: str,
    result: Bundle | HostUnreachable,
    hostvars: Mapping[str, Any],
    duration: float = 0.0,
) -> HostReport:
    """One host's result -> HostReport. A changed host key is also a security finding."""
    policy = Policy.from_vars(hostvars)
    if isinstance(result, Bundle):
        return audit_bundle(result, policy, duration=duration)
    findings: tuple[Finding, ...] = ()
    partial = getattr(result, "partial", None)
    if isinstance(partial, Bundle):
        findings = audit_bundle(partial, policy).findings
    if result.failure is FailureClass.HOSTKEY_CHANGED:
        findings += (
            Finding(
                "ssh.hostkey",
                Severity.CRITICAL,
                "SSH host key CHANGED: refused (possible man-in-the-middle, or a reinstalled host)",
                actual="changed",
                expected="the recorded key",
                fix="verify the new key out of band, then: "
                + forget_command(_known_name(result, spec_name, hostvars), result.known_hosts),
            ),
        )
    return HostReport(
        spec_name, findings, failure=result.failure.value, message=result.message, duration=duration
    )


def _known_name(result: HostUnreachable, spec_name: str, hostvars: Mapping[str, Any]) -> str:
    """The known_hosts name of the refused key: what the transport checked (a jump host's, where
    that was the one refused), else the inventory's address and port ([address]:port off 22)."""
    if result.known_name:
        return result.known_name
    address = hostvars.get("ansible_host") or hostvars.get("ansible_ssh_host") or spec_name
    port = hostvars.get("ansible_port") or hostvars.get("ansible_ssh_port") or 22
    try:
        return known_name(strip_brackets(str(address)), int(port))
    except (TypeError, ValueError):
        return str(address)


def audit_inventory(opts: FleetOptions, cli_vars: Mapping[str, Any]) -> AuditResult:
    from rocmprov.fleet.checker import Checker

    hosts = _hosts(opts, cli_vars)
    order = {h.name: i for i, h in enumerate(hosts)}
    start = time.monotonic()
    with Checker(len(hosts), host_report) as checker:  # the checks beside the SSH threads
        for spec, result in _stream(opts, hosts):
            hostvars = {**spec.vars, **cli_vars}
            checker.submit(spec.name, result, hostvars, time.monotonic() - start)
        reports = checker.reports()
    reports.sort(key=lambda r: order.get(r.host, 0))
    return AuditResult(tuple(reports))


def collect_inventory(opts: FleetOptions) -> Iterator[tuple[Bundle | None, str]]:
    for spec, result in _stream(opts, _hosts(opts)):
        if isinstance(result, Bundle):
            yield result, ""
        else:
            yield None, f"{spec.name}: {result.failure.value}: {result.message}"


def per_host(opts: FleetOptions, one: Callable[[Any, Any], Any]) -> Iterator[Any]:
    """`one(spec, ssh_options)` on every host of the inventory, `--forks` at once, results as
    they finish; host names and SSH files are checked before any host is contacted."""
    from rocmprov.transport.ssh import SSHOptions

    hosts = _hosts(opts)
    known, config = ssh_files(opts, hosts)
    options = SSHOptions.load(known_hosts=known, ssh_config=config, accept_new=opts.accept_new)
    preflight(hosts, options)
    with ThreadPoolExecutor(max_workers=max(1, min(opts.forks, len(hosts)))) as pool:
        futures = [pool.submit(one, h, options) for h in hosts]
        for fut in as_completed(futures):
            yield fut.result()


def verify_inventory(opts: FleetOptions) -> Iterator[Any]:
    from rocmprov.actions.verify import VerifyReport, run_verify
    from rocmprov.transport.ssh import SSHTransport

    def one(spec: Any, options: Any) -> VerifyReport:
        python, fallback = (opts.python, "") if opts.python else (spec.python, spec.python_fallback)
        try:
            with SSHTransport.from_spec(spec, options) as transport:
                return run_verify(transport, python, fallback=fallback)
        except HostUnreachable as exc:
            return VerifyReport(spec.name, python, error=f"{exc.failure.value}: {exc.message}")

    yield from per_host(opts, one)


def active_inventory(opts: FleetOptions) -> Iterator[Any]:
    """`verify --level 2` on every host of the inventory (rocmprov/active/runner.py)."""
    from rocmprov.active.judge import ActiveResult
    from rocmprov.active.runner import ActiveReport, run_active
    from rocmprov.model import Severity
    from rocmprov.transport.ssh import SSHTransport

    def one(spec: Any, options: Any) -> ActiveReport:
        try:
            with SSHTransport.from_spec(spec, options) as transport:
                return run_active(transport)
        except HostUnreachable as exc:
            why = f"{exc.failure.value}: {exc.message}"
            return ActiveReport(spec.name, results=(ActiveResult("host", Severity.UNKNOWN, why),))

    yield from per_host(opts, one)


class _Progress:
    """A rich progress bar on a terminal (stderr); one plain line per host otherwise."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.tty = sys.stderr.isatty()
        self._bar: Any = None

    def __enter__(self) -> _Progress:
        if self.tty:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

            self._bar = Progress(
                TextColumn("audit"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.description}"),
                console=Console(stderr=True),
                transient=True,
            )
            self._bar.start()
            self._task = self._bar.add_task("", total=self.total)
        return self

    def done(self, name: str, result: Bundle | HostUnreachable) -> None:
        state = "collected" if isinstance(result, Bundle) else result.failure.value
        if self._bar is not None:
            self._bar.update(self._task, advance=1, description=f"{name}: {state}")
        elif self.total > 1:
            print(f"rocmprov: {name}: {state}", file=sys.stderr, flush=True)

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.stop()
