"""rocmprov heal: nodes the Slurm gate drained -> fix what software can fix -> verify -> resume;
ask a human (reason, hook, metric) for the rest. Run on a controller (an admin host with the
inventory, SSH to the nodes and scontrol, here or on --slurm-host), e.g. every few minutes.

Exit: 0 every node it took in hand is back in service (or nothing to do); 1 a node waits (a cap,
a fix that did not hold yet, an unreachable node); 2 a node was handed to a human; 3 it could
not run (scontrol, state directory, another heal running); 64 bad usage.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from rocmprov.commands._options import add_fleet_options, fleet_options
from rocmprov.exitcodes import Exit, UsageError

HELP = "heal drained Slurm nodes: run the fix, verify, resume; hardware goes to a human"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("inventory", help="Ansible inventory of the GPU nodes")
    add_fleet_options(parser, forks=16)
    parser.add_argument(
        "--slurm-host",
        default="",
        help="inventory host where scontrol runs, over SSH (default: here)",
    )
    parser.add_argument("--scontrol", default="scontrol", help="scontrol to run (scontrol)")
    parser.add_argument(
        "--drain",
        action="append",
        default=[],
        metavar="PATTERN",
        help="the gate's drain patterns (as rocmprov health --drain)",
    )
    parser.add_argument(
        "--no-drain",
        action="append",
        default=[],
        metavar="PATTERN",
        help="the gate's no-drain patterns (as rocmprov health --no-drain)",
    )
    parser.add_argument(
        "--max-attempts",
        type=int,
        default=3,
        help="fix attempts per node per window, then a human (3)",
    )
    parser.add_argument(
        "--window", type=float, default=86400.0, help="the policy window in seconds (86400)"
    )
    parser.add_argument(
        "--allow-reboot",
        action="store_true",
        help="reboot a node whose fix needs it (otherwise: a human)",
    )
    parser.add_argument(
        "--max-reboots", type=int, default=2, help="reboots per window, all nodes together (2)"
    )
    parser.add_argument(
        "--per-partition", type=int, default=1, help="nodes of one partition in hand at once (1)"
    )
    parser.add_argument(
        "--allow-slurmctld-restart",
        action="store_true",
        help="per-GPU isolation: change a node's GPU count, which restarts slurmctld "
        "(cluster-wide); otherwise a node with one bad GPU goes to a human",
    )
    parser.add_argument(
        "--hook",
        default="",
        help="program run on each escalation (absolute path; event JSON on stdin)",
    )
    parser.add_argument(
        "--hook-arg",
        action="append",
        default=[],
        metavar="ARG",
        help="an argument for the hook (repeat); never a secret",
    )
    parser.add_argument("--hook-timeout", type=float, default=30.0, help="seconds (30)")
    parser.add_argument(
        "--metrics-dir", type=Path, help="node_exporter textfile directory for rocmprov_heal.prom"
    )
    parser.add_argument(
        "--state-dir", type=Path, help="journal and lock (default: <rocmprov state>/heal, 0700)"
    )
    parser.add_argument("--dry-run", action="store_true", help="plan and print, change nothing")
    parser.add_argument("--format", default="table", help="table or json (a document on stdout)")
    parser.add_argument(
        "-e",
        "--extra-vars",
        action="append",
        default=[],
        metavar="K=V",
        help="extra variables for the audit and the playbooks (repeatable)",
    )


def _options(args: argparse.Namespace) -> tuple[Any, Any, list[str], dict]:
    from rocmprov.gate.heal import HealPolicy
    from rocmprov.gate.policy import DrainPolicy
    from rocmprov.provision.runner import parse_extravars

    if args.format not in ("table", "json"):
        raise UsageError(f"unknown format {args.format!r} (choose from table, json)")
    try:
        policy = HealPolicy(
            args.max_attempts,
            args.window,
            args.allow_reboot,
            args.max_reboots,
            args.per_partition,
            args.allow_slurmctld_restart,
        )
        drain = DrainPolicy.from_patterns(args.drain, args.no_drain)
        cli_vars = parse_extravars(args.extra_vars)
    except ValueError as exc:
        raise UsageError(str(exc)) from exc
    hook: list[str] = []
    if args.hook:
        path = Path(args.hook)
        if not path.is_absolute() or not path.is_file():
            raise UsageError(f"--hook must be an absolute path to a program: {args.hook!r}")
        hook = [args.hook, *args.hook_arg]
    elif args.hook_arg:
        raise UsageError("--hook-arg without --hook")
    if not 1 <= args.hook_timeout <= 600:
        raise UsageError("--hook-timeout must be between 1 and 600 seconds")
    return policy, drain, hook, cli_vars


def run(args: argparse.Namespace) -> int:
    from rocmprov.collect.cursor import state_dir
    from rocmprov.commands._heal_run import Healer
    from rocmprov.gate.heal_io import HealStateError, StateDir
    from rocmprov.gate.slurm import SlurmError
    from rocmprov.transport.base import HostUnreachable

    policy, drain, hook, cli_vars = _options(args)
    try:
        state = StateDir(args.state_dir or state_dir() / "heal")
        with state.locked():
            healer = Healer(args, policy, drain, hook, cli_vars, state, fleet_options(args))
            results = healer.run()
    except (HealStateError, SlurmError, HostUnreachable) as exc:
        print(f"rocmprov heal: {exc}", file=sys.stderr)
        return Exit.UNKNOWN
    code = _exit(results)
    if args.format == "json":
        doc = {
            "schema": "rocmprov.heal/1",
            "exit_code": int(code),
            "dry_run": bool(args.dry_run),
            "nodes": results,
        }
        sys.stdout.write(json.dumps(doc, indent=2) + "\n")
    return code


def _exit(results: list[dict[str, Any]]) -> Exit:
    outcomes = {r["outcome"] for r in results}
    if "escalated" in outcomes:
        return Exit.CRITICAL
    if outcomes & {"deferred", "waiting", "failed", "unknown"}:
        return Exit.WARNING
    return Exit.OK
