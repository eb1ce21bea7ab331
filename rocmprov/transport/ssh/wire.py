"""How rocmprov's SSH connections use the wire: cipher order, the transport thread's polling,
and a ProxyCommand whose end of output ends the connection and whose close leaves nothing."""

from __future__ import annotations

import contextlib
import math
import os
import select
import subprocess
import time

import paramiko

# AES-GCM first: an AEAD cipher (OpenSSH offers it by default) needs no separate MAC, which
# paramiko computes with one HMAC object per packet and compares byte by byte in Python;
# the rest of paramiko's list follows, for servers without it.
AEAD_FIRST = ("aes128-gcm@openssh.com", "aes256-gcm@openssh.com")
KILL_AFTER = 1.0  # s a closed ProxyCommand has to end on SIGTERM before SIGKILL


class WireTransport(paramiko.Transport):
    # paramiko's transport thread polls its socket every 0.1 s to see whether it was closed:
    # ten wake-ups a second per host while a host's probes run. SSHTransport.close() shuts the
    # socket down, which wakes that thread at once, so it can sleep longer between checks
    # (keepalives and rekeying are checked at the same wake-ups; rocmprov sets neither).
    _active_check_timeout = 1.0


def prefer_aead(t: paramiko.Transport) -> None:
    """Offer AEAD_FIRST ahead of the rest of `t`'s ciphers (only those it already offers)."""
    options = t.get_security_options()
    offered = tuple(options.ciphers)
    first = tuple(c for c in AEAD_FIRST if c in offered)
    options.ciphers = first + tuple(c for c in offered if c not in first)


class WireProxyCommand(paramiko.ProxyCommand):
    """paramiko's ProxyCommand, with the command's end of output as the connection's end, and
    a close that leaves nothing behind.

    paramiko's `recv` loops on select() while the command's stdout is at end of file (select
    says readable, the read gives nothing) until the transport's poll interval passes, and then
    again, as long as the transport is open (https://github.com/paramiko/paramiko/pull/1180):
    a busy core for up to a second after every close, and forever after a command that dies
    mid-run (the host then looks like a command stuck past its deadline). Here end of file gives
    b"", which paramiko reads as a closed connection, as from a socket. paramiko's `close` only
    sends SIGTERM: the command stays a zombie and its three pipes stay open until the garbage
    collector finds the transport (https://github.com/paramiko/paramiko/issues/1713, #1715),
    past select()'s 1,024 descriptors in a large fleet. Here it is reaped and its pipes closed.
    """

    def recv(self, size: int) -> bytes:
        buffer = b""
        start = time.monotonic()
        out = self.process.stdout
        try:
            while len(buffer) < size:
                wait = None
                if self.timeout is not None:
                    wait = self.timeout - (time.monotonic() - start)
                    if wait <= 0:
                        if buffer:
                            return buffer
                        raise TimeoutError()
                if wait_readable(out.fileno(), wait):
                    chunk = os.read(out.fileno(), size - len(buffer))
                    if not chunk:  # the command closed its output: it ended, or is ending
                        return buffer
                    buffer += chunk
            return buffer
        except TimeoutError:
            raise
        except (OSError, ValueError) as exc:
            if out.closed:  # close() closed it (from another thread): the end, as for a socket
                return buffer
            raise paramiko.ProxyCommandFailure(" ".join(self.cmd), str(exc)) from None

    def close(self) -> None:
        """SIGTERM (SIGKILL after KILL_AFTER), reaped, pipes closed; safe to call twice. A
        reaped command is never signalled (its pid may be another process's by then)."""
        proc = self.process
        if proc.poll() is None:
            with contextlib.suppress(OSError):
                proc.terminate()
            try:
                proc.wait(KILL_AFTER)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(OSError):
                    proc.kill()
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.wait(KILL_AFTER)
        for pipe in (proc.stdin, proc.stdout, proc.stderr):
            if pipe is not None:
                with contextlib.suppress(OSError):
                    pipe.close()


def wait_readable(fileno: int, timeout: float | None) -> bool:
    """Wait until `fileno` is readable (or at end of file), at most `timeout` seconds. poll(),
    not select(): select() refuses descriptors numbered 1,024 and up, which a fleet run with
    a few hundred hosts in flight reaches (a socket and a channel's pipe pair per host)."""
    poller = select.poll()
    poller.register(fileno, select.POLLIN | select.POLLPRI)
    ms = None if timeout is None else max(0, math.ceil(timeout * 1000))
    return bool(poller.poll(ms))
