"""Run the checks of a fleet's hosts in one worker process while the SSH threads collect.

Why: in one process the checks (pure Python, ~7 ms a host) and 64 hosts' SSH threads fight
over the GIL; each hand-over costs CPU (futex calls, cache misses). Measured on 200 loopback
hosts (docs/benchmarks.md, "Controller CPU"): collection alone 5.7 ms/host with 4 threads,
8.7 with 64; the whole audit 22-26 ms/host in one process. With the checks in a worker the
two no longer contend, and on a multi-core controller they also run at the same time.

Safety: the worker is forked before any thread exists (forking a threaded process can leave
the child holding a lock forever), on Linux only, for fleets of `MIN_HOSTS` hosts or more.
At most `max_pending` bundles wait for the worker (memory stays bounded whatever the fleet's
size). If the worker cannot start, dies or is stuck (no report within RESULT_TIMEOUT), it is
killed and the checks run in this process: same reports. It ignores SIGINT: on Ctrl-C the audit
kills it on its way out (no orphan, no traceback of the worker's own).
"""

from __future__ import annotations

import contextlib
import multiprocessing
import signal
import threading
from collections import deque
from collections.abc import Callable, Mapping
from concurrent.futures import CancelledError, Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from rocmprov.collect.bundle import Bundle
from rocmprov.model import HostReport
from rocmprov.transport.base import HostUnreachable

MIN_HOSTS = 32
RESULT_TIMEOUT = 60.0  # s one host's checks may take in the worker (~7 ms) before it is given up

Report = Callable[[str, Any, Mapping[str, Any], float], HostReport]


def _warm() -> None:
    """Load the checks' tables (troubleshooting table, releases...) in the worker, once."""
    from rocmprov.audit.host import audit_bundle
    from rocmprov.checks.policy import Policy
    from rocmprov.kb import match

    audit_bundle(Bundle(host="warm-up", outputs={}), Policy())
    match("amdgpu: warm-up\n")


class Checker:
    """`submit` results as they come; `reports()` gives every HostReport, in submit order."""

    def __init__(self, n_hosts: int, report: Report, *, max_pending: int = 128) -> None:
        self._report = report
        self._max_pending = max(1, max_pending)
        self._items: list[HostReport | Future[HostReport] | None] = []
        # the arguments of the hosts the worker has, until settled (a fallback needs them)
        self._args: list[tuple[str, Any, Mapping[str, Any], float] | None] = []
        self._pending: deque[int] = deque()
        self._pool: ProcessPoolExecutor | None = None
        if n_hosts >= MIN_HOSTS and threading.active_count() == 1:
            self._pool = _start_pool()

    def __enter__(self) -> Checker:
        return self

    def __exit__(self, exc_type: object, *exc: object) -> None:
        if exc_type is None:
            self.close()
        else:  # Ctrl-C or an error: nothing more is wanted from the worker, end it now
            self._broken()

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None

    def submit(
        self, name: str, result: Bundle | HostUnreachable, hostvars: Mapping[str, Any], t: float
    ) -> None:
        index = len(self._items)
        if self._pool is None or not isinstance(result, Bundle):
            self._args.append(None)
            self._items.append(self._report(name, result, hostvars, t))
            return
        try:
            self._items.append(self._pool.submit(self._report, name, result, dict(hostvars), t))
        except (BrokenProcessPool, RuntimeError):
            self._broken()
            self._args.append(None)
            self._items.append(self._report(name, result, hostvars, t))
            return
        self._args.append((name, result, hostvars, t))
        self._pending.append(index)
        while len(self._pending) > self._max_pending:
            self._settle(self._pending.popleft())

    def reports(self) -> list[HostReport]:
        while self._pending:
            self._settle(self._pending.popleft())
        self.close()
        return [item for item in self._items if isinstance(item, HostReport)]

    def _settle(self, index: int) -> None:
        item = self._items[index]
        if isinstance(item, Future):
            self._items[index] = self._result(item, index)
        self._args[index] = None  # the bundle is no longer needed here

    def _result(self, future: Future[HostReport], index: int) -> HostReport:
        """The worker's report, else (worker dead, stuck past RESULT_TIMEOUT, or any error of
        its own) the same report made in this process."""
        if self._pool is not None or future.done():
            try:
                return future.result(timeout=RESULT_TIMEOUT)
            except (TimeoutError, BrokenProcessPool, CancelledError, OSError, EOFError):
                self._broken()
            except Exception:
                pass  # the checks' own errors are raised again below, as without a worker
        args = self._args[index]
        assert args is not None
        return self._report(*args)

    def _broken(self) -> None:
        """Give the worker up: killed (it may be stuck), its queued work cancelled."""
        pool, self._pool = self._pool, None
        if pool is None:
            return
        for proc in list((getattr(pool, "_processes", None) or {}).values()):
            with contextlib.suppress(OSError, ValueError, AttributeError):
                proc.kill()
        pool.shutdown(wait=False, cancel_futures=True)


def _quiet_worker() -> None:
    """Ctrl-C reaches the whole process group: the audit decides (and ends this worker); the
    worker itself must not die with a traceback of its own."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _start_pool() -> ProcessPoolExecutor | None:
    """One forked worker, started now (before any thread), warming its tables."""
    if "fork" not in multiprocessing.get_all_start_methods():
        return None
    try:
        pool = ProcessPoolExecutor(
            1, mp_context=multiprocessing.get_context("fork"), initializer=_quiet_worker
        )
        pool.submit(_warm)  # forks here: ProcessPoolExecutor launches fork workers at once
    except (OSError, RuntimeError, ValueError):
        return None
    return pool
