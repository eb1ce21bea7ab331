"""rocmprov audit: pre-flight audit of this machine, a bundle, or an inventory of hosts."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rocmprov.commands._options import add_fleet_options
from rocmprov.exitcodes import Exit, UsageError
from rocmprov.report import FORMATS

if TYPE_CHECKING:
    from rocmprov.model import AuditResult

HELP = "pre-flight audit of this machine, a support bundle, or every host of an inventory"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("inventory", nargs="?", help="Ansible inventory (default: this machine)")
    parser.add_argument("--local", action="store_true", help="audit this machine (the default)")
    parser.add_argument("--bundle", type=Path, help="analyse a support bundle (dir or .tar.gz)")
    parser.add_argument("--format", default="table", help=f"output: {', '.join(FORMATS)}")
    parser.add_argument(
        "--profile",
        default="full",
        help="full (default) or quick: a fast node check without torch, rocminfo, rocm-smi "
        "and amd-smi, reading the kernel log only since its last run (--local only)",
    )
    parser.add_argument(
        "--output",
        type=Path,
        help="write the report to FILE (replaced atomically: temp file + rename) instead of stdout",
    )
    add_fleet_options(parser, forks=64)
    parser.add_argument("--gpu-user", default="", help="user who runs GPU work (default: login)")
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
    if args.profile == "quick" and (args.inventory or args.bundle):
        return _fail(args, "--profile quick audits this machine only (--local)", Exit.USAGE)
    try:
        if args.output is not None:
            from rocmprov.report.output import check_target

            check_target(args.output)
        result = _audit(args)
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
    from rocmprov.audit import audit_bundle, audit_local
    from rocmprov.checks.policy import Policy
    from rocmprov.collect.bundle import read_bundle
    from rocmprov.model import AuditResult

    hostvars = {"rocmprov_rocm_version": args.rocm_version} if args.rocm_version else {}
    chosen = sum(bool(x) for x in (args.inventory, args.local, args.bundle))
    if chosen > 1:
        raise UsageError("give one of INVENTORY, --local or --bundle")
    if args.bundle:
        start = time.monotonic()
        bundle = read_bundle(args.bundle)
        return AuditResult(
            (audit_bundle(bundle, Policy.from_vars(hostvars), duration=time.monotonic() - start),)
        )
    if args.inventory:
        from rocmprov.fleet_audit import audit_inventory

        return audit_inventory(args, hostvars)
    report, _ = audit_local(
        become=args.become,
        gpu_user=args.gpu_user,
        python=args.python or "python3",
        hostvars=hostvars,
        profile=args.profile,
    )
    return AuditResult((report,))


def audit_after_apply(
    inventory: str, limit: str | None, extravars: Mapping[str, Any] | None = None
) -> AuditResult:
    """The audit `rocmprov apply` runs on the same hosts after a real apply, judging them by
    the same rocmprov_* variables apply was given with -e (release, source, package lists)."""
    from rocmprov.fleet_audit import audit_inventory

    parser = argparse.ArgumentParser(add_help=False)
    add_arguments(parser)
    args = parser.parse_args([inventory, *(["--limit", limit] if limit else [])])
    same = {k: v for k, v in (extravars or {}).items() if str(k).startswith("rocmprov_")}
    return audit_inventory(args, same)


def _render(result, args: argparse.Namespace) -> None:
    if getattr(args, "output", None) is None:
        _write(result, args, sys.stdout)
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
    else:
        from rocmprov.report import table

        table.render(result, out, verbose=args.verbose)
    out.flush()


def _fail(args: argparse.Namespace, message: str, code: int) -> int:
    import json

    from rocmprov.report.json_report import error_document

    print(f"rocmprov: {message}", file=sys.stderr)
    if getattr(args, "format", "") == "json":
        sys.stdout.write(json.dumps(error_document(message, Exit(code))) + "\n")
    return code
