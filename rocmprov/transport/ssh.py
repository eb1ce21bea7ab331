"""Runs commands on one host over SSH (paramiko), with host keys checked and failures classified.

One `SSHTransport` is one TCP connection (TCP_NODELAY) with one authenticated SSH session;
every command is an exec channel on it. Settings follow OpenSSH's: ~/.ssh/config (HostName,
User, Port, IdentityFile, IdentitiesOnly, ProxyJump, ProxyCommand, HostKeyAlias), keys from
ssh-agent and key files, and known_hosts. Inventory values (ansible_host/port/user/key) win
over ssh_config, as with Ansible's ssh connection.

Host keys (DESIGN.md contract): an unknown host is refused (HOSTKEY_UNKNOWN) unless
`accept_new` (then the key is appended to known_hosts, like OpenSSH's accept-new); a changed
or @revoked key is always refused (HOSTKEY_CHANGED). Every failure is a `HostUnreachable`
with one `FailureClass` and a one-line message; nothing else escapes `connect` and `run`.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import errno
import fcntl
import functools
import getpass
import hashlib
import hmac
import logging
import os
import re
import select
import shlex
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import paramiko

from rocmprov.exitcodes import UsageError
from rocmprov.transport.base import CommandResult, FailureClass, HostUnreachable

if TYPE_CHECKING:
    from rocmprov.inventory import HostSpec

# paramiko logs transport-thread errors (with tracebacks); never let them reach the user's
# terminal through logging's last-resort handler. Failures are reported as HostUnreachable.
logging.getLogger("paramiko").addHandler(logging.NullHandler())

DEFAULT_CONNECT_TIMEOUT = 10.0  # TCP connect, SSH banner, key exchange, auth: each
KILL_GRACE = 5  # seconds between TERM and KILL of a remote command past its timeout
LOCAL_GRACE = 15.0  # how long past a command's timeout we wait for the remote side to end it
TIMEOUT_RC = 124
SYSTEM_KNOWN_HOSTS = Path("/etc/ssh/ssh_known_hosts")
USER_KNOWN_HOSTS = Path("~/.ssh/known_hosts")
USER_SSH_CONFIG = Path("~/.ssh/config")
DEFAULT_IDENTITIES = ("~/.ssh/id_ed25519", "~/.ssh/id_ecdsa", "~/.ssh/id_rsa")
MAX_JUMPS = 8
_SUDO_DENIED = (
    "a password is required",
    "a terminal is required",
    "not in the sudoers",
    "is not allowed to execute",
    "may not run sudo",
)


# --- known_hosts ------------------------------------------------------------------------------


@dataclass(frozen=True)
class _KnownKey:
    marker: str  # "" | "@revoked" | "@cert-authority" (host certificates are not supported)
    patterns: tuple[str, ...]
    keytype: str
    blob: bytes


class KnownHosts:
    """known_hosts read once and shared by every connection of a run (thread-safe).

    `path` (default ~/.ssh/known_hosts) is where accepted keys are appended; the system file
    is read too. Understands hashed names, wildcards, negation, [host]:port and @revoked.
    """

    def __init__(self, path: Path | None = None, *, system: Path | None = SYSTEM_KNOWN_HOSTS):
        self.path = (path or USER_KNOWN_HOSTS).expanduser()
        self._lock = threading.Lock()
        self._entries: list[_KnownKey] = []
        for source in (self.path, system):
            if source is not None:
                self._entries.extend(_read_known_hosts(source))

    def verify(self, name: str, key: paramiko.PKey) -> str:
        """One of known, unknown, changed, revoked: `key` as offered by host `name`."""
        blob = key.asbytes()
        with self._lock:
            entries = list(self._entries)
        if any(e.marker == "@revoked" and e.blob == blob for e in entries):
            return "revoked"
        mine = [e for e in entries if not e.marker and _host_matches(e.patterns, name)]
        if not mine:
            return "unknown"
        if any(e.keytype == key.get_name() and e.blob == blob for e in mine):
            return "known"
        return "changed"

    def key_types(self, name: str) -> list[str]:
        """Key types known for `name`, to ask the server for those first (as OpenSSH does)."""
        with self._lock:
            entries = list(self._entries)
        types: list[str] = []
        for e in entries:
            if not e.marker and _host_matches(e.patterns, name) and e.keytype not in types:
                types.append(e.keytype)
        return types

    def add(self, name: str, key: paramiko.PKey) -> None:
        """Append `name keytype base64` to the file (0600, locked), as OpenSSH's accept-new."""
        line = f"{name} {key.get_name()} {key.get_base64()}\n"
        entry = _KnownKey("", (name,), key.get_name(), key.asbytes())
        with self._lock:
            self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
                os.write(fd, line.encode())
            finally:
                os.close(fd)
            self._entries.append(entry)


