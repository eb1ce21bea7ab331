"""rocmprov verify: torch smoke tests on this machine or on every host of an inventory."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING

from rocmprov.commands._options import add_fleet_options, fleet_options
from rocmprov.exitcodes import UsageError

if TYPE_CHECKING:
    from rich.console import Console

HELP = "torch smoke tests on the host: devices, matmul, AMP step, one-rank DDP, ONNX export"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("inventory", nargs="?", help="Ansible inventory")
    parser.add_argument("--local", action="store_true", help="verify this machine")
    parser.add_argument("--python", default="", help="python of the target venv (python3)")
    parser.add_argument("--format", default="table", help="table or json")
    parser.add_argument(
        "--level",
        type=int,
        choices=(1, 2),
        default=1,
        help="1: torch smoke tests; 2: also RVS, TransferBench, rccl-tests where installed "
        "(bounded in time; an absent tool is reported with its package)",
    )
    parser.add_argument(
        "--container",
        metavar="IMAGE",
        help="run the smoke tests inside a container of IMAGE (CDI where an amd.com/gpu spec "
        "exists, else --device /dev/kfd --device /dev/dri); docs/containers.md",
    )
    parser.add_argument("--engine", choices=("auto", "docker", "podman"), default="auto")
    parser.add_argument("--method", choices=("auto", "cdi", "devices"), default="auto")
    add_fleet_options(parser, forks=16, become=False)


def run(args: argparse.Namespace) -> int:
    from rocmprov.actions.verify import SCHEMA

    if args.format not in ("table", "json"):
        raise UsageError(f"unknown format {args.format!r} (choose from table, json)")
    if bool(args.inventory) == bool(args.local):
        raise UsageError("give INVENTORY or --local")
    if args.container:
        from rocmprov.commands import verify_container

        return verify_container.run(args)
    reports = list(_reports(args))
    active = list(_active(args)) if args.level == 2 else []
    worst = max([r.severity for r in reports] + [a.severity for a in active], key=lambda s: s.rank)
    if args.format == "json":
        doc = {
            "schema": SCHEMA,
            "level": args.level,
            "exit_code": int(worst.exit_code),
            "hosts": [r.to_dict() for r in reports],
        }
        if args.level == 2:
            doc["active"] = [a.to_dict() for a in active]
        sys.stdout.write(json.dumps(doc, indent=2) + "\n")
    else:
        _table(reports)
        if active:
            _active_table(active)
    return int(worst.exit_code)


def _active(args: argparse.Namespace):
    """Level 2 on this machine (--local); over an inventory it runs on each host's transport."""
    from rocmprov.active.runner import run_active

    if args.local:
        from rocmprov.transport.local import LocalTransport

        yield run_active(LocalTransport())
        return
    from rocmprov.fleet.fanout import active_inventory

    yield from active_inventory(fleet_options(args))


def _console() -> Console:
    """The terminal for verify's tables: remote text is never markup; 140 columns in a pipe."""
    from rich.console import Console

    return Console(highlight=False, markup=False, width=None if sys.stdout.isatty() else 140)


def _active_table(reports) -> None:
    from rich.table import Table
    from rich.text import Text

    from rocmprov.report.safe import printable

    console = _console()
    for r in reports:
        head = f"{r.host}: level 2 ({r.product or 'product unknown'})"
        console.print(Text(printable(head), style="bold"))
        table = Table(show_edge=False)
        for col in ("tool", "status", "result", "expected"):
            table.add_column(col, overflow="fold")
        for a in r.results:
            style = {"ok": "green", "critical": "bold red", "warning": "yellow"}.get(
                a.severity.value, "dim"
            )
            table.add_row(
                Text(a.tool),
                Text(a.severity.value, style=style),
                Text(printable(a.summary)),
                Text(printable(a.expected)),
            )
        console.print(table)


def _reports(args: argparse.Namespace):
    from rocmprov.actions.verify import run_verify

    if args.local:
        from rocmprov.transport.local import LocalTransport

        yield run_verify(LocalTransport(), args.python or sys.executable)
        return
    from rocmprov.fleet.fanout import verify_inventory

    yield from verify_inventory(fleet_options(args))


def _table(reports) -> None:
    from rich.table import Table
    from rich.text import Text

    from rocmprov.report.safe import printable

    console = _console()
    for r in reports:
        head = f"{r.host}: torch {r.torch or '-'} ({r.backend or 'not importable'}), {r.python}"
        console.print(Text(printable(head), style="bold"))
        if r.error:
            console.print(Text(printable(f"  {r.error}"), style="red"))
        table = Table(show_edge=False)
        for col in ("test", "status", "seconds", "detail"):
            table.add_column(col, overflow="fold")
        for t in r.results:
            style = {"pass": "green", "fail": "bold red"}.get(t.status, "dim")
            detail = t.detail + (f"  [causes: {', '.join(t.causes)}]" if t.causes else "")
            table.add_row(
                Text(printable(t.test)),
                Text(t.status, style=style),
                f"{t.seconds:.3f}",
                Text(printable(detail)),
            )
        if r.results:
            console.print(table)
        if r.causes:
            console.print(Text(f"  known causes: {', '.join(r.causes)} (rocmprov explain)"))
    console.print(
        Text(f"overall: {max((r.severity for r in reports), key=lambda s: s.rank).value.upper()}")
    )
