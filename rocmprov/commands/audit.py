"""rocmprov audit: pre-flight audit of this machine, a bundle, or an inventory of hosts."""

from __future__ import annotations

import argparse
import re
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rocmprov.commands._options import add_fleet_options, fleet_options, gpu_user_arg
from rocmprov.exitcodes import Exit, UsageError
from rocmprov.report import FORMATS

if TYPE_CHECKING:
    from rocmprov.fleet.drift import Baseline
    from rocmprov.model import AuditResult

MANIFEST = "manifest.json"
MAX_BUNDLES = 10000
MAX_BASELINE_BYTES = 1 << 20

HELP = "pre-flight audit of this machine, a support bundle, or every host of an inventory"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("inventory", nargs="?", help="Ansible inventory (default: this machine)")
    parser.add_argument("--local", action="store_true", help="audit this machine (the default)")
    parser.add_argument(
        "--bundle",
        type=Path,
        action="append",
        help="analyse a support bundle (dir or .tar.gz); repeat it, or name a directory of "
        "bundles (what `rocmprov collect -o DIR` wrote), to audit many as a fleet",
    )
    parser.add_argument("--format", default="table", help=f"output: {', '.join(FORMATS)}")
    parser.add_argument(
        "--baseline",
        metavar="HOST|FILE",
        help="fleet drift against a golden host of this audit, or a saved baseline file "
        "(default: the majority value of each field across the fleet)",
    )
    parser.add_argument(
        "--save-baseline",
        type=Path,
        metavar="FILE",
        help="write the drift reference (the --baseline, else the fleet majority) to FILE (0600)",
    )
    parser.add_argument(
        "--all-hosts",
        action="store_true",
        help="table: every host's findings, also in a fleet of more than 5 hosts",
    )
    parser.add_argument(
        "--profile",
        default="full",
        help="full (default) or quick: a fast node check without torch, rocminfo, rocm-smi "
        "and amd-smi, reading the kernel log only since its last run (--local only)",
    )
    parser.add_argument(
        "--state",
        default="audit",
        help="the quick profile's own kernel-log state (cursor and GPU lines kept for the "
        "boot): one name per consumer, e.g. metrics (audit)",
    )
    parser.add_argument(
        "--output",
        type=Path,
        help="write the report to FILE (replaced atomically: temp file + rename) instead of stdout",
    )
    add_fleet_options(parser, forks=64)
    parser.add_argument(
        "--gpu-user",
        default="",
        help="users who run GPU work, comma-separated (default: rocmprov_gpu_users, else login)",
    )
    parser.add_argument("--python", default="", help="python whose torch is checked (python3)")
    parser.add_argument("--rocm-version", default="", help="ROCm release the site targets")
    parser.add_argument("-v", "--verbose", action="store_true", help="show passed checks too")


def run(args: argparse.Namespace) -> int:
    """Audit and render. Every way out of a JSON run prints one document: usage errors (64),
    unanalysable input (3), and Ctrl-C (130, with "interrupted" as the error)."""
    if args.format not in FORMATS:
        return _fail(
            args, f"unknown format {args.format!r} (choose from {', '.join(FORMATS)})", Exit.USAGE
        )
    if args.profile not in ("full", "quick"):
        return _fail(
            args, f"unknown profile {args.profile!r} (choose from full, quick)", Exit.USAGE
        )
    if not re.fullmatch(r"[a-z][a-z0-9-]{0,31}", args.state):
        return _fail(args, "--state: a name of lower-case letters, digits and -", Exit.USAGE)
    if args.profile == "quick" and (args.inventory or args.bundle):
        return _fail(args, "--profile quick audits this machine only (--local)", Exit.USAGE)
    try:
        if args.output is not None:
            from rocmprov.report.output import check_target

            check_target(args.output)
        baseline_file = _check_drift_args(args)
        result = _audit(args)
        result = _drift(result, args, baseline_file)
    except KeyboardInterrupt:
        return _fail(args, "interrupted", Exit.INTERRUPTED)
    except UsageError as exc:
        return _fail(args, str(exc), Exit.USAGE)
    except Exception as exc:  # InputError and anything unforeseen: one line, UNKNOWN
        code = getattr(exc, "exit_code", Exit.UNKNOWN)
        return _fail(args, str(exc) or type(exc).__name__, code)
    try:
        _render(result, args)
    except OSError as exc:  # the audit ran but its report could not be written: not OK
        return _fail(args, f"--output {args.output}: {exc.strerror or exc}", Exit.UNKNOWN)
    return int(result.exit_code)


