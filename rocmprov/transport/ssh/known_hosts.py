"""known_hosts: read once per run, matched as OpenSSH does, and the host key policy.

Policy (DESIGN.md contract): a known key passes; an unknown host is refused (HOSTKEY_UNKNOWN)
unless `accept_new` (then the key is appended, like OpenSSH's accept-new); a changed or
@revoked key is always refused (HOSTKEY_CHANGED). Refusals carry the known_hosts name
(`host`, or `[host]:port` off port 22) so that a fix can name the entry to remove.
"""

from __future__ import annotations

import base64
import binascii
import fcntl
import functools
import hashlib
import hmac
import os
import re
import shlex
import threading
from dataclasses import dataclass
from pathlib import Path

import paramiko

from rocmprov.exitcodes import UsageError
from rocmprov.transport.base import FailureClass, HostUnreachable

SYSTEM_KNOWN_HOSTS = Path("/etc/ssh/ssh_known_hosts")
USER_KNOWN_HOSTS = Path("~/.ssh/known_hosts")


@dataclass(frozen=True)
class _KnownKey:
    marker: str  # "" | "@revoked" | "@cert-authority" (host certificates are not supported)
    patterns: tuple[str, ...]
    keytype: str
    blob: bytes


def known_name(host: str, port: int) -> str:
    """The name known_hosts uses for a host: `host` on port 22, else `[host]:port`."""
    return host if port == 22 else f"[{host}]:{port}"


class KnownHosts:
    """known_hosts read once and shared by every connection of a run (thread-safe).

    `path` (default ~/.ssh/known_hosts) is where accepted keys are appended; the system file
    is read too. Understands hashed names, wildcards, negation, [host]:port and @revoked.
    """

    def __init__(self, path: Path | None = None, *, system: Path | None = SYSTEM_KNOWN_HOSTS):
        self.path = (path or USER_KNOWN_HOSTS).expanduser()
        self._lock = threading.Lock()
        self._entries: list[_KnownKey] = []
        # an index, so a lookup costs the same with 2 or 20,000 entries (a fleet's file): plain
        # names by lower-cased name; wildcard, negated and hashed entries are scanned in order
        self._by_name: dict[str, list[int]] = {}
        self._scanned: list[int] = []
        self._revoked: set[bytes] = set()
        for source in (self.path, system):
            if source is not None:
                for entry in _read_known_hosts(source):
                    self._append(entry)

    def _append(self, entry: _KnownKey) -> None:
        index = len(self._entries)
        self._entries.append(entry)
        if entry.marker == "@revoked":
            self._revoked.add(entry.blob)
        if entry.marker:
            return
        if all(_plain(p) for p in entry.patterns):
            for name in {p.lower() for p in entry.patterns}:
                self._by_name.setdefault(name, []).append(index)
        else:
            self._scanned.append(index)

    def _for_name(self, name: str) -> list[_KnownKey]:
        """The unmarked entries whose patterns match `name`, in file order."""
        with self._lock:
            hits = list(self._by_name.get(name.lower(), ()))
            scanned = list(self._scanned)
            entries = self._entries
        hits += [i for i in scanned if _host_matches(entries[i].patterns, name)]
        return [entries[i] for i in sorted(hits)]

    def verify(self, name: str, key: paramiko.PKey) -> str:
        """One of known, unknown, changed, revoked: `key` as offered by host `name`."""
        blob = key.asbytes()
        with self._lock:
            revoked = blob in self._revoked
        if revoked:
            return "revoked"
        mine = self._for_name(name)
        if not mine:
            return "unknown"
        if any(e.keytype == key.get_name() and e.blob == blob for e in mine):
            return "known"
        return "changed"

    def key_types(self, name: str) -> list[str]:
        """Key types known for `name`, to ask the server for those first (as OpenSSH does)."""
        types: list[str] = []
        for e in self._for_name(name):
            if e.keytype not in types:
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
            self._append(entry)


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


def _plain(pattern: str) -> bool:
    """A literal name: no wildcard, negation or hash (matched by equality, any case)."""
    return not (pattern.startswith(("!", "|")) or "*" in pattern or "?" in pattern)


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


# --- the policy -------------------------------------------------------------------------------


def prefer_known_key_types(t: paramiko.Transport, known: KnownHosts, name: str) -> None:
    """Ask the server for the key types known_hosts has for `name` first (as OpenSSH does)."""
    types = known.key_types(name)
    if not types:
        return
    opts = t.get_security_options()
    offered = list(opts.key_types)
    wanted: list[str] = []
    for ktype in types:
        names = ["rsa-sha2-512", "rsa-sha2-256", "ssh-rsa"] if ktype == "ssh-rsa" else [ktype]
        wanted += [n for n in names if n in offered and n not in wanted]
    if wanted:
        opts.key_types = [*wanted, *(k for k in offered if k not in wanted)]


def check_host_key(
    known: KnownHosts,
    key: paramiko.PKey,
    name: str,
    *,
    accept_new: bool,
    host: str,
    where: str = "",
) -> None:
    """Apply the policy to `key` offered as known_hosts name `name`; refusals raise
    HostUnreachable for inventory host `host` (with .known_name and .known_hosts set)."""
    state = known.verify(name, key)
    if state == "known":
        return
    offered = f"{key.get_name()} {key.fingerprint}"

    def refuse(failure: FailureClass, message: str) -> HostUnreachable:
        return HostUnreachable(host, failure, message, known_name=name, known_hosts=str(known.path))

    if state == "revoked":
        raise refuse(
            FailureClass.HOSTKEY_CHANGED, f"{where}host key {offered} of {name} is @revoked"
        )
    if state == "changed":
        raise refuse(
            FailureClass.HOSTKEY_CHANGED,
            f"{where}host key of {name} has CHANGED (now {offered}); refusing. If expected, "
            f"remove the old one: {forget_command(name, known.path)}",
        )
    if accept_new:
        known.add(name, key)
        return
    raise refuse(
        FailureClass.HOSTKEY_UNKNOWN,
        f"{where}{name} is not in {known.path} (offers {offered}); "
        "verify and add it, or rerun with --accept-new",
    )


def forget_command(name: str, path: Path | str | None = None) -> str:
    """The command that removes `name`'s keys from known_hosts `path` (default: ssh's own)."""
    where = f" -f {shlex.quote(str(path))}" if path else ""
    return f"ssh-keygen -R {shlex.quote(name)}{where}"
