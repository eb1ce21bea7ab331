"""python -m tests.lab up N --workdir DIR | down --workdir DIR | status --workdir DIR
| reset HOST --workdir DIR"""

from __future__ import annotations

import argparse
import sys
import time

from .lab import Lab, LabError


def cmd_up(lab: Lab, args: argparse.Namespace) -> int:
    t0 = time.monotonic()
    hosts = lab.start(args.n)
    print(f"{len(hosts)} hosts up in {time.monotonic() - t0:.1f}s", file=sys.stderr)
    for h in hosts:
        print(f"{h.name}\t{h.address}")
    print(f"inventory: {lab.inventory}\nssh:       ssh -F {lab.ssh_config} {hosts[0].name}"
          f"\nsudo user: admin (ssh -F {lab.ssh_config} -l admin {hosts[0].name})"
          f"\nstop:      python -m tests.lab down --workdir {lab.workdir}", file=sys.stderr)
    return 0


def cmd_down(lab: Lab, _args: argparse.Namespace) -> int:
    lab.stop()
    return 0


def cmd_status(lab: Lab, _args: argparse.Namespace) -> int:
    if lab.number is None:
        print("no lab running here")
        return 1
    from .lab import alive
    for h in lab.hosts:
        print(f"{h.name}\t{h.address}\t{'up' if alive(h.supervisor) else 'down'}")
    return 0


def cmd_reset(lab: Lab, args: argparse.Namespace) -> int:
    by_name = {h.name: h for h in lab.hosts}
    if args.host not in by_name:
        print(f"no host {args.host}; hosts: {', '.join(by_name)}", file=sys.stderr)
        return 64
    lab.reset(by_name[args.host])
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tests.lab", description="rocmprov lab hosts")
    sub = p.add_subparsers(dest="cmd", required=True)
    up = sub.add_parser("up", help="start N hosts")
    up.add_argument("n", type=int)
    up.set_defaults(fn=cmd_up)
    sub.add_parser("down", help="stop the lab and remove all it made").set_defaults(fn=cmd_down)
    sub.add_parser("status", help="list the hosts").set_defaults(fn=cmd_status)
    rs = sub.add_parser("reset", help="boot one host pristine")
    rs.add_argument("host")
    rs.set_defaults(fn=cmd_reset)
    for sp in sub.choices.values():
        sp.add_argument("--workdir", required=True, help="where the lab keeps its state and keys")
    args = p.parse_args(argv)
    try:
        return int(args.fn(Lab(args.workdir), args))
    except LabError as exc:
        print(f"lab: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
