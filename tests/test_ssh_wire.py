"""How connections use the wire (rocmprov/transport/ssh/wire.py, watchdog.py), against real
OpenSSH servers on loopback: AES-GCM chosen where offered, the rest where not, a closed
connection's thread gone at once, and one watchdog thread for every command's deadline."""

# ruff: noqa: F811

from __future__ import annotations

import contextlib
import gc
import os
import resource
import signal
import socket
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import paramiko
import pytest
from test_ssh import (  # the loopback sshd fixtures (real OpenSSH servers)
    Keys,
    LoopbackSshd,
    jump,  # noqa: F401  (fixture)
    jump_files,
    keys,  # noqa: F401  (fixture)
    known,  # noqa: F401  (fixture)
    options,
    pytestmark,  # noqa: F401  (skip without root and sshd)
    relay_config,
    ssh_base,  # noqa: F401  (fixture)
    sshd,  # noqa: F401  (fixture)
    start_sshd,
    transport,
)

from rocmprov.collect.fleet import FDS_BASE, FDS_PER_HOST, allow_descriptors, collect_fleet
from rocmprov.transport.base import FailureClass, HostUnreachable
from rocmprov.transport.ssh import SSHTransport
from rocmprov.transport.ssh.watchdog import WATCHDOG, Watchdog
from rocmprov.transport.ssh.wire import WireProxyCommand, WireTransport

# how these tests use time: see tests/timebounds.py
from tests.timebounds import HANG_GUARD, LONG, end_processes_naming


@pytest.fixture(scope="module")
def ctr_only(ssh_base: Path, keys: Keys) -> Iterator[LoopbackSshd]:
    """An sshd that offers no AES-GCM (as a hardened or old server may)."""
    server = start_sshd(
        ssh_base, {"root": keys.good_pub + "\n"}, name="ctr", extra="Ciphers aes256-ctr\n"
    )
    yield server
    server.stop()


def test_openssh_gets_aes_gcm(sshd: LoopbackSshd, keys: Keys, known: Path) -> None:
    with transport(sshd, keys, known) as t:
        assert t.run("echo ok", timeout=10).stdout == "ok\n"
        wire = t._transport
        assert wire is not None
        assert (wire.local_cipher, wire.remote_cipher) == ("aes128-gcm@openssh.com",) * 2


def test_a_server_without_gcm_still_connects(
    ctr_only: LoopbackSshd, keys: Keys, tmp_path: Path
) -> None:
    known = tmp_path / "known_hosts"
    known.write_text(ctr_only.known_line())
    with transport(ctr_only, keys, known) as t:
        assert t.run("echo ok", timeout=10).stdout == "ok\n"
        assert t._transport is not None and t._transport.local_cipher == "aes256-ctr"


def _wire_thread(t: SSHTransport) -> threading.Thread:
    wire = t._transport
    assert wire is not None and wire.is_alive()
    return wire


