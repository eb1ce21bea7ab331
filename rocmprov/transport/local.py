"""Runs commands on this machine with subprocess, with a timeout per command; a command that
times out is killed with every process it started (its own process group)."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import time

from rocmprov.transport.base import CommandResult

TIMEOUT_RC = 124


class LocalTransport:
    """This machine. `become` runs sudo-needing commands through `sudo -n` when not root."""

    def __init__(self, *, become: bool = False) -> None:
        self.host = socket.gethostname()
        self.become = become

    def run(self, command: str, *, timeout: float, sudo: bool = False) -> CommandResult:
        argv = ["/bin/sh", "-c", command]
        if sudo and self.become and os.geteuid() != 0:
            argv = ["sudo", "-n", "--", *argv]
        start = time.monotonic()
        # a session of its own: on a timeout the whole process group goes (the tool the shell
        # started and its children), not only the shell
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        try:
            out, err = proc.communicate(timeout=max(timeout, 0.001))
        except subprocess.TimeoutExpired:
            _kill_group(proc.pid)
            try:
                out, err = proc.communicate(timeout=2)
            except subprocess.TimeoutExpired:  # a child left the group and holds the pipes
                proc.kill()
                out, err = b"", b""
                for pipe in (proc.stdout, proc.stderr):
                    if pipe is not None:
                        pipe.close()
                proc.wait()
            return CommandResult(
                TIMEOUT_RC,
                _text(out),
                _text(err) + f"\nrocmprov: timed out after {timeout:g}s",
                time.monotonic() - start,
            )
        finally:
            if proc.returncode is None:  # interrupted (Ctrl-C): leave nothing running
                _kill_group(proc.pid)
                proc.wait()
        return CommandResult(proc.returncode, _text(out), _text(err), time.monotonic() - start)

    def close(self) -> None:
        return None


def _kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


def _text(data: bytes | str | None) -> str:
    if data is None:
        return ""
    if isinstance(data, str):
        return data
    return data.decode("utf-8", errors="replace")