def _read_known_hosts(path: Path) -> list[_KnownKey]:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise UsageError(f"cannot read known_hosts {path}: {exc.strerror or exc}") from exc
    entries = []
    for raw in text.splitlines():
        fields = raw.split()
        if not fields or fields[0].startswith("#"):
            continue
        marker = fields.pop(0) if fields[0].startswith("@") else ""
        if len(fields) < 3:
            continue
        try:
            blob = base64.b64decode(fields[2], validate=True)
        except (binascii.Error, ValueError):
            continue
        entries.append(_KnownKey(marker, tuple(fields[0].split(",")), fields[1], blob))
    return entries


def _host_matches(patterns: tuple[str, ...], name: str) -> bool:
    hit = False
    for pattern in patterns:
        if pattern.startswith("|1|"):
            hit = hit or _hashed_match(pattern, name)
            continue
        negated = pattern.startswith("!")
        if _glob(pattern[1:] if negated else pattern).fullmatch(name):
            if negated:
                return False
            hit = True
    return hit


def _hashed_match(pattern: str, name: str) -> bool:
    try:
        _, _, salt64, hash64 = pattern.split("|", 3)
        salt, want = base64.b64decode(salt64), base64.b64decode(hash64)
    except (ValueError, binascii.Error):
        return False
    return hmac.compare_digest(hmac.new(salt, name.encode(), hashlib.sha1).digest(), want)


@functools.lru_cache(maxsize=4096)
def _glob(pattern: str) -> re.Pattern[str]:
    body = re.escape(pattern).replace(r"\*", ".*").replace(r"\?", ".")
    return re.compile(body, re.IGNORECASE)


# --- options and targets ----------------------------------------------------------------------


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
class _Target:
    alias: str
    hostname: str
    port: int
    user: str
    key_files: tuple[str, ...]
    identities_only: bool
    proxy_jump: str | None
    proxy_command: str | None
    host_key_alias: str | None

    @property
    def known_name(self) -> str:
        """The name known_hosts uses: host, or [host]:port off port 22."""
        name = self.host_key_alias or self.hostname
        return name if self.port == 22 else f"[{name}]:{self.port}"


def _resolve(
    config: paramiko.SSHConfig,
    alias: str,
    *,
    port: int | None = None,
    user: str | None = None,
    key_files: tuple[str, ...] = (),
) -> _Target:
    cfg = config.lookup(alias)
    jump = cfg.get("proxyjump")
    proxy = cfg.get("proxycommand")
    try:
        cfg_port = int(cfg.get("port", 22))
    except ValueError:
        cfg_port = 22
    return _Target(
        alias=alias,
        hostname=cfg.get("hostname", alias),
        port=port or cfg_port,
        user=user or cfg.get("user") or getpass.getuser(),
        key_files=tuple(os.path.expanduser(k) for k in (*key_files, *cfg.get("identityfile", []))),
        identities_only=str(cfg.get("identitiesonly", "no")).lower() == "yes",
        proxy_jump=None if not jump or jump.lower() == "none" else jump,
        proxy_command=proxy or None,
        host_key_alias=cfg.get("hostkeyalias"),
    )


def _jump_hop(config: paramiko.SSHConfig, spec: str) -> _Target:
    """One ProxyJump entry: [ssh://][user@]host[:port], host may be [ipv6]."""
    spec = spec.strip().removeprefix("ssh://")
    user, _, hostport = spec.rpartition("@")
    m = re.fullmatch(r"\[(?P<h6>[^\]]+)\](?::(?P<p6>\d+))?|(?P<h>[^:]+)(?::(?P<p>\d+))?", hostport)
    if not m:
        raise ValueError(f"bad ProxyJump entry {spec!r}")
    host = m.group("h6") or m.group("h")
    port = m.group("p6") or m.group("p")
    return _resolve(config, host, port=int(port) if port else None, user=user or None)


