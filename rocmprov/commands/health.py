"""rocmprov health --slurm: a Slurm HealthCheckProgram. Audits this node (quick profile, probes
in parallel under one deadline), then drains it on a CRITICAL finding that the drain policy
selects (reason `rocmprov: <check> <actual><expected>`), resumes it once that is gone if rocmprov
drained it, and never touches a node someone else drained or set DOWN/FAIL/MAINT. Kernel GPU
lines stay findings for the boot; `--clear-kernel-findings` forgets them. One log line per run.

Exit: 0 whenever it ran (whatever it decided); 3 when it could not (scontrol failed, the audit
could not be read); 64 on bad usage.
"""

from __future__ import annotations

import argparse
import os
import re
import socket
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

from rocmprov.exitcodes import Exit, UsageError

HELP = "node health gate: drain/resume this node in Slurm from a local audit (HealthCheckProgram)"
BUNDLE_DIR = Path("/var/lib/rocmprov/health-bundles")
KEEP_BUNDLES = 10
# slurmd kills its HealthCheckProgram after 60 s (HealthCheckTimeout, 60 by default): the
# probes get DEADLINE_S in all, leaving time for scontrol and the evidence bundle
DEADLINE_S = 30.0
ISOLATED = Path("/etc/rocmprov/isolated-gpus")  # written by rocmprov heal (per-GPU isolation)
STATE = "health"  # this gate's own kernel-log state (collect/cursor.py)
_NODE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
_STAMP = re.compile(r"\d{8}T\d{6}Z(-\d+)?")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--slurm", action="store_true", help="gate the node in Slurm (required)")
    parser.add_argument(
        "--node",
        default="",
        help="Slurm node name (default: $SLURMD_NODENAME, else the short host name)",
    )
    parser.add_argument(
        "--bundle",
        type=Path,
        help="judge this support bundle instead of a live audit (testing, forensics)",
    )
    parser.add_argument(
        "--result",
        type=Path,
        help="judge this `rocmprov audit --format json` document instead (testing, forensics)",
    )
    parser.add_argument(
        "--bundle-dir",
        type=Path,
        default=BUNDLE_DIR,
        help=f"where a drain writes its evidence bundle, 0700 ({BUNDLE_DIR})",
    )
    parser.add_argument("--scontrol", default="scontrol", help="scontrol to run (scontrol)")
    parser.add_argument("--timeout", type=float, default=10.0, help="seconds per scontrol (10)")
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="decide and log, change nothing (not Slurm, not the kernel-log state)",
    )
    parser.add_argument("--log", type=Path, help="also append the log line to this file")
    parser.add_argument(
        "--deadline",
        type=float,
        default=DEADLINE_S,
        help=f"seconds for all probes together, run in parallel ({DEADLINE_S:g})",
    )
    parser.add_argument(
        "--drain",
        action="append",
        default=[],
        metavar="PATTERN",
        help="check ids whose CRITICAL drains (repeat; replaces the default "
        "gpu.* pcie.* driver.* dmesg.*; repo.* never drains)",
    )
    parser.add_argument(
        "--no-drain",
        action="append",
        default=[],
        metavar="PATTERN",
        help="check ids that never drain (repeat), e.g. gpu.temperature",
    )
    parser.add_argument(
        "--isolated-gpus",
        type=Path,
        default=ISOLATED,
        help=f"GPUs rocmprov heal took out of Slurm's gres never drain ({ISOLATED})",
    )
    parser.add_argument(
        "--clear-kernel-findings",
        action="store_true",
        help="forget the kernel GPU lines kept for this boot (every consumer: gate, metrics, "
        "collection) after the admin dealt with them; the next run reads only newer lines",
    )


def _node_name(args: argparse.Namespace) -> str:
    name = args.node or os.environ.get("SLURMD_NODENAME", "") or socket.gethostname().split(".")[0]
    if not _NODE.fullmatch(name):
        raise UsageError(f"not a Slurm node name: {name!r}")
    return name


def run(args: argparse.Namespace) -> int:
    from rocmprov.gate import slurm
    from rocmprov.gate.policy import DrainPolicy

    if args.clear_kernel_findings:
        return _clear_kernel_findings(args)
    if not args.slurm:
        raise UsageError("give --slurm (the only gate so far)")
    if not 0 < args.timeout <= 300:
        raise UsageError("--timeout must be between 0 and 300 seconds")
    if not 1 <= args.deadline <= 300:
        raise UsageError("--deadline must be between 1 and 300 seconds")
    if args.bundle and args.result:
        raise UsageError("give --bundle or --result, not both")
    try:
        policy = DrainPolicy.from_patterns(args.drain, args.no_drain)
    except ValueError as exc:
        raise UsageError(str(exc)) from exc
    name = _node_name(args)
    start = time.monotonic()
    report, bundle, audit_error = _audit(args)
    if report is not None:
        report = _without_isolated(report, args.isolated_gpus)
    try:
        node = slurm.show_node(name, scontrol=args.scontrol, timeout=args.timeout)
    except slurm.SlurmError as exc:
        if not args.dry_run:
            _log(args, f"node={name} error: {exc}")
            return Exit.UNKNOWN
        # a dry run changes nothing, so it needs no scontrol: say what the audit would mean
        # for a node in service (IDLE), and why the state is assumed
        _log(args, f"node={name} {exc}: dry run judged as for an IDLE node")
        node = slurm.NodeState(name, "IDLE")
    decision = slurm.decide(report, node, policy)
    severity = report.severity.value.upper() if report else "UNKNOWN"
    extra = f" audit_error={slurm.clean(audit_error, 160)}" if audit_error else ""
    if decision.action is slurm.Action.DRAIN and bundle is not None and not args.dry_run:
        extra += " " + _save_bundle(bundle, args.bundle_dir)
    if not args.dry_run:
        try:
            slurm.apply_decision(name, decision, scontrol=args.scontrol, timeout=args.timeout)
        except slurm.SlurmError as exc:
            _log(
                args,
                f"node={name} audit={severity} action={decision.action.value} error: {exc}{extra}",
            )
            return Exit.UNKNOWN
    dry = " (dry run)" if args.dry_run else ""
    _log(
        args,
        f"node={name} state={node.state} audit={severity} "
        f"action={decision.action.value}{dry} {decision.why}{extra} "
        f"({time.monotonic() - start:.1f}s)",
    )
    return Exit.OK


