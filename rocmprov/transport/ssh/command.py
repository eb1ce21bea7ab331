"""What runs on the host: the raw result of an exec channel, and the `/bin/sh -s` script that
runs one command under coreutils timeout (and sudo -n), every word quoted with shlex."""

from __future__ import annotations

import shlex
from dataclasses import dataclass

KILL_GRACE = 5  # seconds between TERM and KILL of a remote command past its timeout
LOCAL_GRACE = 15.0  # how long past a command's timeout we wait for the remote side to end it
TIMEOUT_RC = 124
_SUDO_DENIED = (
    "a password is required",
    "a terminal is required",
    "not in the sudoers",
    "is not allowed to execute",
    "may not run sudo",
)


@dataclass(frozen=True)
class ExecResult:
    """A raw remote command. rc None: no exit status (killed by a signal, or deadline passed)."""

    rc: int | None
    stdout: bytes
    stderr: bytes
    duration: float
    timed_out: bool = False


def decode(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")


def _secs(seconds: float) -> str:
    """A duration for coreutils timeout: whole seconds where whole, else milliseconds."""
    seconds = max(seconds, 0.001)
    return str(int(seconds)) if seconds == int(seconds) else f"{seconds:.3f}"


def sudo_denied_line(stderr: str) -> str | None:
    """sudo's refusal line, if `stderr` holds one."""
    for line in stderr.splitlines():
        if line.startswith("sudo:") and any(t in line for t in _SUDO_DENIED):
            return line.strip()
    return None


def sudo_argv(become_user: str | None) -> list[str]:
    """`sudo -n [-u USER] --`: never prompts (a password prompt would hang the run)."""
    argv = ["sudo", "-n"]
    if become_user and become_user != "root":
        argv += ["-u", become_user]
    return [*argv, "--"]


def wrap(command: str, timeout: float, sudo: list[str]) -> bytes:
    """The script fed to `/bin/sh -s`: the command under coreutils timeout where present
    (timeout inside sudo, so it can kill what runs as root), stdin from /dev/null."""
    argv = ["/bin/sh", "-c", command]
    timed = [*sudo, "timeout", "-k", str(KILL_GRACE), _secs(timeout), *argv]
    plain = [*sudo, *argv]
    return (
        "if command -v timeout >/dev/null 2>&1; "
        f"then exec {shlex.join(timed)} </dev/null; "
        f"else exec {shlex.join(plain)} </dev/null; fi\n"
    ).encode()
