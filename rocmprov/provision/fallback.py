"""apply with Mitogen's strategy, and Ansible's `linear` where Mitogen cannot or did not work.

- Mitogen missing, on an untested ansible-core, or failing to load: the whole run is `linear`.
- A run under Mitogen that ran no host at all (the strategy broke): run again with `linear`.
- Hosts that failed or were unreachable under Mitogen (become without sudo, for one: Mitogen
  calls sudo where `linear` as root does not): those hosts alone run again with `linear`, and
  their result is the rerun's, with a note saying so. A host that fails under both is reported
  with linear's failure.
Each switch is said in one line (`say`). An interrupted run is never rerun.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from rocmprov.provision.runner import ApplyOptions, ApplyResult, run_apply
from rocmprov.provision.strategy import mitogen_problem

Say = Callable[[str], None]


def _stderr(line: str) -> None:
    print(f"rocmprov: {line}", file=sys.stderr, flush=True)


def apply(
    opts: ApplyOptions,
    on_event: Callable[..., Any] | None = None,
    cancel: threading.Event | None = None,
    say: Say = _stderr,
) -> ApplyResult:
    """run_apply with the fallbacks above; opts.fast=False is plain `linear`."""
    if not opts.fast:
        return run_apply(opts, on_event, cancel)
    problem = mitogen_problem()
    if problem is not None:
        say(f"{problem}: using Ansible's linear strategy")
        return run_apply(replace(opts, fast=False), on_event, cancel)
    first = run_apply(opts, on_event, cancel)
    if first.status == "canceled":
        return first
    if not first.hosts:
        say(
            f"Mitogen's strategy ran no host ({first.message or first.status}): "
            "running again with Ansible's linear strategy"
        )
        return run_apply(replace(opts, fast=False), on_event, cancel)
    bad = [h.host for h in first.hosts if h.failed or h.unreachable]
    if not bad:
        return first
    shown = ", ".join(bad[:5]) + (f" and {len(bad) - 5} more" if len(bad) > 5 else "")
    say(
        f"{len(bad)} host(s) failed under Mitogen's strategy ({shown}): "
        "running them again with Ansible's linear strategy"
    )
    second = run_apply(replace(opts, fast=False, limit=",".join(bad)), on_event, cancel)
    return merge(first, second)


def merge(first: ApplyResult, second: ApplyResult) -> ApplyResult:
    """`first` with the hosts `second` ran replaced by second's results (each noted)."""
    was = {h.host: h for h in first.hosts}
    again = {}
    why = []
    for h in second.hosts:
        before = was.get(h.host)
        if before and before.failure:
            why.append(f"{h.host} under Mitogen's strategy: {before.failure.message}"[:400])
        again[h.host] = replace(h, notes=(*h.notes, "ran again with Ansible's linear strategy"))
    hosts = tuple(again.get(h.host, h) for h in first.hosts)
    failed = any(h.failed or h.unreachable for h in hosts)
    status = "failed" if failed else "successful"
    if second.status == "canceled":
        status = "canceled"
    lines = [m for m in (first.message, second.message) if m] + why
    message = "\n".join([*lines, f"linear rerun's record: {second.run_dir}"])
    return replace(
        first,
        status=status,
        ansible_rc=second.ansible_rc if failed else 0,
        hosts=hosts,
        duration=first.duration + second.duration,
        message=message,
    )
