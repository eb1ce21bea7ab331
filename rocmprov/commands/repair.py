"""rocmprov repair: audit, apply only what fixes the software findings, audit again."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING

from rocmprov.commands._options import add_fleet_options, fleet_options
from rocmprov.exitcodes import Exit, UsageError

if TYPE_CHECKING:
    from rocmprov.actions.repair import Outcome, Plan
    from rocmprov.model import AuditResult
    from rocmprov.provision.runner import ApplyResult

HELP = "audit, apply only the remedies of software findings, audit again; BIOS items to a human"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("inventory", help="Ansible inventory")
    parser.add_argument("--check", action="store_true", help="show the plan and stop")
    parser.add_argument("--format", default="table", help="table or json")
    add_fleet_options(parser, forks=64)
    parser.add_argument(
        "-e",
        "--extra-vars",
        action="append",
        default=[],
        metavar="K=V",
        help="extra variables for the playbooks (repeatable)",
    )
    parser.add_argument("--state-dir", help="where apply keeps its run records")


def run(args: argparse.Namespace) -> int:
    from rocmprov.actions.repair import outcomes, plan
    from rocmprov.fleet.fanout import audit_inventory

    if args.format not in ("table", "json"):
        raise UsageError(f"unknown format {args.format!r} (choose from table, json)")
    cli_vars = _extra(args)
    fleet = fleet_options(args)
    before = audit_inventory(fleet, cli_vars)
    p = plan(before)
    after = None
    applied = None
    if p.hosts and not args.check:
        applied = _apply(args, p, cli_vars)
        after = audit_inventory(fleet, cli_vars)
    result = outcomes(before, after, p)
    code = _exit(before, result, args.check)
    if args.format == "json":
        sys.stdout.write(json.dumps(_document(p, result, applied, code), indent=2) + "\n")
    else:
        _table(p, result, applied, args.check)
    return code


def _extra(args: argparse.Namespace) -> dict:
    from rocmprov.provision.runner import parse_extravars

    try:
        return parse_extravars(args.extra_vars)
    except ValueError as exc:
        raise UsageError(str(exc)) from exc


def _apply(args: argparse.Namespace, p: Plan, cli_vars: dict) -> ApplyResult:
    """One apply per group of hosts with the same plan: each host gets only its own tags, and
    keeps the ROCm release it runs (rocmprov_repair_installed_rocm, used by the release role
    only where neither the inventory nor -e names rocmprov_rocm_version)."""
    import dataclasses

    from rocmprov.provision.fallback import apply as run_apply
    from rocmprov.provision.progress import progress_for
    from rocmprov.provision.runner import ApplyOptions

    results: list[ApplyResult] = []
    for hosts, tags, installed in p.runs():
        extravars = dict(cli_vars)
        if installed:
            extravars.setdefault("rocmprov_repair_installed_rocm", installed)
        opts = ApplyOptions(
            inventory=str(args.inventory),
            limit=",".join(hosts),
            tags=",".join(tags),
            forks=args.forks,
            extravars=extravars,
            state_dir=args.state_dir,
        )
        print(
            f"rocmprov: repairing {', '.join(hosts)} with --tags {','.join(tags)}"
            + (f" (keeping ROCm {installed})" if installed else ""),
            file=sys.stderr,
        )
        progress = progress_for(sys.stderr, quiet=args.format == "json")
        if progress is None:
            result = run_apply(opts)
        else:
            with progress:
                result = run_apply(opts, on_event=progress)
        if result.status == "canceled":
            raise KeyboardInterrupt
        results.append(result)
    first = results[0]
    bad = next((r for r in results if r.status != "successful"), first)
    return dataclasses.replace(
        first,
        status=bad.status,
        ansible_rc=bad.ansible_rc,
        hosts=tuple(h for r in results for h in r.hosts),
        run_dir=", ".join(r.run_dir for r in results),
        duration=sum(r.duration for r in results),
        command="; ".join(r.command for r in results),
        message="; ".join(r.message for r in results if r.message),
    )


def _exit(before: AuditResult, result: tuple[Outcome, ...], check: bool) -> int:
    if check:
        return int(before.exit_code)
    states = {o.state for o in result}
    if any(h.failure for h in before.hosts):
        return Exit.UNKNOWN
    if "still broken" in states:
        return Exit.CRITICAL
    if "needs a human" in states:
        return Exit.WARNING
    return Exit.OK


def _document(p: Plan, result: tuple[Outcome, ...], applied: ApplyResult | None, code: int) -> dict:
    from rocmprov.actions.repair import SCHEMA

    return {
        "schema": SCHEMA,
        "exit_code": code,
        "plan": {"hosts": list(p.hosts), "tags": {h: list(t) for h, t in p.tags.items() if t}},
        "apply": applied.to_dict() if applied is not None else None,
        "outcomes": [o.__dict__ for o in result],
        "checklist": [
            {
                "host": s.host,
                "check": s.finding.check,
                "subject": s.finding.subject,
                "title": s.title,
                "steps": list(s.steps),
                "bios": list(s.bios),
                "prove": list(s.prove),
                "sources": list(s.sources),
            }
            for s in p.human
        ],
    }


def _table(p: Plan, result: tuple[Outcome, ...], applied: ApplyResult | None, check: bool) -> None:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    from rocmprov.report.safe import printable

    console = Console(highlight=False, width=None if sys.stdout.isatty() else 160)
    if p.hosts:
        console.print(Text("Plan:", style="bold"))
        for host in p.hosts:
            tags = ",".join(p.tags[host])
            console.print(Text(printable(f"  {host}: rocmprov apply --tags {tags}")))
    else:
        console.print(Text("Plan: nothing software can fix"))
    if check:
        console.print(Text("--check: nothing applied", style="dim"))
    if applied is not None:
        console.print(Text(f"apply: {applied.status} ({applied.run_dir})"))
    table = Table(show_edge=False)
    for col in ("host", "check", "subject", "outcome", "before", "after"):
        table.add_column(col, overflow="fold")
    style = {"fixed": "green", "still broken": "bold red", "needs a human": "yellow"}
    for o in result:
        table.add_row(
            Text(printable(o.host, one_line=True)),
            o.check,
            Text(printable(o.subject)),
            Text(o.state, style=style.get(o.state, "")),
            Text(printable(o.before)),
            Text(printable(o.after)),
        )
    if result:
        console.print(table)
    for step in p.human:
        console.print(
            Text(
                printable(
                    f"\n{step.host}: {step.title} ({step.finding.check} {step.finding.subject})"
                ),
                style="bold yellow",
            )
        )
        for s in step.steps:
            console.print(Text(printable(f"  - {s}")))
        for b in step.bios:
            console.print(
                Text(
                    printable(f"  BIOS [{b.get('vendor', '')}]: {b.get('menu', '')} = ")
                    + printable(str(b.get("value", "")))
                )
            )
        for cmd in step.prove:
            console.print(Text(printable(f"  prove: {cmd}")))