def _clear_kernel_findings(args: argparse.Namespace) -> int:
    """Every consumer's kernel-log state: nothing kept, the cursor at the log's end now."""
    from rocmprov.collect.cursor import (
        current_boot_id,
        cursor_after,
        save_cursor,
        saved_consumers,
        state_dir,
    )
    from rocmprov.collect.probes import build_probes
    from rocmprov.transport.local import LocalTransport

    if args.dry_run:
        raise UsageError("--clear-kernel-findings changes state: leave out --dry-run")
    probe = next(p for p in build_probes() if p.id == "dmesg")
    res = LocalTransport().run(probe.command, timeout=probe.timeout)
    if not res.ok:
        _log(args, f"cannot read the kernel log (rc={res.rc}): nothing cleared")
        return Exit.UNKNOWN
    cursor = cursor_after(res.stdout, current_boot_id())
    names = saved_consumers()
    for consumer in names:
        try:
            save_cursor(consumer, cursor)
        except OSError as exc:
            _log(args, f"cannot clear {state_dir()}: {exc.strerror or exc}")
            return Exit.UNKNOWN
    _log(args, f"kernel findings cleared for {', '.join(names)} ({state_dir()})")
    return Exit.OK


def _audit(args: argparse.Namespace):
    """(report, bundle, error): a bundle from --bundle or a live local audit (the quick
    profile where the audit has one). Any failure is an UNKNOWN audit, never a drain."""
    if args.result:
        return _read_result(args.result), None, ""
    if args.bundle:
        from rocmprov.audit.host import audit_bundle
        from rocmprov.collect.bundle import read_bundle
        from rocmprov.exitcodes import InputError

        try:
            bundle = read_bundle(args.bundle)
        except InputError as exc:
            raise UsageError(str(exc)) from exc
        return audit_bundle(bundle), bundle, ""
    try:
        from rocmprov.audit.host import audit_local

        report, bundle = audit_local(
            profile="quick", consumer=STATE, keep_state=not args.dry_run, deadline=args.deadline
        )
        return report, bundle, ""
    except Exception as exc:  # an audit bug must not take the node out of service
        return None, None, f"{type(exc).__name__}: {exc}"


def _without_isolated(report, path: Path):
    """The report less the findings about GPUs that heal took out of service (bounded read; a
    missing or unreadable file isolates nothing)."""
    from dataclasses import replace

    from rocmprov.gate.gres import isolated_list
    from rocmprov.gate.heal import drop_isolated

    try:
        with open(path, "rb") as fh:
            text = fh.read(64 * 1024).decode("utf-8", "replace")
    except OSError:
        return report
    gone = isolated_list(text)
    return replace(report, findings=drop_isolated(report.findings, gone)) if gone else report


def _read_result(path: Path):
    import json

    from rocmprov.gate.slurm import report_from_document

    try:
        with open(path, "rb") as fh:
            data = fh.read(16 * 1024 * 1024 + 1)
        if len(data) > 16 * 1024 * 1024:
            raise ValueError("larger than 16 MiB")
        return report_from_document(json.loads(data))
    except OSError as exc:
        raise UsageError(f"cannot read --result {path}: {exc.strerror or exc}") from exc
    except (ValueError, RecursionError) as exc:
        raise UsageError(f"--result {path}: {str(exc).splitlines()[0][:200]}") from exc


def _save_bundle(bundle, directory: Path) -> str:
    """Write the evidence under directory/<UTC stamp>/<host>; keep the newest KEEP_BUNDLES."""
    from rocmprov.collect.bundle import write_bundle
    from rocmprov.gate.slurm import clean

    try:
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        os.chmod(directory, 0o700)
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
        target = directory / stamp
        n = 1
        while target.exists() and n < 100:
            n += 1
            target = directory / f"{stamp}-{n}"
        target.mkdir(mode=0o700)
        path = write_bundle(bundle, target)
        _prune(directory)
        return f"bundle={path}"
    except (OSError, UsageError) as exc:
        return f"bundle_error={clean(str(exc), 160)}"


def _prune(directory: Path) -> None:
    import shutil

    runs = sorted(
        p
        for p in directory.iterdir()
        if _STAMP.fullmatch(p.name) and p.is_dir() and not p.is_symlink()
    )
    for old in runs[:-KEEP_BUNDLES]:
        shutil.rmtree(old, ignore_errors=True)


def _log(args: argparse.Namespace, text: str) -> None:
    from rocmprov.gate.slurm import clean

    line = "rocmprov health: " + clean(text, 1000)
    print(line, file=sys.stderr)
    if args.log:
        try:
            with open(args.log, "a", encoding="utf-8") as fh:
                fh.write(f"{datetime.now(UTC).isoformat(timespec='seconds')} {line}\n")
        except OSError as exc:
            print(f"rocmprov health: cannot append to {args.log}: {exc.strerror}", file=sys.stderr)
