"""Command line: argparse, one module per command under rocmprov.commands, exit codes.

Each command module defines HELP, `add_arguments(parser)` and `run(args) -> int`, and keeps its
top level light (heavy imports such as ansible happen inside `run`), so `--help` stays fast.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from typing import NoReturn

from rocmprov import __version__
from rocmprov.exitcodes import Exit, InputError, UsageError

COMMANDS = ("audit", "collect", "explain", "apply", "repair", "verify", "health", "heal")


class _Parser(argparse.ArgumentParser):
    """argparse exits 2 on bad usage, which means CRITICAL here: exit 64 with one line instead."""

    def error(self, message: str) -> NoReturn:
        self.exit(Exit.USAGE, f"rocmprov: {message} (see: {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="rocmprov",
        description="Provision and diagnose AMD ROCm GPU servers.",
    )
    parser.add_argument("--version", action="version", version=f"rocmprov {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name in COMMANDS:
        module = importlib.import_module(f"rocmprov.commands.{name}")
        cmd = sub.add_parser(name, help=module.HELP, description=module.HELP)
        module.add_arguments(cmd)
        cmd.set_defaults(_module=module)
    return parser


def _quiet_libraries() -> None:
    """paramiko logs tracebacks of failed handshakes; failures reach the user as one line."""
    import logging

    for name in ("paramiko", "ansible_runner"):
        logger = logging.getLogger(name)
        logger.addHandler(logging.NullHandler())
        logger.propagate = False


def main(argv: list[str] | None = None) -> int:
    _quiet_libraries()
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "_module", None):
        parser.print_help(sys.stderr)
        return Exit.USAGE
    try:
        return int(args._module.run(args))
    except KeyboardInterrupt:
        print("rocmprov: interrupted", file=sys.stderr)
        return Exit.INTERRUPTED
    except (UsageError, InputError) as exc:
        print(f"rocmprov: {exc}", file=sys.stderr)
        return exc.exit_code
    except BrokenPipeError:
        return Exit.OK
    except Exception as exc:  # a bug: one line for the user, the traceback only on request
        if os.environ.get("ROCMPROV_DEBUG"):
            raise
        print(
            f"rocmprov: internal error: {type(exc).__name__}: {exc} "
            "(rerun with ROCMPROV_DEBUG=1 for the traceback)",
            file=sys.stderr,
        )
        return Exit.UNKNOWN
