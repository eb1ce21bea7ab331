"""rocmprov apply: run the packaged playbooks (ROCm repo, packages, driver, groups, firmware,
torch) on an inventory through ansible-runner, with live per-host progress, then audit.

Exit codes: 0 every host ok; 2 a host failed; 3 a host unreachable (and none failed) or the
run produced no result; 64 bad usage, including a bad -e (missing, not a regular file, over
1 MiB, not UTF-8 YAML, not a mapping): one line on stderr, nothing run, nothing changed;
130 interrupted (Ctrl-C).

Secrets: put them in a file (`-e @secrets.yml`); they reach ansible-playbook through a private
0600 file, never its command line. `-e name=value` is on rocmprov's own command line, which
other local users can read (`ps`): apply warns when a secret-named variable is given that way.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping
from typing import Any

from rocmprov.exitcodes import Exit, UsageError

HELP = "provision hosts: ROCm repo + packages, amdgpu-dkms, GPU groups, firmware report, torch"

FORMATS = ("table", "json")
STRATEGIES = ("mitogen", "linear")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("inventory", help="Ansible inventory (file, directory or 'h1,h2,')")
    parser.add_argument("--check", action="store_true", help="dry run: change nothing")
    parser.add_argument("--diff", action="store_true", help="show file differences")
    parser.add_argument("--limit", help="Ansible host pattern")
    parser.add_argument("--tags", help="only these role tags (e.g. rocmprov_repo,rocmprov_users)")
    parser.add_argument("--skip-tags", help="skip these tags (e.g. rocmprov_torch)")
    from rocmprov.commands._options import forks_arg  # --forks: one check for every command

    parser.add_argument("--forks", type=forks_arg, help="hosts worked on at once")
    parser.add_argument(
        "-e",
        "--extra-vars",
        action="append",
        default=[],
        metavar="K=V",
        help="variable: K=V, @file.yml or a JSON object (repeatable)",
    )
    parser.add_argument("--format", default="table", help=f"output: {', '.join(FORMATS)}")
    parser.add_argument("--no-audit", action="store_true", help="skip the audit after apply")
    parser.add_argument("--state-dir", help="where run records go ($XDG_STATE_HOME/rocmprov/runs)")
    parser.add_argument("-q", "--quiet", action="store_true", help="no live progress")
    parser.add_argument(
        "--strategy",
        choices=STRATEGIES,
        default="mitogen",
        help="mitogen: one Python per host for the whole run (default, when installed); "
        "linear: Ansible's own, a new Python per task",
    )


def run(args: argparse.Namespace) -> int:
    try:
        opts = _options(args)
    except UsageError as exc:
        return _fail(args, str(exc), Exit.USAGE)

    from rocmprov.provision.fallback import apply as run_apply
    from rocmprov.provision.progress import progress_for, render_summary

    progress = progress_for(sys.stderr, quiet=args.quiet)
    try:
        if progress is None:
            result = run_apply(opts)
        else:
            with progress:
                result = run_apply(opts, on_event=progress)
    except UsageError as exc:
        return _fail(args, str(exc), Exit.USAGE)

    audit: dict[str, Any] | None = None
    if not opts.check and not args.no_audit and result.status == "successful" and result.hosts:
        audit = post_apply_audit(
            opts.inventory, opts.limit, json_output=args.format == "json", extravars=opts.extravars
        )

    if args.format == "json":
        doc = result.to_dict()
        doc["audit"] = audit
        sys.stdout.write(json.dumps(doc, indent=2) + "\n")
    else:
        render_summary(result, sys.stdout)
        if audit and audit.get("status") == "skipped":
            print(f"audit skipped: {audit.get('reason')}", file=sys.stderr)
    sys.stdout.flush()
    return int(result.exit_code)


def _options(args: argparse.Namespace) -> Any:
    from pathlib import Path

    from rocmprov.provision.extravars import inline_secret_names
    from rocmprov.provision.runner import ApplyOptions, parse_extravars

    if args.format not in FORMATS:
        raise UsageError(f"unknown format {args.format!r} (choose from {', '.join(FORMATS)})")
    if args.forks is not None:  # set through the API as well as argparse: the same check
        from rocmprov.commands._options import check_forks

        check_forks(args.forks)
    extravars = parse_extravars(args.extra_vars)
    inline = inline_secret_names(args.extra_vars)
    if inline:
        print(
            f"rocmprov: warning: {', '.join(inline)} given on the command line, where other "
            "local users can read it (ps); put secrets in a file: -e @secrets.yml",
            file=sys.stderr,
        )
    inv = args.inventory
    if "," not in inv and not Path(inv).expanduser().exists():
        raise UsageError(f"no such inventory: {inv}")
    # Ansible resolves the inventory and --limit: a bad one is a usage error, before any change.
    from rocmprov.inventory.hosts import load_inventory

    load_inventory(inv, limit=args.limit)
    return ApplyOptions(
        inventory=inv,
        check=args.check,
        diff=args.diff,
        limit=args.limit,
        tags=args.tags,
        skip_tags=args.skip_tags,
        forks=args.forks,
        extravars=extravars,
        state_dir=args.state_dir,
        fast=args.strategy == "mitogen",
    )


def post_apply_audit(
    inventory: str,
    limit: str | None,
    *,
    json_output: bool = False,
    extravars: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The one call site of the audit after a real apply, on the same hosts.

    Imports rocmprov.commands.audit lazily; anything failing is skipped with the reason,
    never a failure of apply.
    """
    try:
        from rocmprov.commands import audit as audit_cmd
    except ImportError as exc:
        return {"status": "skipped", "reason": f"rocmprov.commands.audit unavailable ({exc})"}
    try:
        result = audit_cmd.audit_after_apply(inventory, limit, extravars)
        code = int(getattr(result, "exit_code", Exit.UNKNOWN))
        out: dict[str, Any] = {"status": "ran", "exit_code": code}
        if json_output:
            from rocmprov.report import json_report

            out["document"] = json.loads(json_report.render(result))
        else:
            from rocmprov.report import table

            print("\npost-apply audit:", file=sys.stdout)
            table.render(result, sys.stdout, verbose=False)
        return out
    except (Exception, SystemExit) as exc:  # the audit must never turn a good apply into an error
        return {"status": "skipped", "reason": f"audit failed to run: {exc}"}


def _fail(args: argparse.Namespace, message: str, code: int) -> int:
    print(f"rocmprov: {message}", file=sys.stderr)
    if getattr(args, "format", "") == "json":
        doc = {
            "schema": "rocmprov.apply/1",
            "status": "error",
            "exit_code": int(code),
            "message": message,
            "hosts": [],
        }
        sys.stdout.write(json.dumps(doc) + "\n")
    return code
