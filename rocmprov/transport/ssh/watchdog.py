"""One timer thread for every connection's last-resort deadline.

A command on a peer that stops answering mid-request (no RST: a partition, a frozen host) can
block inside paramiko with no timeout of its own (a channel request waiting for its reply, a
send waiting for window space). Closing the transport wakes every such call, so each command
arms a deadline that closes it. One thread and a heap serve all of a run's connections: a
`threading.Timer` per command is a thread created and torn down per host, ~2,000 of them in a
2,000-host audit.

The thread exists only while a deadline is armed: an idle process is single-threaded again
(rocmprov.fleet.checker forks its worker only then, and `repair` audits twice in one process).
A deadline that comes due runs its action in a thread of its own: a close can block (a channel
through a jump host whose socket is full) and must not hold up any other connection's deadline.
"""

from __future__ import annotations

import contextlib
import heapq
import itertools
import threading
import time
from collections.abc import Callable


class Watchdog:
    """`arm(seconds, action)` runs `action` once after `seconds` unless `disarm`ed first."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._heap: list[tuple[float, int]] = []
        self._actions: dict[int, Callable[[], object]] = {}
        self._ids = itertools.count()
        self._thread: threading.Thread | None = None

    def arm(self, seconds: float, action: Callable[[], object]) -> int:
        with self._cond:
            token = next(self._ids)
            self._actions[token] = action
            heapq.heappush(self._heap, (time.monotonic() + seconds, token))
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(
                    target=self._loop, name="rocmprov-watchdog", daemon=True
                )
                self._thread.start()
            elif self._heap[0][1] == token:  # the new one is the earliest: wake the loop
                self._cond.notify()
        return token

    def disarm(self, token: int) -> None:
        """Cancel `token`'s action; its heap slot is dropped when it comes due, or at once
        (and the thread ends) when nothing else is armed."""
        with self._cond:
            self._actions.pop(token, None)
            if not self._actions and self._heap:
                self._heap.clear()
                self._cond.notify()

    def pending(self) -> int:
        with self._cond:
            return len(self._actions)

    def _stale(self, entry: tuple[float, int]) -> bool:
        return entry[1] not in self._actions

    def _loop(self) -> None:
        while True:
            with self._cond:
                due: list[Callable[[], object]] = []
                now = time.monotonic()
                while self._heap and (self._heap[0][0] <= now or self._stale(self._heap[0])):
                    _, token = heapq.heappop(self._heap)
                    action = self._actions.pop(token, None)
                    if action is not None:
                        due.append(action)
                if not due:
                    if not self._heap:  # nothing armed: end; the next arm starts a thread
                        self._thread = None
                        return
                    self._cond.wait(self._heap[0][0] - now)
                    continue
            for action in due:  # each in its own thread: one close may block for long
                try:
                    threading.Thread(
                        target=_quietly,
                        args=(action,),
                        name="rocmprov-watchdog-action",
                        daemon=True,
                    ).start()
                except RuntimeError:  # no thread to be had: run it here
                    _quietly(action)


def _quietly(action: Callable[[], object]) -> None:
    with contextlib.suppress(Exception):
        action()


WATCHDOG = Watchdog()
