"""ProxyJump chains: the hops to go through, first one first, each resolved (and checked)
through ssh_config like any host; a hop's own ProxyJump is followed too, up to MAX_JUMPS."""

from __future__ import annotations

import paramiko

from rocmprov.inventory.hostnames import MAX_JUMPS
from rocmprov.transport.ssh.config import Target, resolve


def jump_chain(
    config: paramiko.SSHConfig, target: Target, *, owner: str, depth: int = 0
) -> list[Target]:
    """Hops to go through for `target`, first one first. Bad values: BadHostValue (naming
    `owner`); a chain longer than MAX_JUMPS (a loop?): ValueError."""
    if not target.jumps:
        return []
    if depth >= MAX_JUMPS:
        raise ValueError(f"ProxyJump chain longer than {MAX_JUMPS} (a loop?)")
    hops = [
        resolve(config, hop.host, owner=owner, field="ProxyJump host", port=hop.port, user=hop.user)
        for hop in target.jumps
    ]
    return [*jump_chain(config, hops[0], owner=owner, depth=depth + 1), *hops]
