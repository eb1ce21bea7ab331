"""ansible-playbook ends with rocmprov: a tiny exec wrapper that sets PR_SET_PDEATHSIG.

ansible-runner starts ansible-playbook in a session of its own with SIGHUP ignored, so when
rocmprov itself is killed with SIGKILL (a CI timeout, the OOM killer) ansible-playbook and its
connections would run on, orphaned, forever. `python -I .../deathsig.py PPID CMD...` (this file
run on its own, standard library only: rocmprov need not be importable there) asks the kernel
to send SIGINT when the parent that started it dies (prctl(2), PR_SET_PDEATHSIG, kept across
execve for a program that is not set-user-ID: https://man7.org/linux/man-pages/man2/prctl.2.html),
then becomes CMD. On SIGINT ansible-playbook stops its workers and connections itself
(provision/cancel.py). PPID closes the race where the parent died before the prctl call: the
wrapper then ends at once.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys

PR_SET_PDEATHSIG = 1  # <linux/prctl.h>
SCRIPT = os.path.abspath(__file__)


def wrap(command: list[str]) -> list[str]:
    """`command` run through this wrapper, bound to the calling process."""
    if not sys.platform.startswith("linux"):
        return command
    return [sys.executable, "-I", SCRIPT, str(os.getpid()), *command]


def unwrap(command: list[str]) -> list[str]:
    """The wrapped command as the user would have typed it (for the run record)."""
    if len(command) > 4 and command[1:3] == ["-I", SCRIPT]:
        return command[4:]
    return command


def main(argv: list[str]) -> int:
    if len(argv) < 2 or not argv[0].isdigit():
        print("usage: deathsig.py PPID COMMAND [ARG...]", file=sys.stderr)
        return 2
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGINT), 0, 0, 0) != 0:
        print(f"prctl: {os.strerror(ctypes.get_errno())}", file=sys.stderr)
        return 1
    if os.getppid() != int(argv[0]):  # the parent is gone already
        return 1
    try:
        os.execvp(argv[1], argv[1:])
    except OSError as e:
        print(f"{argv[1]}: {e.strerror}", file=sys.stderr)
        return 127
    return 0  # not reached


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
