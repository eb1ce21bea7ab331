"""rocmprov collect (not built yet)."""

from __future__ import annotations

import argparse

from rocmprov.exitcodes import Exit

HELP = "collect (not available yet)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    return None


def run(args: argparse.Namespace) -> int:
    print("rocmprov: collect is not available yet", flush=True)
    return Exit.USAGE