def _audit(args: argparse.Namespace):
    from rocmprov.audit.host import audit_bundle, audit_local
    from rocmprov.checks.policy import Policy
    from rocmprov.collect.bundle import read_bundle
    from rocmprov.inventory.hosts import torch_python
    from rocmprov.model import AuditResult

    hostvars = {"rocmprov_rocm_version": args.rocm_version} if args.rocm_version else {}
    chosen = sum(bool(x) for x in (args.inventory, args.local, args.bundle))
    if chosen > 1:
        raise UsageError("give one of INVENTORY, --local or --bundle")
    if args.bundle:
        reports = []
        seen: set[str] = set()
        for path in _bundle_paths(args.bundle):
            start = time.monotonic()
            bundle = read_bundle(path)
            report = audit_bundle(
                bundle, Policy.from_vars(hostvars), duration=time.monotonic() - start
            )
            if report.host in seen:  # two bundles of one host: keep both, told apart
                from dataclasses import replace

                report = replace(report, host=f"{report.host} ({path.name})")
            seen.add(report.host)
            reports.append(report)
        return AuditResult(tuple(reports))
    if args.inventory:
        from rocmprov.fleet.fanout import audit_inventory

        return audit_inventory(fleet_options(args), hostvars)
    python, fallback = (args.python, "") if args.python else torch_python(hostvars)
    report, _ = audit_local(
        become=args.become,
        gpu_users=gpu_user_arg(args.gpu_user),
        python=python,
        python_fallback=fallback,
        hostvars=hostvars,
        profile=args.profile,
        consumer=args.state,
    )
    return AuditResult((report,))


def _bundle_paths(given: list[Path]) -> list[Path]:
    """Each --bundle: a bundle (directory with manifest.json, or a .tar.gz), or a directory of
    bundles (not searched deeper). A .tar.gz beside a directory of the same bundle is skipped."""
    paths: list[Path] = []
    for path in given:
        if not path.is_dir() or (path / MANIFEST).is_file():
            paths.append(path)
            continue
        children = sorted(c for c in path.iterdir() if not c.name.startswith("."))
        dirs = [c for c in children if c.is_dir() and (c / MANIFEST).is_file()]
        names = {c.name for c in dirs}
        tars = [
            c
            for c in children
            if c.name.endswith(".tar.gz") and c.is_file() and c.name[: -len(".tar.gz")] not in names
        ]
        paths.extend(sorted(dirs + tars) or [path])
    if len(paths) > MAX_BUNDLES:
        raise UsageError(f"--bundle: {len(paths)} bundles; at most {MAX_BUNDLES} at once")
    return paths


def _check_drift_args(args: argparse.Namespace) -> Baseline | None:
    """Before any host is reached: --save-baseline's directory, and a --baseline that names a
    file (read now: a bad file is one line and exit 64). A --baseline that is no file is taken
    as a host name and checked once the audit is done."""
    from rocmprov.fleet.drift import BaselineError, load_baseline

    if args.save_baseline is not None:
        from rocmprov.report.output import check_target

        check_target(args.save_baseline, "--save-baseline")
    if not args.baseline:
        return None
    path = Path(args.baseline)
    if not path.is_file():
        if path.exists() or "/" in args.baseline or args.baseline.endswith(".json"):
            raise UsageError(f"--baseline {args.baseline}: no such file")
        return None
    try:
        with path.open(encoding="utf-8") as f:
            text = f.read(MAX_BASELINE_BYTES + 1)
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"--baseline {args.baseline}: cannot read ({exc})") from None
    if len(text) > MAX_BASELINE_BYTES:
        raise UsageError(f"--baseline {args.baseline}: larger than {MAX_BASELINE_BYTES} bytes")
    try:
        return load_baseline(text, args.baseline)
    except BaselineError as exc:
        raise UsageError(str(exc)) from None


