"""SSHTransport: one host over one SSH connection (paramiko), commands as exec channels.

One `SSHTransport` is one TCP connection (TCP_NODELAY, or a ProxyCommand, or a channel through
ProxyJump hops) with one authenticated SSH session; every command is an exec channel on it.
Everything it is given (address, port, user, become user) and everything ssh_config gives back
is checked at construction (inventory.hostnames: BadHostValue, a UsageError); after that, every
failure is a `HostUnreachable` with one `FailureClass` and a one-line message: nothing else
escapes `connect` and `run`.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import logging
import socket
import time
from typing import TYPE_CHECKING

import paramiko

from rocmprov.inventory.hostnames import check_user
from rocmprov.transport.base import CommandResult, FailureClass, HostUnreachable
from rocmprov.transport.ssh.auth import authenticate
from rocmprov.transport.ssh.command import (
    LOCAL_GRACE,
    TIMEOUT_RC,
    ExecResult,
    decode,
    sudo_argv,
    sudo_denied_line,
    wrap,
)
from rocmprov.transport.ssh.config import SSHOptions, Target, resolve
from rocmprov.transport.ssh.failures import classify
from rocmprov.transport.ssh.jump import jump_chain
from rocmprov.transport.ssh.known_hosts import check_host_key, prefer_known_key_types
from rocmprov.transport.ssh.watchdog import WATCHDOG
from rocmprov.transport.ssh.wire import (
    WireProxyCommand,
    WireTransport,
    prefer_aead,
    wait_readable,
)

if TYPE_CHECKING:
    from rocmprov.inventory.hosts import HostSpec

# paramiko logs transport-thread errors (with tracebacks); never let them reach the user's
# terminal through logging's last-resort handler. Failures are reported as HostUnreachable.
logging.getLogger("paramiko").addHandler(logging.NullHandler())

# The most one command may send back (stdout and stderr together): a whole audit script's
# output is a few MiB (the kernel ring buffer is at most a few MiB); more is a broken or hostile
# host, refused before it costs the controller memory (with --forks N, N hosts at once).
MAX_OUTPUT = 64 << 20


class SSHTransport:
    """One host over SSH. `run` follows the Transport protocol; `exec` is the raw form."""

    def __init__(
        self,
        host: str,
        *,
        options: SSHOptions,
        address: str | None = None,
        port: int | None = None,
        user: str | None = None,
        key_file: str | None = None,
        become: bool = False,
        become_user: str | None = None,
    ) -> None:
        self.host = host
        self.become = become
        self.become_user = become_user
        self._options = options
        if become_user is not None:
            check_user(host, "become_user", become_user)
        # every value is checked before ssh_config's lookup (and its Match exec) sees it
        self._target = resolve(
            options.ssh_config,
            address or host,
            owner=host,
            field="address" if address else "host",
            port=port,
            user=user,
            key_files=(key_file,) if key_file else (),
        )
        self._chain: list[Target] = []
        self._chain_error = ""
        try:
            self._chain = jump_chain(options.ssh_config, self._target, owner=host)
        except ValueError as exc:  # a loop: unreachable (bad values raised BadHostValue)
            self._chain_error = str(exc)
        self._transport: paramiko.Transport | None = None
        self._hops: list[paramiko.Transport] = []
        self._closed = False

    @classmethod
    def from_spec(cls, spec: HostSpec, options: SSHOptions) -> SSHTransport:
        return cls(
            spec.name,
            options=options,
            address=spec.address,
            port=spec.port,
            user=spec.user,
            key_file=spec.key_file,
            become=spec.become,
            become_user=spec.become_user,
        )

    # -- what the host is ---------------------------------------------------------------------

    @property
    def user(self) -> str:
        return self._target.user

    @property
    def endpoint(self) -> str:
        """user@hostname:port as connected (after ssh_config)."""
        return f"{self._target.user}@{self._target.hostname}:{self._target.port}"

    @property
    def uses_sudo(self) -> bool:
        """Root-needing commands go through `sudo -n`: become is set and we are not root."""
        return self.become and self.user != "root"

    def sudo_argv(self) -> list[str]:
        return sudo_argv(self.become_user)

    # -- connection ---------------------------------------------------------------------------

    def connect(self) -> None:
        """Open (once) the connection, through any ProxyJump hops. Raises HostUnreachable."""
        if self._transport is not None and self._transport.is_active():
            return
        if self._closed:
            raise self._fail(FailureClass.DISCONNECTED, "connection closed")
        if self._chain_error:
            raise self._fail(FailureClass.ERROR, self._chain_error)
        via: paramiko.Transport | None = None
        for hop in self._chain:
            via = self._open(hop, via, where=f"jump host {hop.alias}: ")
            self._hops.append(via)
        self._transport = self._open(self._target, via, where="")
        if self._closed:  # close() was called (from another thread) while we connected
            self.close()
            raise self._fail(FailureClass.DISCONNECTED, "connection closed")

    def close(self) -> None:
        """Close the connection and its hops; safe to call twice and from another thread."""
        self._closed = True
        chain = [self._transport, *reversed(self._hops)]
        _shut_down(chain)
        for t in chain:
            if t is not None:
                with contextlib.suppress(Exception):
                    t.close()

    def _abort(self, t: paramiko.Transport) -> None:
        """The watchdog's action for a command on `t`: the whole chain shut down, `t` closed."""
        _shut_down([t, *self._hops])
        with contextlib.suppress(Exception):
            t.close()

    def __enter__(self) -> SSHTransport:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _fail(self, failure: FailureClass, message: str) -> HostUnreachable:
        return HostUnreachable(self.host, failure, message)

    def _open(
        self, target: Target, via: paramiko.Transport | None, where: str
    ) -> paramiko.Transport:
        timeout = self._options.connect_timeout
        where_to = f"{where}{target.hostname}:{target.port}"
        try:
            sock = self._socket(target, via, timeout)
        except (OSError, paramiko.SSHException) as exc:
            raise self._classify(exc, where_to, timeout) from None
        try:
            t = WireTransport(sock)
        except (OSError, paramiko.SSHException) as exc:
            with contextlib.suppress(Exception):
                sock.close()
            raise self._classify(exc, where_to, timeout) from None
        try:
            t.banner_timeout = t.handshake_timeout = t.auth_timeout = timeout
            prefer_aead(t)
            prefer_known_key_types(t, self._options.known_hosts, target.known_name)
            t.start_client(timeout=timeout)
            if getattr(t, "host_key", None) is None:  # start_client returns on its timeout
                raise self._fail(
                    FailureClass.TIMEOUT, f"{where_to}: no SSH handshake within {timeout:g}s"
                )
            check_host_key(
                self._options.known_hosts,
                t.get_remote_server_key(),
                target.known_name,
                accept_new=self._options.accept_new,
                host=self.host,
                where=where,
            )
            authenticate(
                t,
                target,
                host=self.host,
                where=where,
                allow_agent=self._options.allow_agent,
                look_for_keys=self._options.look_for_keys,
            )
        except HostUnreachable:
            t.close()
            raise
        except (OSError, EOFError, paramiko.SSHException) as exc:
            t.close()
            raise self._classify(exc, where_to, timeout) from None
        return t

    @staticmethod
    def _socket(
        target: Target, via: paramiko.Transport | None, timeout: float
    ) -> socket.socket | paramiko.Channel | WireProxyCommand:
        if via is not None:
            return via.open_channel(
                "direct-tcpip", (target.hostname, target.port), ("127.0.0.1", 0), timeout=timeout
            )
        if target.proxy_command:
            return WireProxyCommand(target.proxy_command)
        last: OSError | None = None
        infos = socket.getaddrinfo(target.hostname, target.port, type=socket.SOCK_STREAM)
        for family, stype, proto, _, addr in infos:
            sock = socket.socket(family, stype, proto)
            try:
                sock.settimeout(timeout)
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                sock.connect(addr)
            except OSError as exc:
                sock.close()
                last = exc
                continue
            return sock
        raise last or OSError(errno.EADDRNOTAVAIL, "no address")

    def _classify(self, exc: BaseException, where: str, timeout: float) -> HostUnreachable:
        """One failure class and one line for anything that went wrong while connecting."""
        return self._fail(*classify(exc, where, timeout))

    # -- commands -----------------------------------------------------------------------------

    def exec(self, command: str, *, stdin: bytes = b"", timeout: float) -> ExecResult:
        """Run `command` (through the login shell, as sshd does) feeding `stdin`; wait at most
        `timeout` seconds, then return what came so far with timed_out=True. Raises
        HostUnreachable(DISCONNECTED) when the connection dies."""
        self.connect()
        t = self._transport
        assert t is not None
        start = time.monotonic()
        deadline = start + timeout
        # A last resort for a peer that stops answering mid-request: closing the transport
        # wakes every blocked paramiko call.
        watchdog = WATCHDOG.arm(
            timeout + self._options.connect_timeout, functools.partial(self._abort, t)
        )
        chan: paramiko.Channel | None = None
        try:
            chan = t.open_session(timeout=self._options.connect_timeout)
            chan.settimeout(self._options.connect_timeout)
            chan.exec_command(command)
            if stdin:
                chan.sendall(stdin)
            chan.shutdown_write()
            return self._drain(t, chan, start, deadline)
        except HostUnreachable:
            raise
        except (OSError, EOFError, paramiko.SSHException) as exc:
            text = " ".join(str(exc).split()) or type(exc).__name__
            raise self._fail(
                FailureClass.DISCONNECTED,
                f"connection lost after {time.monotonic() - start:.1f}s: {text}",
            ) from None
        finally:
            WATCHDOG.disarm(watchdog)
            if chan is not None:
                with contextlib.suppress(Exception):
                    chan.close()

    def _drain(
        self, t: paramiko.Transport, chan: paramiko.Channel, start: float, deadline: float
    ) -> ExecResult:
        out, err = bytearray(), bytearray()
        while True:
            while chan.recv_ready():
                out += chan.recv(1 << 16)
            while chan.recv_stderr_ready():
                err += chan.recv_stderr(1 << 16)
            if len(out) + len(err) > MAX_OUTPUT:
                raise self._fail(
                    FailureClass.ERROR,
                    f"the host sent more than {MAX_OUTPUT >> 20} MiB of output for one command "
                    f"in {time.monotonic() - start:.1f}s: refused, the rest not read",
                )
            if chan.closed or (chan.eof_received and chan.exit_status_ready()):
                break
            if not t.is_active():
                break
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return ExecResult(None, bytes(out), bytes(err), time.monotonic() - start, True)
            if chan.eof_received:
                chan.status_event.wait(min(remaining, 0.5))
            else:
                wait_readable(chan.fileno(), min(remaining, 0.5))
        while chan.recv_ready() and len(out) + len(err) <= MAX_OUTPUT:
            out += chan.recv(1 << 16)
        while chan.recv_stderr_ready() and len(out) + len(err) <= MAX_OUTPUT:
            err += chan.recv_stderr(1 << 16)
        duration = time.monotonic() - start
        if chan.exit_status_ready() and chan.exit_status >= 0:
            return ExecResult(chan.exit_status, bytes(out), bytes(err), duration)
        if not t.is_active():
            raise self._fail(
                FailureClass.DISCONNECTED, f"connection lost after {duration:.1f}s of a command"
            )
        return ExecResult(None, bytes(out), bytes(err), duration)

    def run(self, command: str, *, timeout: float, sudo: bool = False) -> CommandResult:
        """`/bin/sh -c command` on the host, killed there after `timeout` (rc 124).

        sudo=True goes through `sudo -n` when become is set and the login user is not root;
        a refusal raises SUDO_DENIED. A command that outlives its kill raises PROBE_TIMEOUT.
        """
        sudo_argv = self.sudo_argv() if sudo and self.uses_sudo else []
        res = self.exec(
            "/bin/sh -s",
            stdin=self.wrap(command, timeout, sudo_argv),
            timeout=timeout + LOCAL_GRACE,
        )
        if res.timed_out:
            raise self._fail(
                FailureClass.PROBE_TIMEOUT,
                f"command still running {res.duration:.0f}s after its {timeout:g}s timeout "
                "and kill (stuck in the kernel?)",
            )
        if res.rc is None:
            raise self._fail(
                FailureClass.DISCONNECTED,
                f"command ended without an exit status after {res.duration:.1f}s (killed?)",
            )
        stdout, stderr = decode(res.stdout), decode(res.stderr)
        rc = res.rc
        if sudo_argv and rc != 0 and (line := sudo_denied_line(stderr)):
            raise self._fail(FailureClass.SUDO_DENIED, line)
        if rc in (TIMEOUT_RC, 128 + 9) and res.duration >= timeout:
            rc = TIMEOUT_RC
            stderr += f"\nrocmprov: timed out after {timeout:g}s"
        return CommandResult(rc, stdout, stderr, res.duration)

    @staticmethod
    def wrap(command: str, timeout: float, sudo_argv: list[str]) -> bytes:
        """The script fed to `/bin/sh -s` (see command.wrap)."""
        return wrap(command, timeout, sudo_argv)


def _shut_down(chain: list[paramiko.Transport | None]) -> None:
    """Shut down the socket under each transport of a chain, before any is closed: it wakes
    each transport thread's blocked read at once, and fails a write blocked on a full socket (a
    jump host that stopped answering), whose thread holds the hop's send lock that closing a
    channel through that hop needs (the close would otherwise block for good)."""
    for t in chain:
        if t is not None and isinstance(t.sock, socket.socket):
            with contextlib.suppress(OSError):
                t.sock.shutdown(socket.SHUT_RDWR)
