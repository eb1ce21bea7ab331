"""The checks in a worker process (rocmprov.fleet.checker): the same reports as in-process, in
submit order, with a bounded number of bundles waiting, and in-process again when the worker
dies."""

from __future__ import annotations

import contextlib
import os
import signal
from pathlib import Path

import pytest

from rocmprov.collect.bundle import read_bundle
from rocmprov.fleet import checker as fleet_checks
from rocmprov.fleet.checker import Checker
from rocmprov.fleet.fanout import host_report
from rocmprov.transport.base import FailureClass, HostUnreachable

BUNDLE = Path(__file__).parent / "data" / "h200-vm-bundle-2026-12-01.tar.gz"


@pytest.fixture(autouse=True)
def no_threads_of_other_tests(monkeypatch: pytest.MonkeyPatch) -> None:
    """Checker forks its worker only while this process has one thread (fleet_checks' fork
    safety, tested by test_no_worker_once_threads_run). Threads other tests left running in
    this process (a paramiko transport, a server) would silently turn these worker tests into
    in-process ones, so each test here sees one thread: its result never depends on what ran
    before it."""
    monkeypatch.setattr(fleet_checks.threading, "active_count", lambda: 1)


@pytest.fixture(scope="module")
def bundle():
    return read_bundle(BUNDLE)


def _inputs(bundle, n: int) -> list:
    from dataclasses import replace

    out = []
    for i in range(n):
        if i % 7 == 3:
            out.append((f"h{i}", HostUnreachable(f"h{i}", FailureClass.REFUSED, "refused"), {}))
        else:
            hostvars = {"rocmprov_expected_gpu_count": 8} if i % 5 == 0 else {}
            out.append((f"h{i}", replace(bundle, host=f"h{i}"), hostvars))
    return out


def _run(checker: Checker, inputs: list) -> list:
    with checker:
        for name, result, hostvars in inputs:
            checker.submit(name, result, hostvars, 1.5)
        return checker.reports()


def _plain(reports: list) -> list:
    return [(r.host, r.status, r.severity, r.findings, r.facts, r.inventory) for r in reports]


def test_worker_gives_the_same_reports_in_order(bundle) -> None:
    inputs = _inputs(bundle, 40)
    inline = _run(Checker(1, host_report), inputs)  # below MIN_HOSTS: in this process
    checker = Checker(40, host_report, max_pending=3)
    assert checker._pool is not None  # the worker really ran
    worker = _run(checker, inputs)
    assert [r.host for r in worker] == [f"h{i}" for i in range(40)]
    assert _plain(worker) == _plain(inline)
    assert any(r.status != "audited" for r in worker)


def test_pending_bundles_are_bounded(bundle, monkeypatch: pytest.MonkeyPatch) -> None:
    checker = Checker(40, host_report, max_pending=2)
    seen = []
    real = checker._settle

    def settle(index: int) -> None:
        seen.append(len(checker._pending))
        real(index)

    monkeypatch.setattr(checker, "_settle", settle)
    _run(checker, _inputs(bundle, 12))
    assert seen and max(seen) <= 2


def test_a_dead_worker_falls_back_to_in_process(bundle) -> None:
    inputs = _inputs(bundle, 10)
    inline = _run(Checker(1, host_report), inputs)
    checker = Checker(40, host_report)
    assert checker._pool is not None
    pids = list(checker._pool._processes)
    for pid in pids:
        os.kill(pid, signal.SIGKILL)  # the worker this test started, by its pid
    assert _plain(_run(checker, inputs)) == _plain(inline)


def test_no_worker_once_threads_run(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fleet_checks.threading, "active_count", lambda: 3)
    checker = Checker(100, host_report)
    assert checker._pool is None
    checker.close()


class _Hung(Exception):
    pass


@pytest.fixture
def deadline():
    """Fail (not hang) a test whose audit would wait forever on a stuck worker."""

    def alarm(signum, frame):
        raise _Hung("the audit waited on a stuck worker")

    old = signal.signal(signal.SIGALRM, alarm)
    signal.alarm(30)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, old)


def _worker_pids(checker: Checker) -> list[int]:
    assert checker._pool is not None
    return list(checker._pool._processes)


def _gone(pid: int, within: float = 5.0) -> bool:
    import time

    end = time.monotonic() + within
    while time.monotonic() < end:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False


def test_a_stuck_worker_falls_back_and_is_ended(bundle, deadline, monkeypatch) -> None:
    monkeypatch.setattr(fleet_checks, "RESULT_TIMEOUT", 1.0)
    inputs = _inputs(bundle, 10)
    inline = _run(Checker(1, host_report), inputs)
    checker = Checker(40, host_report)
    pids = _worker_pids(checker)
    try:
        for pid in pids:
            os.kill(pid, signal.SIGSTOP)  # stuck (a deadlock in the child looks the same)
        assert _plain(_run(checker, inputs)) == _plain(inline)
        assert all(_gone(pid) for pid in pids)  # not left stopped behind the audit
    finally:
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)  # the worker this test started, by its pid


def test_ctrl_c_ends_the_worker_without_a_traceback(bundle, deadline, capfd) -> None:
    """Ctrl-C reaches the whole process group: the worker leaves the decision to the audit
    (no traceback of its own), and the audit leaving on KeyboardInterrupt ends it at once."""
    checker = Checker(40, host_report)
    pids = _worker_pids(checker)
    assert checker._pool is not None
    checker._pool.submit(os.getpid).result(timeout=20)  # the worker is up (set up its signals)
    try:
        with pytest.raises(KeyboardInterrupt), checker:
            checker.submit("h0", bundle, {}, 0.0)
            for pid in pids:
                os.kill(pid, signal.SIGINT)
            checker.submit("h1", bundle, {}, 0.0)
            for pid in pids:
                os.kill(pid, signal.SIGSTOP)  # busy: leaving must not wait for it
            raise KeyboardInterrupt
        assert all(_gone(pid) for pid in pids)
    finally:
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
    assert "Traceback" not in capfd.readouterr().err


def test_bundles_checked_in_process_are_not_kept(bundle) -> None:
    """Unreachable hosts and every host after a fallback are checked in this process: their
    bundles must not stay referenced until the end (memory bounded whatever the fleet)."""
    import gc
    import weakref
    from dataclasses import replace

    checker = Checker(1, host_report)
    refs = []
    for i in range(20):
        one = replace(bundle, host=f"h{i}")
        refs.append(weakref.ref(one))
        checker.submit(one.host, one, {}, 0.0)
        del one
    gc.collect()
    assert sum(r() is not None for r in refs) == 0
    assert len(checker.reports()) == 20
