"""Collect many hosts at once: a bounded thread pool, one SSH connection and one script each.

Results stream back as hosts finish, each a `Bundle` or the `HostUnreachable` that says why
not. One host's failure never stops the others, and nothing here raises a traceback: an
unexpected error becomes HostUnreachable(ERROR) for that host.

Sizing: the work per host is waiting on the network and the remote probes, not controller
CPU (one key exchange, one auth, one exec channel with TCP_NODELAY: a few ms of CPU), so the
default of 64 parallel hosts keeps a 2-core controller idle while hundreds of hosts run;
each in-flight host costs two threads (ours and paramiko's) and one socket.
"""

from __future__ import annotations

import queue
import resource
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

from rocmprov.collect.bundle import Bundle
from rocmprov.collect.host import collect_host
from rocmprov.collect.probes import Probe, build_probes
from rocmprov.collect.remote import collect_remote
from rocmprov.inventory.hosts import HostSpec
from rocmprov.transport.base import FailureClass, HostUnreachable
from rocmprov.transport.local import LocalTransport
from rocmprov.transport.ssh import DEFAULT_CONNECT_TIMEOUT, SSHOptions, SSHTransport

DEFAULT_FORKS = 64
FDS_BASE = 256  # the process's own files (the checks worker's pipes, known_hosts, logs)
FDS_PER_HOST = 6  # socket, the channel's pipe pair, a ProxyCommand's three pipes
HostResult = Bundle | HostUnreachable
OnDone = Callable[[HostSpec, HostResult], None]
ProbesFor = Callable[[HostSpec], Sequence[Probe]]


def default_probes(spec: HostSpec) -> Sequence[Probe]:
    return build_probes(
        gpu_users=spec.gpu_users, python=spec.python, python_fallback=spec.python_fallback
    )


def collect_fleet(
    hosts: Sequence[HostSpec],
    *,
    forks: int = DEFAULT_FORKS,
    accept_new: bool = False,
    known_hosts: Path | None = None,
    ssh_config: Path | None = None,
    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
    on_done: OnDone | None = None,
    probes_for: ProbesFor = default_probes,
    options: SSHOptions | None = None,
) -> Iterator[tuple[HostSpec, HostResult]]:
    """Yield (host, Bundle | HostUnreachable) for every host, in the order they finish.

    known_hosts: file checked and, with accept_new, appended to (default ~/.ssh/known_hosts;
    /etc/ssh/ssh_known_hosts is read too). ssh_config: default ~/.ssh/config when present.
    on_done is called in the caller's thread just before each yield (for progress output).
    A bad known_hosts or ssh_config path raises UsageError before any host is contacted.
    Closing the iterator early (break, Ctrl-C) closes every open connection and cancels the
    hosts not started. `options`, when given, is used instead of the four above (a caller
    that already loaded them for a preflight).
    """
    allow_descriptors(FDS_BASE + FDS_PER_HOST * max(1, forks))
    if options is None:
        options = SSHOptions.load(
            known_hosts=known_hosts,
            ssh_config=ssh_config,
            accept_new=accept_new,
            connect_timeout=connect_timeout,
        )
    return _run(list(hosts), max(1, forks), options, on_done, probes_for)


def allow_descriptors(wanted: int) -> int:
    """Raise this process's soft open-file limit to `wanted` (at most the hard limit; never
    lowered) and return the soft limit now in force. The usual soft limit, 1,024, is reached
    by ~300 hosts in flight: each holds a socket and its channel's pipe pair (a ProxyCommand
    three more), and a host past the limit fails to connect."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY or soft >= wanted:
        return soft
    target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    if target > soft:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        except (OSError, ValueError):
            return soft
        return target
    return soft


def _run(
    hosts: list[HostSpec],
    forks: int,
    options: SSHOptions,
    on_done: OnDone | None,
    probes_for: ProbesFor,
) -> Iterator[tuple[HostSpec, HostResult]]:
    live = _Live()
    pool = ThreadPoolExecutor(max_workers=min(forks, max(1, len(hosts))), thread_name_prefix="host")
    pending: dict[Future[HostResult], HostSpec] = {}
    finished: queue.SimpleQueue[Future[HostResult]] = queue.SimpleQueue()
    try:
        for spec in hosts:
            future = pool.submit(collect_one, spec, options, probes_for, live)
            pending[future] = spec
            future.add_done_callback(finished.put)
        # one callback per host, not `wait(pending)` per finished host (that registers a waiter
        # on every pending future each time: quadratic, ~10 s of CPU at 2,000 hosts)
        while pending:
            future = finished.get()
            spec = pending.pop(future)
            result = _result(spec, future)
            if on_done is not None:
                on_done(spec, result)
            yield spec, result
    finally:
        for future in pending:
            future.cancel()
        live.close_all()
        pool.shutdown(wait=True, cancel_futures=True)


def _result(spec: HostSpec, future: Future[HostResult]) -> HostResult:
    try:
        return future.result()
    except Exception as exc:  # collect_one catches everything; this is the last guard
        return HostUnreachable(spec.name, FailureClass.ERROR, f"{type(exc).__name__}: {exc}")


class _Live:
    """Open transports, so that an abandoned run can close them all at once."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._open: set[SSHTransport] = set()
        self.closing = False

    def add(self, transport: SSHTransport) -> None:
        with self._lock:
            if self.closing:
                raise HostUnreachable(transport.host, FailureClass.ERROR, "run cancelled")
            self._open.add(transport)

    def discard(self, transport: SSHTransport) -> None:
        with self._lock:
            self._open.discard(transport)

    def close_all(self) -> None:
        with self._lock:
            self.closing = True
            transports = list(self._open)
        for transport in transports:
            transport.close()


def collect_one(
    spec: HostSpec,
    options: SSHOptions,
    probes_for: ProbesFor = default_probes,
    live: _Live | None = None,
) -> HostResult:
    """One host: its Bundle, or the HostUnreachable that says why not. Never raises."""
    try:
        probes = probes_for(spec)
        if spec.connection == "local":
            local = LocalTransport(become=spec.become)
            local.host = spec.name
            return collect_host(local, probes, extra={"transport": "local"})
        transport = SSHTransport.from_spec(spec, options)
        if live is not None:
            live.add(transport)
        try:
            transport.connect()
            return collect_remote(transport, probes, extra={"transport": "ssh"})
        finally:
            transport.close()
            if live is not None:
                live.discard(transport)
    except HostUnreachable as exc:
        return exc
    except Exception as exc:  # a bug or an odd host must not end the whole run
        text = " ".join(str(exc).split())
        return HostUnreachable(spec.name, FailureClass.ERROR, f"{type(exc).__name__}: {text}")
