"""Authentication: public keys only (key files given, then ssh-agent, then ~/.ssh/id_*), as
OpenSSH tries them; a failure says which keys were tried and which could not be used."""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator

import paramiko

from rocmprov.transport.base import FailureClass, HostUnreachable
from rocmprov.transport.ssh.config import Target

DEFAULT_IDENTITIES = ("~/.ssh/id_ed25519", "~/.ssh/id_ecdsa", "~/.ssh/id_rsa")

_key_cache: dict[str, tuple[float, paramiko.PKey | str]] = {}
_key_lock = threading.Lock()


def load_key(path: str) -> paramiko.PKey | str:
    """A private key (parsed once per run and shared), or why it cannot be used."""
    try:
        mtime = os.stat(path).st_mtime
    except OSError as exc:
        return f"{path}: {exc.strerror}"
    with _key_lock:
        cached = _key_cache.get(path)
        if cached and cached[0] == mtime:
            return cached[1]
    result: paramiko.PKey | str
    try:
        result = paramiko.PKey.from_path(path)
    except paramiko.PasswordRequiredException:
        result = f"{path}: encrypted (load it into ssh-agent)"
    except (OSError, paramiko.SSHException, ValueError) as exc:
        result = f"{path}: {exc}"
    with _key_lock:
        _key_cache[path] = (mtime, result)
    return result


def authenticate(
    t: paramiko.Transport,
    target: Target,
    *,
    host: str,
    where: str = "",
    allow_agent: bool = True,
    look_for_keys: bool = True,
) -> None:
    """Public key auth as `target.user`; HostUnreachable(AUTH_DENIED) for inventory host `host`
    when no key is accepted. Connection errors (SSHException, EOFError, OSError) propagate."""
    tried: list[str] = []
    skipped: list[str] = []
    agents: list[paramiko.Agent] = []
    try:
        for label, key in candidate_keys(
            target, skipped, agents, allow_agent=allow_agent, look_for_keys=look_for_keys
        ):
            try:
                t.auth_publickey(target.user, key)
            except paramiko.BadAuthenticationType as exc:
                allowed = ",".join(exc.allowed_types) or "none"
                raise HostUnreachable(
                    host,
                    FailureClass.AUTH_DENIED,
                    f"{where}{target.user}@{target.hostname} takes no public keys "
                    f"(allowed: {allowed})",
                ) from None
            except paramiko.AuthenticationException:
                tried.append(label)
                continue
            except (paramiko.SSHException, EOFError, OSError):
                if not tried or t.is_active():
                    raise
                tried.append(label)
                break  # the server hung up after too many keys (MaxAuthTries)
            if t.is_authenticated():
                return
    finally:
        for agent in agents:
            with contextlib.suppress(Exception):
                agent.close()
    what = f"tried {', '.join(tried)}" if tried else "no usable key: start ssh-agent or set "
    if not tried:
        what += "ansible_ssh_private_key_file"
    if skipped:
        what += f"; skipped {'; '.join(skipped)}"
    raise HostUnreachable(
        host,
        FailureClass.AUTH_DENIED,
        f"{where}{target.user}@{target.hostname}:{target.port} denied public key auth ({what})",
    )


def candidate_keys(
    target: Target,
    skipped: list[str],
    agents: list[paramiko.Agent],
    *,
    allow_agent: bool = True,
    look_for_keys: bool = True,
) -> Iterator[tuple[str, paramiko.PKey]]:
    """Key files given, then the agent's keys, then ~/.ssh/id_* when no file was given."""
    for path in target.key_files:
        key = load_key(path)
        if isinstance(key, str):
            skipped.append(key)
        else:
            yield path, key
    if allow_agent and not target.identities_only:
        try:
            agent = paramiko.Agent()
            agents.append(agent)
            agent_keys = agent.get_keys()
        except (paramiko.SSHException, OSError):
            agent_keys = ()
        for i, key in enumerate(agent_keys):
            yield f"agent key {i + 1} ({key.get_name()})", key
    if look_for_keys and not target.key_files:
        for default in DEFAULT_IDENTITIES:
            path = os.path.expanduser(default)
            if os.path.exists(path):
                key = load_key(path)
                if isinstance(key, str):
                    skipped.append(key)
                else:
                    yield path, key
