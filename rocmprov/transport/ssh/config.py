"""ssh_config resolution: what one name means (HostName, User, Port, IdentityFile, ...), with
every host name, user and port checked (rocmprov.inventory.hostnames) before paramiko looks it up.

paramiko's `SSHConfig.lookup` runs `Match exec` commands through a shell with %h, %p, %r
pasted in, so a name is checked before it is looked up, and what the lookup gives back
(HostName, User, Port, ProxyJump) is checked before it is used or looked up in turn.
Inventory values (ansible_host/port/user/key) win over ssh_config, as with Ansible's ssh.
"""

from __future__ import annotations

import getpass
import os
import threading
import weakref
from dataclasses import dataclass
from pathlib import Path

import paramiko

from rocmprov.exitcodes import UsageError
from rocmprov.inventory.hostnames import (
    JumpHop,
    check_host,
    check_port,
    check_user,
    parse_jump,
    strip_brackets,
)
from rocmprov.transport.ssh.known_hosts import KnownHosts, known_name

DEFAULT_CONNECT_TIMEOUT = 10.0  # TCP connect, SSH banner, key exchange, auth: each
USER_SSH_CONFIG = Path("~/.ssh/config")


def load_ssh_config(path: Path | None = None) -> paramiko.SSHConfig:
    """`path`, else ~/.ssh/config when present, else an empty config. Bad file: UsageError."""
    if path is None:
        default = USER_SSH_CONFIG.expanduser()
        if not default.is_file():
            return paramiko.SSHConfig()
        path = default
    path = path.expanduser()
    if not path.exists():  # /dev/null (no config, as with ssh -F /dev/null) is fine
        raise UsageError(f"no such ssh config: {path}")
    try:
        return paramiko.SSHConfig.from_path(str(path))
    except (OSError, paramiko.SSHException, ValueError) as exc:
        raise UsageError(f"cannot read ssh config {path}: {exc}") from exc


_lookups: weakref.WeakKeyDictionary[paramiko.SSHConfig, dict[str, paramiko.SSHConfigDict]] = (
    weakref.WeakKeyDictionary()
)
_lookups_lock = threading.Lock()


def lookup(config: paramiko.SSHConfig, alias: str) -> paramiko.SSHConfigDict:
    """`config.lookup(alias)`, once per parsed config and name: a fleet's preflight and its
    connections ask for every host (~0.1 ms a lookup, and a `Match exec` runs a command).
    The answer is only read, never changed."""
    with _lookups_lock:
        seen = _lookups.setdefault(config, {})
        found = seen.get(alias)
    if found is None:
        found = config.lookup(alias)
        with _lookups_lock:
            seen[alias] = found
    return found


@dataclass(frozen=True)
class SSHOptions:
    """What every connection of one run shares: parsed once, not per host."""

    known_hosts: KnownHosts
    ssh_config: paramiko.SSHConfig
    accept_new: bool = False
    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT
    allow_agent: bool = True
    look_for_keys: bool = True

    @classmethod
    def load(
        cls,
        *,
        known_hosts: Path | None = None,
        ssh_config: Path | None = None,
        accept_new: bool = False,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
    ) -> SSHOptions:
        return cls(
            known_hosts=KnownHosts(known_hosts),
            ssh_config=load_ssh_config(ssh_config),
            accept_new=accept_new,
            connect_timeout=connect_timeout,
        )


@dataclass(frozen=True)
class Target:
    """One SSH endpoint, resolved: where to connect, as whom, with which keys, through what."""

    alias: str  # the name looked up in ssh_config
    hostname: str  # checked; IPv6 without brackets
    port: int
    user: str
    key_files: tuple[str, ...]
    identities_only: bool
    proxy_jump: str | None
    proxy_command: str | None
    host_key_alias: str | None
    jumps: tuple[JumpHop, ...] = ()  # proxy_jump, parsed and checked

    @property
    def known_name(self) -> str:
        """The name known_hosts uses: host, or [host]:port off port 22."""
        return known_name(self.host_key_alias or self.hostname, self.port)


def resolve(
    config: paramiko.SSHConfig,
    name: str,
    *,
    owner: str | None = None,
    field: str = "address",
    port: int | None = None,
    user: str | None = None,
    key_files: tuple[str, ...] = (),
) -> Target:
    """`name` through ssh_config, given values winning. Every value is checked (BadHostValue,
    a UsageError naming `owner`, the inventory host, and the field) before the lookup, and
    what ssh_config gives back is checked before it is used."""
    owner = owner if owner is not None else name
    check_host(owner, field, name)
    if port is not None:
        check_port(owner, "port", port)
    if user is not None:
        check_user(owner, "user", user)
    alias = strip_brackets(name)
    cfg = lookup(config, alias)
    hostname = check_host(owner, "ssh_config HostName", cfg.get("hostname", alias))
    cfg_port = check_port(owner, "ssh_config Port", cfg["port"]) if "port" in cfg else 22
    cfg_user = cfg.get("user")
    if cfg_user is not None:
        check_user(owner, "ssh_config User", cfg_user)
    jump = cfg.get("proxyjump")
    jump = None if not jump or jump.lower() == "none" else jump
    alias_key = cfg.get("hostkeyalias")
    if alias_key is not None:
        check_host(owner, "ssh_config HostKeyAlias", alias_key)
    return Target(
        alias=alias,
        hostname=strip_brackets(hostname),
        port=port or cfg_port,
        user=user or cfg_user or getpass.getuser(),
        key_files=tuple(os.path.expanduser(k) for k in (*key_files, *cfg.get("identityfile", []))),
        identities_only=str(cfg.get("identitiesonly", "no")).lower() == "yes",
        proxy_jump=jump,
        proxy_command=cfg.get("proxycommand") or None,
        host_key_alias=alias_key,
        jumps=parse_jump(jump, alias=owner, field="ssh_config ProxyJump") if jump else (),
    )
