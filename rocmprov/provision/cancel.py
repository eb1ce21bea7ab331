"""Stopping ansible-playbook when apply is interrupted (Ctrl-C, SIGTERM, a caller's cancel).

ansible-runner's own cancel SIGKILLs ansible-playbook's process group. Ansible's task workers
are not in it (each starts a session of its own: ansible/executor/process/worker.py, _detach),
so they were left running under init; with Mitogen's strategy a worker whose multiplexer was
killed waits for it forever. ansible-playbook stops its workers and connections itself on
SIGINT (TaskQueueManager.cleanup): send that first, and let runner's SIGKILL follow only if
ansible-playbook has not ended after a grace period.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from typing import Any

GRACE_S = 20.0


class GracefulCancel:
    """runner's cancel_callback: False until asked to cancel; then SIGINT to ansible-playbook
    (its pid from the first event that carries one, the top-level process) and False for
    GRACE_S, then True (runner kills the process group)."""

    def __init__(self, *flags: threading.Event, grace_s: float = GRACE_S) -> None:
        self.flags = flags
        self.grace_s = grace_s
        self.pid: int | None = None
        self._sent: float | None = None

    @property
    def requested(self) -> bool:
        return any(f.is_set() for f in self.flags)

    @property
    def signalled(self) -> bool:
        """ansible-playbook was sent SIGINT (it then ends as `failed` for runner)."""
        return self._sent is not None

    def note(self, event: dict[str, Any]) -> None:
        if self.pid is None and event.get("event") == "playbook_on_start":
            pid = event.get("pid")
            if isinstance(pid, int) and pid > 1:
                self.pid = pid

    def __call__(self) -> bool:
        if not self.requested:
            return False
        if self.pid is None:  # no play started yet: no workers to leave behind
            return True
        if self._sent is None:
            self._sent = time.monotonic()
            try:
                os.kill(self.pid, signal.SIGINT)
            except OSError:
                return True
            return False
        return time.monotonic() - self._sent > self.grace_s
