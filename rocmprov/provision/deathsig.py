"""ansible-playbook ends with rocmprov: a small supervisor that outlives neither.

ansible-runner starts ansible-playbook in a session of its own with SIGHUP ignored, so when
rocmprov itself is killed with SIGKILL (a CI timeout, the OOM killer) ansible-playbook, its task
workers (each in a session of its own) and its Mitogen connections ran on, orphaned, forever.
`python -I .../deathsig.py PPID CMD...` (this file run on its own, standard library only:
rocmprov need not be importable there) asks the kernel for a signal when the parent that started
it dies (prctl(2) PR_SET_PDEATHSIG), becomes the subreaper of everything below it
(PR_SET_CHILD_SUBREAPER: orphaned workers are reparented to it, not to init) and runs CMD as its
child. https://man7.org/linux/man-pages/man2/prctl.2.html
When the parent dies it sends CMD SIGINT (ansible-playbook then stops its workers and
connections itself: provision/cancel.py), and after GRACE_S kills whatever is still below it.
PPID closes the race where the parent died before the prctl call: the supervisor ends at once.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import subprocess
import sys
import time

PR_SET_PDEATHSIG = 1  # <linux/prctl.h>
PR_SET_CHILD_SUBREAPER = 36
GRACE_S = 15.0
SCRIPT = os.path.abspath(__file__)


def wrap(command: list[str]) -> list[str]:
    """`command` run under this supervisor, bound to the calling process."""
    if not sys.platform.startswith("linux"):
        return command
    return [sys.executable, "-I", SCRIPT, str(os.getpid()), *command]


def unwrap(command: list[str]) -> list[str]:
    """The wrapped command as the user would have typed it (for the run record)."""
    if len(command) > 4 and command[1:3] == ["-I", SCRIPT]:
        return command[4:]
    return command


def descendants(root: int) -> list[int]:
    """Every process below `root` (from /proc's parent pids)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                stat = f.read(4096).decode(errors="replace")
        except OSError:
            continue
        # pid (comm) state ppid ...: comm may hold spaces and parentheses, the last ")" ends it
        fields = stat[stat.rfind(")") + 2 :].split()
        if len(fields) > 1 and fields[1].isdigit():
            children.setdefault(int(fields[1]), []).append(int(entry))
    out: list[int] = []
    todo = [root]
    while todo:
        for pid in children.get(todo.pop(), []):
            out.append(pid)
            todo.append(pid)
    return out


def _kill_below(me: int) -> None:
    for _ in range(5):  # a process may fork while its parent is being killed
        pids = descendants(me)
        if not pids:
            return
        for pid in pids:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.2)
        while True:  # reap what was reparented here
            try:
                if os.waitpid(-1, os.WNOHANG)[0] == 0:
                    break
            except ChildProcessError:
                break


def main(argv: list[str]) -> int:
    if len(argv) < 2 or not argv[0].isdigit():
        print("usage: deathsig.py PPID COMMAND [ARG...]", file=sys.stderr)
        return 2
    libc = ctypes.CDLL(None, use_errno=True)
    orphaned = False

    def parent_died(_signum: int, _frame: object) -> None:
        nonlocal orphaned
        orphaned = True

    signal.signal(signal.SIGUSR1, parent_died)
    if libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGUSR1), 0, 0, 0) != 0:
        print(f"prctl: {os.strerror(ctypes.get_errno())}", file=sys.stderr)
        return 1
    if os.getppid() != int(argv[0]):  # the parent is gone already
        return 1
    libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    try:
        child = subprocess.Popen(argv[1:])
    except OSError as e:
        print(f"{argv[1]}: {e.strerror}", file=sys.stderr)
        return 127
    # SIGINT/SIGTERM for the group (Ctrl-C on a terminal, runner's cancel) reach the child too
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, lambda *_: child.terminate())
    while child.poll() is None and not orphaned:
        with contextlib.suppress(subprocess.TimeoutExpired):
            child.wait(timeout=0.5)
    if orphaned and child.poll() is None:
        child.send_signal(signal.SIGINT)
        with contextlib.suppress(subprocess.TimeoutExpired):
            child.wait(timeout=GRACE_S)
    if orphaned:
        _kill_below(os.getpid())
    rc = child.wait()
    if rc < 0:  # killed by a signal: end the same way, as runner expects of ansible-playbook
        signal.signal(-rc, signal.SIG_DFL)
        os.kill(os.getpid(), -rc)
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
