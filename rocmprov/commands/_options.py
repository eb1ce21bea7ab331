"""Options that every command reaching hosts over SSH shares (audit, collect, repair, verify):
the flags (add_fleet_options), the typed FleetOptions the fleet is given (fleet_options), and the
one check of --forks that every command uses (apply too)."""

from __future__ import annotations

import argparse
from pathlib import Path

from rocmprov.exitcodes import UsageError
from rocmprov.fleet.options import FleetOptions


def check_forks(value: object) -> int:
    """--forks as an int, 1 or more; anything else (0, -5, "many", True) is a UsageError."""
    text = str(value).strip()
    if isinstance(value, bool) or not text.isascii() or not text.isdigit() or int(text) < 1:
        raise UsageError(f"--forks must be a whole number, 1 or more (not {str(value)!r})")
    return int(text)


def gpu_user_arg(text: str | None) -> tuple[str, ...]:
    """--gpu-user "alice,bob" as checked user names; "" is none given (the default applies)."""
    from rocmprov.inventory.hostnames import check_user

    names = dict.fromkeys(n.strip() for n in (text or "").split(",") if n.strip())
    return tuple(check_user("--gpu-user", "--gpu-user", n) for n in names)


def forks_arg(text: str) -> int:
    """argparse type= for --forks: check_forks, reported as argparse's usage error (exit 64)."""
    try:
        return check_forks(text)
    except UsageError as exc:
        raise argparse.ArgumentTypeError(str(exc).removeprefix("--forks ")) from None


def add_fleet_options(parser: argparse.ArgumentParser, *, forks: int, become: bool = True) -> None:
    parser.add_argument("--limit", help="Ansible host pattern, as in ansible --limit")
    parser.add_argument("--forks", type=forks_arg, default=forks, help=f"hosts at once ({forks})")
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


def fleet_options(args: argparse.Namespace) -> FleetOptions:
    """The parsed flags of add_fleet_options (and a command's --gpu-user, --python) as the
    fleet's typed options; a flag the command does not have takes the default."""
    return FleetOptions(
        inventory=args.inventory,
        limit=args.limit,
        forks=args.forks,
        accept_new=args.accept_new,
        become=getattr(args, "become", False),
        ssh_config=args.ssh_config,
        known_hosts=args.known_hosts,
        gpu_users=gpu_user_arg(getattr(args, "gpu_user", "") or ""),
        python=getattr(args, "python", "") or "",
    )
