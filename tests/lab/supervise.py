"""Run one lab host: systemd-nspawn inside the host's network namespace, restarted on reboot.

Started detached by lab.py, one per host. It moves nspawn into the host's own cgroups (this
machine's PID 1 is not systemd), restarts nspawn when the container reboots (exit code 133,
as systemd-nspawn@.service does), and turns SIGTERM into a clean poweroff of the container.
Stdlib only; run by path: python3 supervise.py --name N --netns NS --root DIR --cgroup P...
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

REBOOT_EXIT = 133


def nspawn_argv(name: str, netns: str, root: str) -> list[str]:
    return [
        "nsenter", f"--net=/run/netns/{netns}", "--",
        "systemd-nspawn", "--quiet", "--boot",
        "--register=no", "--keep-unit", "--settings=no",
        f"--directory={root}", f"--machine={name}", f"--hostname={name}",
        "--capability=CAP_NET_ADMIN",
        "--link-journal=no", "--resolv-conf=off", "--timezone=off",
        "--console=read-only",
    ]


def join_cgroups(cgroups: list[str]) -> None:
    """Move this process (and so the nspawn it starts) into the host's own cgroups."""
    pid = str(os.getpid())
    for cg in cgroups:
        Path(cg, "cgroup.procs").write_text(pid)


def log(msg: str) -> None:
    print(f"supervise[{os.getpid()}] {time.strftime('%H:%M:%S')} {msg}", flush=True)


def run(args: argparse.Namespace) -> int:
    stopping = False
    child: subprocess.Popen[bytes] | None = None

    def on_term(signum: int, _frame: object) -> None:
        nonlocal stopping
        stopping = True
        if child is not None and child.poll() is None:
            child.send_signal(signal.SIGTERM)  # nspawn: clean poweroff of the container

    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGINT, on_term)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    join_cgroups(args.cgroup)  # nspawn (our child) starts there and makes its own below
    argv = nspawn_argv(args.name, args.netns, args.root)
    rc = 0
    for boot in range(1, args.max_boots + 1):
        if stopping:
            break
        log(f"boot {boot}: {' '.join(argv)}")
        child = subprocess.Popen(argv, stdin=subprocess.DEVNULL)
        if stopping:
            child.send_signal(signal.SIGTERM)
        rc = child.wait()
        log(f"nspawn exited {rc}")
        if rc != REBOOT_EXIT:
            break
    return rc


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--name", required=True)
    p.add_argument("--netns", required=True)
    p.add_argument("--root", required=True)
    p.add_argument("--cgroup", action="append", default=[], help="cgroup dir to join (repeat)")
    p.add_argument("--max-boots", type=int, default=100)
    return run(p.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
