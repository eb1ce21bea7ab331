"""What a command that reaches an inventory's hosts (audit, collect, repair, verify) tells the
fleet: one frozen dataclass, built from argparse by commands/_options.py (`fleet_options`) or
directly (apply's audit after the apply). Nothing below commands/ sees an argparse Namespace."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class FleetOptions:
    inventory: str  # an Ansible inventory (file, directory or script)
    limit: str | None = None  # an Ansible host pattern, as in ansible --limit
    forks: int = 64  # hosts at once
    accept_new: bool = False  # accept and record unknown SSH host keys (changed ones: never)
    become: bool = False  # sudo -n for the probes that need root
    ssh_config: Path | None = None  # else the inventory's -F, else ~/.ssh/config
    known_hosts: Path | None = None  # else the inventory's UserKnownHostsFile, else ~/.ssh/...
    gpu_users: tuple[str, ...] = ()  # the users who run GPU work, checked (): the default)
    python: str = ""  # the python whose torch is checked ("": each host's own)
