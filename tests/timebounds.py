"""Time in tests that are about processes, connections and timeouts (not speed).

The project's rule: a test asserts no speed target (those live in benchmarks/, reported in
docs/benchmarks.md, whose "Time in tests" lists how each test outside test_kb* uses time).
What a test may do with time:

- a hang guard: a limit only a hang reaches, so a broken test fails instead of hanging;
  at least 10x what the operation normally takes, and its message says it is one;
- a behaviour about time (rocmprov's own timeout fires): the error kind it gives, a lower
  bound where the point is that it waited, and the configured time plus HANG_GUARD;
- "at once" (instead of after a poll interval, a deadline, a command's end): the interval the
  defect would wait out is made LONG for the test, and the bound is HANG_GUARD, far below it.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable
from pathlib import Path

HANG_GUARD = 15.0  # s: more than a loaded 2-core machine adds to any operation here
LONG = 60.0  # s: what a defect would wait out (a poll interval, a command); 4x HANG_GUARD


def processes_naming(text: str) -> list[int]:
    """Processes whose command line contains `text` (all of /proc: orphans too)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            # its arguments NUL-separated: joined with spaces, as `ps` shows them
            argv = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if text in argv:
            found.append(int(entry.name))
    return found


def within(condition: Callable[[], bool], seconds: float = HANG_GUARD) -> bool:
    """Whether `condition()` holds within `seconds` (polled every 50 ms): a bounded wait."""
    end = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > end:
            return False
        time.sleep(0.05)
    return True


def end_processes_naming(text: str) -> int:
    """SIGKILL the process group of each process whose command line contains `text` (not this
    process's own group): what a test started on a host and left behind on purpose (a command
    whose connection was cut) ends with the test, not LONG seconds later under init."""
    ended = 0
    ours = os.getpgid(0)
    for pid in processes_naming(text):
        try:
            group = os.getpgid(pid)
            if group != ours:
                os.killpg(group, signal.SIGKILL)
                ended += 1
        except ProcessLookupError:
            continue
    return ended