def test_close_ends_the_connection_thread_at_once(
    sshd: LoopbackSshd, keys: Keys, known: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The thread polls its socket once a second (not ten times); close() must not leave it
    waiting for that poll. Here the poll is LONG seconds: the thread must end far inside it
    (without the socket's shutdown it sleeps out the poll)."""
    assert WireTransport._active_check_timeout >= 1.0  # the product's interval
    monkeypatch.setattr(WireTransport, "_active_check_timeout", LONG)
    t = transport(sshd, keys, known)
    t.connect()
    thread = _wire_thread(t)
    time.sleep(0.1)  # idle inside a poll
    t.close()
    thread.join(HANG_GUARD)
    assert not thread.is_alive(), f"the thread still waits for its {LONG:g} s poll after close()"


def _freeze(pids: list[int], sig: signal.Signals) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, sig)


def _freeze_before(monkeypatch: pytest.MonkeyPatch, method: str, pids: list[int]) -> None:
    """The host's session processes freeze just as paramiko's Channel.`method` is called."""
    original = getattr(paramiko.Channel, method)

    def freeze_then_call(chan: paramiko.Channel, *args: object) -> object:
        _freeze(pids, signal.SIGSTOP)
        return original(chan, *args)

    monkeypatch.setattr(paramiko.Channel, method, freeze_then_call)


@pytest.mark.parametrize("when", ["before the channel", "before the command's reply"])
def test_a_frozen_host_fails_in_bounded_time_and_leaves_no_deadline(
    sshd: LoopbackSshd, keys: Keys, known: Path, monkeypatch: pytest.MonkeyPatch, when: str
) -> None:
    """The host's session stops answering (SIGSTOP: no RST, as in a partition): the command
    ends with a named failure within its timeout plus the connect timeout, and its watchdog
    deadline is gone afterwards. Frozen just before the exec request, paramiko waits for the
    reply with no timeout of its own: only the watchdog's close ends that wait."""
    t = SSHTransport(
        "lo",
        options=options(known, timeout=1.0),
        address="127.0.0.1",
        port=sshd.port,
        user="root",
        key_file=str(keys.good),
    )
    t.connect()
    frozen = sshd.sessions()
    assert frozen
    before = WATCHDOG.pending()
    if when == "before the channel":
        _freeze(frozen, signal.SIGSTOP)
    else:
        _freeze_before(monkeypatch, "exec_command", frozen)
    try:
        start = time.monotonic()
        with pytest.raises(HostUnreachable) as info:
            t.exec("echo never", timeout=1)
        took = time.monotonic() - start
    finally:
        _freeze(frozen, signal.SIGCONT)
        t.close()
    assert info.value.failure is FailureClass.DISCONNECTED
    # the configured timeout fired: it waited for it, and ended within the command's timeout
    # + the connect timeout + a margin for a loaded machine (without the watchdog: never)
    assert 0.9 <= took < 1 + 1.0 + HANG_GUARD, f"{took:.1f} s"
    assert WATCHDOG.pending() == before


# --- the watchdog on its own ------------------------------------------------------------------


def test_watchdog_runs_actions_in_deadline_order_and_not_disarmed_ones() -> None:
    dog = Watchdog()
    fired: list[str] = []
    done = threading.Event()
    dog.arm(0.30, lambda: (fired.append("c"), done.set()))
    dog.arm(0.10, lambda: fired.append("a"))
    token = dog.arm(0.05, lambda: fired.append("never"))
    dog.arm(0.20, lambda: fired.append("b"))
    dog.disarm(token)
    assert done.wait(HANG_GUARD), "hang guard: the last action (due at 0.3 s) never ran"
    assert fired == ["a", "b", "c"]
    assert dog.pending() == 0


def test_watchdog_wakes_for_an_earlier_deadline_and_survives_a_failing_action() -> None:
    dog = Watchdog()
    early = threading.Event()
    dog.arm(LONG, lambda: None)
    time.sleep(0.2)  # the loop now sleeps towards that one (armed together, it never did)
    dog.arm(0.05, lambda: 1 / 0)
    dog.arm(0.1, early.set)
    # due at 0.1 s; a loop that sleeps towards the first deadline, or died of the failing
    # action, would not run it before LONG seconds (or ever)
    assert early.wait(HANG_GUARD), f"the 0.1 s action waited for the {LONG:g} s one"


def test_one_thread_serves_many_deadlines() -> None:
    dog = Watchdog()
    before = {t.ident for t in threading.enumerate()}
    tokens = [dog.arm(60, lambda: None) for _ in range(500)]
    new = [t for t in threading.enumerate() if t.ident not in before]
    assert [t.name for t in new] == ["rocmprov-watchdog"]
    for token in tokens:
        dog.disarm(token)
    assert dog.pending() == 0


def _dog_threads(before: set[int | None]) -> list[threading.Thread]:
    return [
        t for t in threading.enumerate() if t.ident not in before and t.name == "rocmprov-watchdog"
    ]


def test_watchdog_thread_ends_when_nothing_is_armed() -> None:
    """An idle watchdog holds no thread: a process whose audit is over is single-threaded again,
    so a second audit in it (`repair` audits before and after) still forks its checks worker
    (fleet_checks forks only while `threading.active_count() == 1`)."""
    before = {t.ident for t in threading.enumerate()}
    dog = Watchdog()
    fired = threading.Event()
    dog.disarm(dog.arm(60, lambda: None))
    dog.arm(0.05, fired.set)
    assert fired.wait(HANG_GUARD), "hang guard: the 0.05 s action never ran"
    deadline = time.monotonic() + HANG_GUARD  # hang guard: it ends at once when idle
    while _dog_threads(before) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert _dog_threads(before) == [], "the idle watchdog's thread did not end"
    again = threading.Event()  # and it comes back when armed again
    dog.arm(0.05, again.set)
    assert again.wait(HANG_GUARD), "hang guard: the watchdog did not come back when armed"


def test_a_blocked_action_does_not_hold_up_other_deadlines() -> None:
    """Closing one transport can block (a channel through a jump host whose socket is full):
    another connection's deadline must still fire on time."""
    dog = Watchdog()
    release, other = threading.Event(), threading.Event()
    dog.arm(0.05, lambda: release.wait(LONG))  # blocks until released (at the end)
    dog.arm(0.1, other.set)
    try:
        assert other.wait(HANG_GUARD), "the 0.1 s action waited for the blocked one"
    finally:
        release.set()


def test_no_watchdog_thread_is_left_after_a_connection(
    sshd: LoopbackSshd, keys: Keys, known: Path
) -> None:
    with transport(sshd, keys, known) as t:
        assert t.run("echo ok", timeout=10).stdout == "ok\n"
    assert WATCHDOG.pending() == 0
    thread = WATCHDOG._thread  # the shared watchdog's own thread (others' tests arm their own)
    if thread is not None:
        thread.join(HANG_GUARD)  # it ends at once when idle; 2 s was a speed bound
        assert not thread.is_alive(), "the idle watchdog's thread did not end"


# --- ProxyCommand: the command's end of output is the connection's end ------------------------


def _via_proxy(sshd: LoopbackSshd, keys: Keys, known: Path, tmp_path: Path) -> SSHTransport:
    cfg = relay_config(sshd, keys, tmp_path)
    return SSHTransport("via-cmd", options=options(known, ssh_config=cfg))


def test_a_proxycommands_end_of_output_is_read_as_the_end_at_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """paramiko's ProxyCommand.recv spins on select() while the command's output is at end of
    file (paramiko#1180), until the transport's poll interval (1 s) passes: a busy core. The
    work is counted, not timed: one wait that finds the end, not a loop of waits that each find
    it again until the interval passes (thousands)."""
    from rocmprov.transport.ssh import wire

    waits: list[float | None] = []

    def counted(fileno: int, timeout: float | None) -> bool:
        waits.append(timeout)
        return wait_readable(fileno, timeout)

    wait_readable = wire.wait_readable
    monkeypatch.setattr(wire, "wait_readable", counted)
    proxy = WireProxyCommand(f"{sys.executable} -c pass")
    proxy.settimeout(1.0)
    try:
        assert proxy.recv(64) == b""  # what a closed socket gives: paramiko's EOFError
    finally:
        proxy.close()
    assert len(waits) == 1, f"{len(waits)} waits (one expected: the one that finds the end)"
    assert proxy.process.returncode == 0 and proxy.process.stdout.closed


def test_close_through_a_proxycommand_ends_its_thread_at_once(
    sshd: LoopbackSshd, keys: Keys, known: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Closed mid-poll, the transport's thread ends at once (paramiko's ProxyCommand: it spins
    until the poll interval passes, here LONG seconds; the test above counts the spin)."""
    monkeypatch.setattr(WireTransport, "_active_check_timeout", LONG)
    t = _via_proxy(sshd, keys, known, tmp_path)
    assert t.run("echo relayed", timeout=10).stdout == "relayed\n"
    thread = _wire_thread(t)
    t.close()
    thread.join(HANG_GUARD)
    assert not thread.is_alive(), f"the thread still waits for its {LONG:g} s poll after close()"


def test_a_proxycommand_that_dies_mid_command_is_a_disconnect(
    sshd: LoopbackSshd, keys: Keys, known: Path, tmp_path: Path
) -> None:
    """The relay dies while a command runs: a named failure at once, not a spinning thread
    until the command's deadline (nothing is ever read from the dead command again)."""
    t = _via_proxy(sshd, keys, known, tmp_path)
    t.connect()
    wire = t._transport
    assert wire is not None
    proxy = wire.sock
    threading.Timer(0.5, proxy.process.kill).start()  # type: ignore[union-attr]
    start = time.monotonic()
    try:
        with pytest.raises(HostUnreachable) as info:
            # named (": tag"): the cut connection leaves it running on the host; it ends here
            t.run(f"sleep {LONG:g}; : {tmp_path}/cut", timeout=LONG)
    finally:
        t.close()
        end_processes_naming(f"{tmp_path}/cut")
    took = time.monotonic() - start
    assert info.value.failure is FailureClass.DISCONNECTED
    # the relay died at 0.5 s; waiting for the command's deadline would take LONG seconds
    assert took < 0.5 + HANG_GUARD, f"{took:.1f} s: the disconnect waited for the deadline"


def _zombies() -> int:
    count = 0
    for entry in os.listdir("/proc"):
        with contextlib.suppress(OSError):
            if entry.isdigit():
                fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
                count += fields[0] == "Z" and fields[1] == str(os.getpid())
    return count


def test_a_closed_proxycommand_leaves_no_pipe_and_no_zombie(
    sshd: LoopbackSshd, keys: Keys, known: Path, tmp_path: Path
) -> None:
    """paramiko's ProxyCommand.close only sends SIGTERM: the command's three pipes stay open and
    the command a zombie until the garbage collector finds the transport (paramiko#1713, #1715);
    in a 2,000-host fleet that is past select()'s 1,024 descriptors and the usual open-file
    limit. Counted with the collector off: nothing may depend on it."""
    gc.collect()
    fds, zombies = len(os.listdir("/proc/self/fd")), _zombies()
    gc.disable()
    try:
        for _ in range(4):
            with _via_proxy(sshd, keys, known, tmp_path) as t:
                assert t.run("true", timeout=10).rc == 0
                thread = _wire_thread(t)
            thread.join(HANG_GUARD)  # at once after close(); its pipes are counted below
            assert not thread.is_alive()
        # at most as many as before: a leak adds three pipes a connection (twelve here); fewer
        # is another thread of the worker closing its own (CI: 20 after 22 before)
        assert len(os.listdir("/proc/self/fd")) <= fds
        assert _zombies() <= zombies
    finally:
        gc.enable()


# --- a jump host that stops answering while a command's input is on its way -------------------


def _through_frozen_jump(
    sshd: LoopbackSshd, jump: LoopbackSshd, keys: Keys, tmp_path: Path, timeout: float
) -> tuple[SSHTransport, list[int]]:
    """A connection through `jump`, whose session freezes (SIGSTOP: no RST, as in a partition)
    as the command's input starts; the hop's send buffer is small, so the input fills it and
    the writing thread blocks inside paramiko holding the hop's send lock."""
    kh, cfg = jump_files(sshd, jump, keys, tmp_path)
    t = SSHTransport("target", options=options(kh, ssh_config=cfg, timeout=timeout))
    t.connect()
    t._hops[0].sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
    return t, jump.sessions()


def _exec_in_thread(t: SSHTransport, timeout: float) -> tuple[threading.Thread, dict[str, object]]:
    out: dict[str, object] = {}

    def run() -> None:
        try:
            t.exec("cat >/dev/null", stdin=b"x" * (8 << 20), timeout=timeout)
            out["result"] = "returned"
        except HostUnreachable as exc:
            out["result"] = exc.failure

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, out


@pytest.mark.parametrize("ended_by", ["the watchdog", "close() from another thread"])
def test_a_frozen_jump_host_cannot_hold_a_command_past_its_deadline(
    sshd: LoopbackSshd,
    jump: LoopbackSshd,
    keys: Keys,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    ended_by: str,
) -> None:
    """Closing the target's transport closes its channel on the hop, which needs the hop's
    send lock, held by the thread blocked on the hop's full socket: the close itself blocks,
    and the command never ends (nor does Ctrl-C's close_all). Every socket of the chain is shut
    down first: the blocked write fails, and everything unwinds."""
    t, frozen = _through_frozen_jump(sshd, jump, keys, tmp_path, timeout=1.0)
    _freeze_before(monkeypatch, "sendall", frozen)
    try:
        command_timeout = 1.0 if ended_by == "the watchdog" else 60.0
        thread, out = _exec_in_thread(t, command_timeout)
        if ended_by != "the watchdog":
            time.sleep(1.0)
            closer = threading.Thread(target=t.close, daemon=True)
            closer.start()
            closer.join(HANG_GUARD)
            assert not closer.is_alive(), "close() blocks behind the hop's send lock"
        # the command's timeout + the connect timeout + a margin; blocked, it never ends
        thread.join(1.0 + 1.0 + HANG_GUARD)
        assert not thread.is_alive(), "the command is held past its deadline"
        assert out["result"] is FailureClass.DISCONNECTED
    finally:
        _freeze(frozen, signal.SIGCONT)
        t.close()


# --- descriptors numbered past select()'s 1,024 (a few hundred hosts in flight) ---------------


@pytest.fixture
def high_descriptors() -> Iterator[None]:
    """Descriptors 3..1,100 taken, so that what a connection opens next is numbered past
    1,024 (the soft limit raised for it, restored after)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 2048:
        pytest.fail(f"the hard open-file limit ({hard}) is below 2,048: raise it to run this")
    resource.setrlimit(resource.RLIMIT_NOFILE, (4096, hard))
    held = []
    try:
        while not held or held[-1] < 1100:
            held.append(os.open(os.devnull, os.O_RDONLY))
        yield
    finally:
        for fd in held:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def test_a_command_on_descriptors_past_1024(
    sshd: LoopbackSshd, keys: Keys, known: Path, high_descriptors: None
) -> None:
    with transport(sshd, keys, known) as t:
        t.connect()
        assert t._transport is not None and t._transport.sock.fileno() > 1024
        res = t.run("sleep 0.3; echo ok", timeout=10)  # waits on the channel's pipe (> 1,024)
        assert (res.rc, res.stdout) == (0, "ok\n")


def test_a_proxycommand_on_descriptors_past_1024(
    sshd: LoopbackSshd, keys: Keys, known: Path, tmp_path: Path, high_descriptors: None
) -> None:
    with _via_proxy(sshd, keys, known, tmp_path) as t:
        t.connect()
        assert t._transport is not None
        assert t._transport.sock.process.stdout.fileno() > 1024  # type: ignore[union-attr]
        assert t.run("sleep 0.3; echo relayed", timeout=10).stdout == "relayed\n"


def test_a_fleet_run_raises_the_open_file_limit_it_needs() -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 4096:
        pytest.fail(f"the hard open-file limit ({hard}) is below 4,096: raise it to run this")
    resource.setrlimit(resource.RLIMIT_NOFILE, (1024, hard))
    try:
        list(collect_fleet([], forks=500, known_hosts=Path(os.devnull)))
        now = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
        assert now >= FDS_BASE + FDS_PER_HOST * 500
        assert allow_descriptors(100) == now  # never lowered
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