def _drift(result: AuditResult, args: argparse.Namespace, baseline: Baseline | None):
    """Add the drift findings; write --save-baseline (0600, replaced atomically)."""
    from rocmprov.fleet.drift import (
        Baseline,
        dump_baseline,
        flatten,
        host_baseline,
        majority,
        with_drift,
    )

    if args.baseline and baseline is None:
        baseline = host_baseline(result, args.baseline)
        if baseline is None:
            raise UsageError(f"--baseline {args.baseline}: neither a file nor a host of this audit")
        if not baseline.fields:
            raise UsageError(f"--baseline {args.baseline}: that host was not audited")
    result = with_drift(result, baseline)
    if args.save_baseline is not None:
        from rocmprov.report.output import write_atomic

        if baseline is None:  # the majority; a field with none is saved as unsettled
            reference, split = majority(
                {h.host: flatten(h.inventory) for h in result.hosts if h.inventory}
            )
            reference = Baseline(
                reference.source, reference.fields, {k: dict(c) for k, c in split.items()}
            )
        else:
            reference = baseline
        write_atomic(args.save_baseline, dump_baseline(reference), mode=0o600)
    return result


def audit_after_apply(
    inventory: str, limit: str | None, extravars: Mapping[str, Any] | None = None
) -> AuditResult:
    """The audit `rocmprov apply` runs on the same hosts after a real apply, judging them by
    the same rocmprov_* variables apply was given with -e (release, source, package lists)."""
    from rocmprov.fleet.fanout import audit_inventory
    from rocmprov.fleet.options import FleetOptions

    same = {k: v for k, v in (extravars or {}).items() if str(k).startswith("rocmprov_")}
    return audit_inventory(FleetOptions(inventory, limit=limit or None, forks=64), same)


def _render(result, args: argparse.Namespace) -> None:
    if getattr(args, "output", None) is None:
        _write(result, args, sys.stdout)
        return
    if args.format == "prometheus":  # node_exporter's textfile: prometheus_client writes it
        from rocmprov.report import prometheus

        prometheus.write_textfile(args.output, result, timestamp=time.time())
        return
    import io

    from rocmprov.report.output import write_atomic

    buf = io.StringIO()
    _write(result, args, buf)
    write_atomic(args.output, buf.getvalue())


def _write(result, args: argparse.Namespace, out) -> None:
    if args.format == "json":
        from rocmprov.report import json_report

        out.write(json_report.render(result))
    elif args.format == "junit":
        from rocmprov.report import junit

        out.write(junit.render(result))
    elif args.format == "prometheus":
        from rocmprov.report import prometheus

        out.write(prometheus.render(result, timestamp=time.time()))
    elif args.format == "html":
        from rocmprov.report import html

        out.write(html.render(result, generated=time.strftime("%Y-%m-%d %H:%M:%S %Z")))
    else:
        from rocmprov.report import table

        table.render(result, out, verbose=args.verbose, all_hosts=getattr(args, "all_hosts", False))
    out.flush()


def _fail(args: argparse.Namespace, message: str, code: int) -> int:
    import json

    from rocmprov.report.json_report import error_document

    print(f"rocmprov: {message}", file=sys.stderr)
    if getattr(args, "format", "") == "json":
        sys.stdout.write(json.dumps(error_document(message, Exit(code))) + "\n")
    return code