def _jump_chain(config: paramiko.SSHConfig, target: _Target, depth: int = 0) -> list[_Target]:
    """Hops to go through, first one first (the first hop's own ProxyJump is followed too)."""
    if not target.proxy_jump:
        return []
    if depth >= MAX_JUMPS:
        raise ValueError(f"ProxyJump chain longer than {MAX_JUMPS} (a loop?)")
    hops = [_jump_hop(config, spec) for spec in target.proxy_jump.split(",") if spec.strip()]
    return [*_jump_chain(config, hops[0], depth + 1), *hops] if hops else []


# --- keys -------------------------------------------------------------------------------------

_key_cache: dict[str, tuple[float, paramiko.PKey | str]] = {}
_key_lock = threading.Lock()


def _load_key(path: str) -> paramiko.PKey | str:
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


# --- results ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class ExecResult:
    """A raw remote command. rc None: no exit status (killed by a signal, or deadline passed)."""

    rc: int | None
    stdout: bytes
    stderr: bytes
    duration: float
    timed_out: bool = False


def decode(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")


def _secs(seconds: float) -> str:
    """A duration for coreutils timeout: whole seconds where whole, else milliseconds."""
    seconds = max(seconds, 0.001)
    return str(int(seconds)) if seconds == int(seconds) else f"{seconds:.3f}"


def sudo_denied_line(stderr: str) -> str | None:
    """sudo's refusal line, if `stderr` holds one."""
    for line in stderr.splitlines():
        if line.startswith("sudo:") and any(t in line for t in _SUDO_DENIED):
            return line.strip()
    return None


# --- the transport ----------------------------------------------------------------------------


class SSHTransport:
    """One host over SSH. `run` follows the Transport protocol; `exec` is the raw form."""

    def __init__(
        self,
        host: str,
        *,
        options: SSHOptions,
        address: str | None = None,
        port: int | None = None,
        user: str | None = None,
        key_file: str | None = None,
        become: bool = False,
        become_user: str | None = None,
    ) -> None:
        self.host = host
        self.become = become
        self.become_user = become_user
        self._options = options
        self._target = _resolve(
            options.ssh_config,
            address or host,
            port=port,
            user=user,
            key_files=(key_file,) if key_file else (),
        )
        self._transport: paramiko.Transport | None = None
        self._hops: list[paramiko.Transport] = []
        self._closed = False

    @classmethod
    def from_spec(cls, spec: HostSpec, options: SSHOptions) -> SSHTransport:
        return cls(
            spec.name,
            options=options,
            address=spec.address,
            port=spec.port,
            user=spec.user,
            key_file=spec.key_file,
            become=spec.become,
            become_user=spec.become_user,
        )

    # -- what the host is ---------------------------------------------------------------------

    @property
    def user(self) -> str:
        return self._target.user

    @property
    def endpoint(self) -> str:
        """user@hostname:port as connected (after ssh_config)."""
        return f"{self._target.user}@{self._target.hostname}:{self._target.port}"

    @property
    def uses_sudo(self) -> bool:
        """Root-needing commands go through `sudo -n`: become is set and we are not root."""
        return self.become and self.user != "root"

    def sudo_argv(self) -> list[str]:
        argv = ["sudo", "-n"]
        if self.become_user and self.become_user != "root":
            argv += ["-u", self.become_user]
        return [*argv, "--"]

    # -- connection ---------------------------------------------------------------------------

    def connect(self) -> None:
        """Open (once) the connection, through any ProxyJump hops. Raises HostUnreachable."""
        if self._transport is not None and self._transport.is_active():
            return
        if self._closed:
            raise self._fail(FailureClass.DISCONNECTED, "connection closed")
        try:
            hops = _jump_chain(self._options.ssh_config, self._target)
        except ValueError as exc:
            raise self._fail(FailureClass.ERROR, str(exc)) from None
        via: paramiko.Transport | None = None
        for hop in hops:
            via = self._open(hop, via, where=f"jump host {hop.alias}: ")
            self._hops.append(via)
        self._transport = self._open(self._target, via, where="")
        if self._closed:  # close() was called (from another thread) while we connected
            self.close()
            raise self._fail(FailureClass.DISCONNECTED, "connection closed")

    def close(self) -> None:
        """Close the connection and its hops; safe to call twice and from another thread."""
        self._closed = True
        for t in [self._transport, *reversed(self._hops)]:
            if t is not None:
                with contextlib.suppress(Exception):
                    t.close()

    def __enter__(self) -> SSHTransport:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _fail(self, failure: FailureClass, message: str) -> HostUnreachable:
        return HostUnreachable(self.host, failure, message)

    def _open(
        self, target: _Target, via: paramiko.Transport | None, where: str
    ) -> paramiko.Transport:
        timeout = self._options.connect_timeout
        where_to = f"{where}{target.hostname}:{target.port}"
        try:
            sock = self._socket(target, via, timeout)
        except (OSError, paramiko.SSHException) as exc:
            raise self._classify(exc, where_to, timeout) from None
        try:
            t = paramiko.Transport(sock)
        except (OSError, paramiko.SSHException) as exc:
            with contextlib.suppress(Exception):
                sock.close()
            raise self._classify(exc, where_to, timeout) from None
        try:
            t.banner_timeout = t.handshake_timeout = t.auth_timeout = timeout
            self._prefer_known_key_types(t, target)
            t.start_client(timeout=timeout)
            if getattr(t, "host_key", None) is None:  # start_client returns on its timeout
                raise self._fail(
                    FailureClass.TIMEOUT, f"{where_to}: no SSH handshake within {timeout:g}s"
                )
            self._check_host_key(t, target, where)
            self._authenticate(t, target, where)
        except HostUnreachable:
            t.close()
            raise
        except (OSError, EOFError, paramiko.SSHException) as exc:
            t.close()
            raise self._classify(exc, where_to, timeout) from None
        return t

    @staticmethod
    def _socket(
        target: _Target, via: paramiko.Transport | None, timeout: float
    ) -> socket.socket | paramiko.Channel | paramiko.ProxyCommand:
        if via is not None:
            return via.open_channel(
                "direct-tcpip", (target.hostname, target.port), ("127.0.0.1", 0), timeout=timeout
            )
        if target.proxy_command:
            return paramiko.ProxyCommand(target.proxy_command)
        last: OSError | None = None
        infos = socket.getaddrinfo(target.hostname, target.port, type=socket.SOCK_STREAM)
        for family, stype, proto, _, addr in infos:
            sock = socket.socket(family, stype, proto)
            try:
                sock.settimeout(timeout)
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                sock.connect(addr)
            except OSError as exc:
                sock.close()
                last = exc
                continue
            return sock
        raise last or OSError(errno.EADDRNOTAVAIL, "no address")

    def _classify(self, exc: BaseException, where: str, timeout: float) -> HostUnreachable:
        """One failure class and one line for anything that went wrong while connecting."""
        if isinstance(exc, socket.gaierror):
            return self._fail(FailureClass.DNS, f"cannot resolve {where}: {exc.strerror}")
        if isinstance(exc, ConnectionRefusedError):
            return self._fail(FailureClass.REFUSED, f"connection refused by {where}")
        if isinstance(exc, TimeoutError | socket.timeout):
            return self._fail(FailureClass.TIMEOUT, f"no answer from {where} within {timeout:g}s")
        if isinstance(exc, OSError) and exc.errno in (
            errno.EHOSTUNREACH,
            errno.ENETUNREACH,
            errno.EHOSTDOWN,
        ):
            return self._fail(FailureClass.TIMEOUT, f"no route to {where} ({exc.strerror})")
        if isinstance(exc, paramiko.ChannelException):
            return self._fail(
                FailureClass.REFUSED,
                f"jump host could not open a connection to {where}: {exc.text}",
            )
        if isinstance(exc, paramiko.AuthenticationException):
            return self._fail(FailureClass.AUTH_DENIED, f"{where}: {exc}")
        if isinstance(exc, paramiko.ProxyCommandFailure):
            return self._fail(FailureClass.DISCONNECTED, f"ProxyCommand for {where} failed: {exc}")
        text = " ".join(str(exc).split()) or type(exc).__name__
        if isinstance(exc, paramiko.SSHException) and "banner" in text.lower():
            if "timed out" in text.lower() or "timeout" in text.lower():
                return self._fail(
                    FailureClass.TIMEOUT, f"{where} sent no SSH banner within {timeout:g}s"
                )
            return self._fail(FailureClass.DISCONNECTED, f"{where} closed before the SSH banner")
        if isinstance(exc, OSError | EOFError | paramiko.SSHException):
            return self._fail(FailureClass.DISCONNECTED, f"{where}: connection lost: {text}")
        return self._fail(FailureClass.ERROR, f"{where}: {type(exc).__name__}: {text}")

    def _prefer_known_key_types(self, t: paramiko.Transport, target: _Target) -> None:
        known = self._options.known_hosts.key_types(target.known_name)
        if not known:
            return
        opts = t.get_security_options()
        offered = list(opts.key_types)
        wanted: list[str] = []
        for ktype in known:
            names = ["rsa-sha2-512", "rsa-sha2-256", "ssh-rsa"] if ktype == "ssh-rsa" else [ktype]
            wanted += [n for n in names if n in offered and n not in wanted]
        if wanted:
            opts.key_types = [*wanted, *(k for k in offered if k not in wanted)]

    def _check_host_key(self, t: paramiko.Transport, target: _Target, where: str) -> None:
        key = t.get_remote_server_key()
        name = target.known_name
        known = self._options.known_hosts
        state = known.verify(name, key)
        if state == "known":
            return
        offered = f"{key.get_name()} {key.fingerprint}"
        if state == "revoked":
            raise self._fail(
                FailureClass.HOSTKEY_CHANGED, f"{where}host key {offered} of {name} is @revoked"
            )
        if state == "changed":
            raise self._fail(
                FailureClass.HOSTKEY_CHANGED,
                f"{where}host key of {name} has CHANGED (now {offered}); refusing. If expected, "
                f"remove the old one: ssh-keygen -R {shlex.quote(name)} -f {known.path}",
            )
        if self._options.accept_new:
            known.add(name, key)
            return
        raise self._fail(
            FailureClass.HOSTKEY_UNKNOWN,
            f"{where}{name} is not in {known.path} (offers {offered}); "
            "verify and add it, or rerun with --accept-new",
        )

    def _authenticate(self, t: paramiko.Transport, target: _Target, where: str) -> None:
        tried: list[str] = []
        skipped: list[str] = []
        agents: list[paramiko.Agent] = []
        try:
            for label, key in self._candidate_keys(target, skipped, agents):
                try:
                    t.auth_publickey(target.user, key)
                except paramiko.BadAuthenticationType as exc:
                    allowed = ",".join(exc.allowed_types) or "none"
                    raise self._fail(
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
        raise self._fail(
            FailureClass.AUTH_DENIED,
            f"{where}{target.user}@{target.hostname}:{target.port} denied public key auth ({what})",
        )

    def _candidate_keys(
        self, target: _Target, skipped: list[str], agents: list[paramiko.Agent]
    ) -> Iterator[tuple[str, paramiko.PKey]]:
        """Key files given, then the agent's keys, then ~/.ssh/id_* when no file was given."""
        for path in target.key_files:
            key = _load_key(path)
            if isinstance(key, str):
                skipped.append(key)
            else:
                yield path, key
        if self._options.allow_agent and not target.identities_only:
            try:
                agent = paramiko.Agent()
                agents.append(agent)
                agent_keys = agent.get_keys()
            except (paramiko.SSHException, OSError):
                agent_keys = ()
            for i, key in enumerate(agent_keys):
                yield f"agent key {i + 1} ({key.get_name()})", key
        if self._options.look_for_keys and not target.key_files:
            for default in DEFAULT_IDENTITIES:
                path = os.path.expanduser(default)
                if os.path.exists(path):
                    key = _load_key(path)
                    if isinstance(key, str):
                        skipped.append(key)
                    else:
                        yield path, key

    # -- commands -----------------------------------------------------------------------------

    def exec(self, command: str, *, stdin: bytes = b"", timeout: float) -> ExecResult:
        """Run `command` (through the login shell, as sshd does) feeding `stdin`; wait at most
        `timeout` seconds, then return what came so far with timed_out=True. Raises
        HostUnreachable(DISCONNECTED) when the connection dies."""
        self.connect()
        t = self._transport
        assert t is not None
        start = time.monotonic()
        deadline = start + timeout
        # A last resort for a peer that stops answering mid-request: closing the transport
        # wakes every blocked paramiko call.
        watchdog = threading.Timer(timeout + self._options.connect_timeout, t.close)
        watchdog.daemon = True
        watchdog.start()
        chan: paramiko.Channel | None = None
        try:
            chan = t.open_session(timeout=self._options.connect_timeout)
            chan.settimeout(self._options.connect_timeout)
            chan.exec_command(command)
            if stdin:
                chan.sendall(stdin)
            chan.shutdown_write()
            return self._drain(t, chan, start, deadline)
        except HostUnreachable:
            raise
        except (OSError, EOFError, paramiko.SSHException) as exc:
            text = " ".join(str(exc).split()) or type(exc).__name__
            raise self._fail(
                FailureClass.DISCONNECTED,
                f"connection lost after {time.monotonic() - start:.1f}s: {text}",
            ) from None
        finally:
            watchdog.cancel()
            if chan is not None:
                with contextlib.suppress(Exception):
                    chan.close()

    def _drain(
        self, t: paramiko.Transport, chan: paramiko.Channel, start: float, deadline: float
    ) -> ExecResult:
        out, err = bytearray(), bytearray()
        while True:
            while chan.recv_ready():
                out += chan.recv(1 << 16)
            while chan.recv_stderr_ready():
                err += chan.recv_stderr(1 << 16)
            if chan.closed or (chan.eof_received and chan.exit_status_ready()):
                break
            if not t.is_active():
                break
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return ExecResult(None, bytes(out), bytes(err), time.monotonic() - start, True)
            if chan.eof_received:
                chan.status_event.wait(min(remaining, 0.5))
            else:
                select.select([chan], [], [], min(remaining, 0.5))
        while chan.recv_ready():
            out += chan.recv(1 << 16)
        while chan.recv_stderr_ready():
            err += chan.recv_stderr(1 << 16)
        duration = time.monotonic() - start
        if chan.exit_status_ready() and chan.exit_status >= 0:
            return ExecResult(chan.exit_status, bytes(out), bytes(err), duration)
        if not t.is_active():
            raise self._fail(
                FailureClass.DISCONNECTED, f"connection lost after {duration:.1f}s of a command"
            )
        return ExecResult(None, bytes(out), bytes(err), duration)

    def run(self, command: str, *, timeout: float, sudo: bool = False) -> CommandResult:
        """`/bin/sh -c command` on the host, killed there after `timeout` (rc 124).

        sudo=True goes through `sudo -n` when become is set and the login user is not root;
        a refusal raises SUDO_DENIED. A command that outlives its kill raises PROBE_TIMEOUT.
        """
        sudo_argv = self.sudo_argv() if sudo and self.uses_sudo else []
        res = self.exec(
            "/bin/sh -s",
            stdin=self.wrap(command, timeout, sudo_argv),
            timeout=timeout + LOCAL_GRACE,
        )
        if res.timed_out:
            raise self._fail(
                FailureClass.PROBE_TIMEOUT,
                f"command still running {res.duration:.0f}s after its {timeout:g}s timeout "
                "and kill (stuck in the kernel?)",
            )
        if res.rc is None:
            raise self._fail(
                FailureClass.DISCONNECTED,
                f"command ended without an exit status after {res.duration:.1f}s (killed?)",
            )
        stdout, stderr = decode(res.stdout), decode(res.stderr)
        rc = res.rc
        if sudo_argv and rc != 0 and (line := sudo_denied_line(stderr)):
            raise self._fail(FailureClass.SUDO_DENIED, line)
        if rc in (TIMEOUT_RC, 128 + 9) and res.duration >= timeout:
            rc = TIMEOUT_RC
            stderr += f"\nrocmprov: timed out after {timeout:g}s"
        return CommandResult(rc, stdout, stderr, res.duration)

    @staticmethod
    def wrap(command: str, timeout: float, sudo_argv: list[str]) -> bytes:
        """The script fed to `/bin/sh -s`: the command under coreutils timeout where present
        (timeout inside sudo, so it can kill what runs as root), stdin from /dev/null."""
        argv = ["/bin/sh", "-c", command]
        timed = [*sudo_argv, "timeout", "-k", str(KILL_GRACE), _secs(timeout), *argv]
        plain = [*sudo_argv, *argv]
        return (
            "if command -v timeout >/dev/null 2>&1; "
            f"then exec {shlex.join(timed)} </dev/null; "
            f"else exec {shlex.join(plain)} </dev/null; fi\n"
        ).encode()
