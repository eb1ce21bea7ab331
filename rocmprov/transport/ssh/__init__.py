"""Runs commands on hosts over SSH (paramiko), with host keys checked and failures classified.

Settings follow OpenSSH's: ~/.ssh/config (HostName, User, Port, IdentityFile, IdentitiesOnly,
ProxyJump, ProxyCommand, HostKeyAlias), keys from ssh-agent and key files, and known_hosts.
Inventory values (ansible_host/port/user/key) win over ssh_config, as with Ansible's ssh.

One concern a module:
- known_hosts: the known_hosts files and the host key policy (unknown: refused unless
  accept_new; changed or @revoked: always refused)
- config: ssh_config resolution (every name checked by inventory.hostnames before the lookup),
  `Target`, `SSHOptions`
- jump: ProxyJump chains
- auth: public key authentication (key files, ssh-agent, ~/.ssh/id_*)
- command: the exec result and the `/bin/sh -s` script (timeout, sudo -n)
- session: `SSHTransport`, the connection and its commands
"""

from rocmprov.transport.ssh.auth import DEFAULT_IDENTITIES
from rocmprov.transport.ssh.command import (
    KILL_GRACE,
    LOCAL_GRACE,
    TIMEOUT_RC,
    ExecResult,
    _secs,
    decode,
    sudo_denied_line,
)
from rocmprov.transport.ssh.config import (
    DEFAULT_CONNECT_TIMEOUT,
    USER_SSH_CONFIG,
    SSHOptions,
    Target,
    load_ssh_config,
    resolve,
)
from rocmprov.transport.ssh.jump import jump_chain
from rocmprov.transport.ssh.known_hosts import (
    SYSTEM_KNOWN_HOSTS,
    USER_KNOWN_HOSTS,
    KnownHosts,
    known_name,
)
from rocmprov.transport.ssh.session import SSHTransport

__all__ = [
    "DEFAULT_CONNECT_TIMEOUT",
    "DEFAULT_IDENTITIES",
    "KILL_GRACE",
    "LOCAL_GRACE",
    "SYSTEM_KNOWN_HOSTS",
    "TIMEOUT_RC",
    "USER_KNOWN_HOSTS",
    "USER_SSH_CONFIG",
    "ExecResult",
    "KnownHosts",
    "SSHOptions",
    "SSHTransport",
    "Target",
    "_secs",
    "decode",
    "jump_chain",
    "known_name",
    "load_ssh_config",
    "resolve",
    "sudo_denied_line",
]
