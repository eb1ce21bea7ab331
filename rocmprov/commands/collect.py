"""rocmprov collect: write a support bundle per host (raw probe outputs + manifest)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rocmprov.commands._options import add_fleet_options, fleet_options
from rocmprov.exitcodes import Exit, UsageError

HELP = "write a support bundle per host (raw outputs + manifest.json), secrets scrubbed"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("inventory", nargs="?", help="Ansible inventory (default: this machine)")
    parser.add_argument("--local", action="store_true", help="collect this machine (the default)")
    parser.add_argument("-o", "--output", type=Path, required=True, help="directory to write")
    parser.add_argument("--tar", action="store_true", help="also write <host>.tar.gz per bundle")
    add_fleet_options(parser, forks=64)
    parser.add_argument("--gpu-user", default="", help="user who runs GPU work")
    parser.add_argument("--python", default="", help="python whose torch is probed")


def run(args: argparse.Namespace) -> int:
    from rocmprov.collect.bundle import BundleWriter
    from rocmprov.report.safe import printable

    if args.inventory and args.local:
        raise UsageError("give INVENTORY or --local, not both")
    written = 0
    failed = 0
    # The output directory is checked (owner, mode, writable) before any probe runs.
    with BundleWriter(args.output, tar=args.tar) as writer:
        for bundle, error in _bundles(args):
            if error:
                failed += 1
                print(f"rocmprov: {printable(error, one_line=True)}", file=sys.stderr)
                continue
            try:
                done = writer.write(bundle)
            except OSError as exc:
                failed += 1
                why = exc.strerror or str(exc)
                line = f"{bundle.host}: cannot write its bundle in {args.output}: {why}"
                print(f"rocmprov: {printable(line, one_line=True)}", file=sys.stderr)
                continue
            written += 1
            also = f" and {done.tar}" if done.tar else ""
            print(printable(f"{bundle.host}: {done.path}{also}", one_line=True), file=sys.stderr)
    if failed:
        return Exit.UNKNOWN
    return Exit.OK if written else Exit.UNKNOWN


def _bundles(args: argparse.Namespace):
    if args.inventory:
        from rocmprov.fleet.fanout import collect_inventory

        yield from collect_inventory(fleet_options(args))
        return
    from rocmprov.collect.local import collect_local
    from rocmprov.collect.probes import build_probes
    from rocmprov.commands._options import gpu_user_arg
    from rocmprov.inventory.hosts import torch_python

    python, fallback = (args.python, "") if args.python else torch_python({})
    probes = build_probes(
        gpu_users=gpu_user_arg(args.gpu_user), python=python, python_fallback=fallback
    )
    yield collect_local(probes, become=args.become), ""
