"""Options that every command reaching hosts over SSH shares (audit, collect, repair, verify)."""

from __future__ import annotations

import argparse
from pathlib import Path


def add_fleet_options(parser: argparse.ArgumentParser, *, forks: int, become: bool = True) -> None:
    parser.add_argument("--limit", help="Ansible host pattern, as in ansible --limit")
    parser.add_argument("--forks", type=int, default=forks, help=f"hosts at once ({forks})")
    parser.add_argument(
        "--accept-new",
        action="store_true",
        help="accept and record unknown SSH host keys (changed keys: never)",
    )
    if become:
        parser.add_argument(
            "--become",
            action="store_true",
            help="sudo -n for probes that need root (lspci capabilities, dmesg)",
        )
    parser.add_argument("--ssh-config", type=Path, help="ssh_config file (default ~/.ssh/config)")
    parser.add_argument("--known-hosts", type=Path, help="known_hosts file (~/.ssh/known_hosts)")
