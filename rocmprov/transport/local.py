"""Runs commands on this machine with subprocess, with a timeout per command."""

from __future__ import annotations

import os
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
        try:
            proc = subprocess.run(
                argv,
                capture_output=True,
                timeout=timeout,
                stdin=subprocess.DEVNULL,
                check=False,
            )
        except subprocess.TimeoutExpired as exc:
            return CommandResult(
                TIMEOUT_RC,
                _text(exc.stdout),
                _text(exc.stderr) + f"\nrocmprov: timed out after {timeout:g}s",
                time.monotonic() - start,
            )
        return CommandResult(
            proc.returncode, _text(proc.stdout), _text(proc.stderr), time.monotonic() - start
        )

    def close(self) -> None:
        return None


def _text(data: bytes | str | None) -> str:
    if data is None:
        return ""
    if isinstance(data, str):
        return data
    return data.decode("utf-8", errors="replace")
