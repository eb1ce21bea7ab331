"""Host names, addresses, users, ports and jump hosts from an inventory or ssh_config: checked
before they reach paramiko's SSHConfig lookup, any config, or any shell.

Why: paramiko runs `Match exec "... %h ..."` of the user's ssh_config through a shell with the
host name pasted in, so a host name such as `127.0.0.1;touch /tmp/x;` (from a dynamic
inventory, a CMDB, a cloud tag) would run a command on the controller. OpenSSH 9.6+ refuses
such names; so does rocmprov, with a stricter, positive grammar:

- host: a DNS name (labels of letters, digits, `_` and `-`, no label starting or ending with
  `-`, 63 characters a label, 253 in all, an optional final dot), an IPv4 address, or an IPv6
  address, optionally in brackets and with a zone id (`fe80::1%eth0`).
- user: letters, digits, `_ . @ -`, not starting with `-` or `.`, at most 64 characters.
- port: a whole number 1..65535.
- jump host (ProxyJump): comma-separated `[ssh://][user@]host[:port]`, each part as above.

Anything else (shell metacharacters, whitespace, control characters, a leading `-`, an
over-long value) is a `BadHostValue`: a UsageError (exit 64) whose one line names the host
alias and the field. Pure functions: no I/O, no DNS.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass

from rocmprov.exitcodes import UsageError

MAX_HOST = 253  # DNS: a whole name
MAX_LABEL = 63  # DNS: one label
MAX_USER = 64
MAX_JUMPS = 8
_LABEL = re.compile(r"[A-Za-z0-9_](?:[A-Za-z0-9_-]*[A-Za-z0-9_])?")
_USER = re.compile(r"[A-Za-z0-9_@][A-Za-z0-9_.@-]*")
_ZONE = re.compile(r"[A-Za-z0-9_.-]{1,64}")
_HOSTPORT = re.compile(r"\[(?P<h6>[^\]]+)\](?::(?P<p6>[^:]*))?|(?P<h>[^:]*)(?::(?P<p>[^:]*))?")
_SHELL = frozenset("'`\"$\\;&<>|(){}[]*?!~#=%^,: \t\r\n")


class BadHostValue(UsageError):
    """A host name, address, user, port or jump host that rocmprov refuses to use."""

    def __init__(self, alias: str, field: str, value: object, reason: str) -> None:
        super().__init__(f"host {_show(alias)}: {field} {_show(value)} {reason}")
        self.alias = alias
        self.field = field
        self.value = value
        self.reason = reason


def _show(value: object) -> str:
    """A value for a one-line message: quoted, control characters escaped, long ones cut."""
    text = value if isinstance(value, str) else str(value)
    if len(text) > 80:
        text = text[:77] + "..."
    return ascii(text) if not text.isascii() or not text.isprintable() else repr(text)


def _why_not(value: str, max_len: int) -> str | None:
    """The generic reasons every field shares (None: none of them)."""
    if not value:
        return "is empty"
    if len(value) > max_len:
        return f"is longer than {max_len} characters"
    if any(ord(c) < 32 or ord(c) == 127 for c in value):
        return "contains a control character"
    if not value.isascii():
        return "contains a non-ASCII character"
    if value.startswith("-"):
        return "starts with '-'"
    return None


def _metachar(value: str, allowed: str = "") -> str | None:
    for c in value:
        if c in _SHELL and c not in allowed:
            if c.isspace():
                return "contains whitespace"
            return f"contains the shell metacharacter {c!r}"
    return None


def host_problem(value: str) -> str | None:
    """Why `value` is not a usable host name or address; None when it is one."""
    if not isinstance(value, str):
        return "is not a string"
    if value.startswith("[") and value.endswith("]") and len(value) > 2:
        inner = value[1:-1]
        return None if _ipv6(inner) else (_why_not(inner, MAX_HOST) or "is not an IPv6 address")
    reason = _why_not(value, MAX_HOST + 1)
    if reason:
        return reason
    if ":" in value:
        return None if _ipv6(value) else (_metachar(value, ":%") or "is not an IPv6 address")
    if _ipv4_like(value):
        try:
            ipaddress.IPv4Address(value)
        except ValueError:
            return "is not an IPv4 address"
        return None
    if (reason := _metachar(value)) is not None:
        return reason
    name = value[:-1] if value.endswith(".") else value
    if len(name) > MAX_HOST:
        return f"is longer than {MAX_HOST} characters"
    for label in name.split("."):
        if not label:
            return "has an empty label ('..' or a leading '.')"
        if len(label) > MAX_LABEL:
            return f"has a label longer than {MAX_LABEL} characters"
        if not _LABEL.fullmatch(label):
            return f"has a bad label {label!r} (letters, digits, '_', '-' inside)"
    return None


def _ipv4_like(value: str) -> bool:
    return all(part.isdigit() for part in value.split("."))


def _ipv6(value: str) -> bool:
    addr, sep, zone = value.partition("%")
    if sep and not _ZONE.fullmatch(zone):
        return False
    try:
        ipaddress.IPv6Address(addr)
    except ValueError:
        return False
    return True


def user_problem(value: str) -> str | None:
    """Why `value` is not a usable login (or become) user name; None when it is one."""
    if not isinstance(value, str):
        return "is not a string"
    reason = _why_not(value, MAX_USER)
    if reason:
        return reason
    if (reason := _metachar(value)) is not None:
        return reason
    if not _USER.fullmatch(value):
        return "is not a user name (letters, digits, '_', '.', '@', '-')"
    return None


def port_problem(value: object) -> str | None:
    """Why `value` is not a TCP port; None when it is one (an int, or digits)."""
    if isinstance(value, bool):
        return "is not a number"
    if isinstance(value, str):
        if not value.isascii() or not value.isdigit() or len(value) > 5:
            return "is not a number"
        value = int(value)
    if not isinstance(value, int):
        return "is not a number"
    if not 0 < value < 65536:
        return "is out of range (1-65535)"
    return None


@dataclass(frozen=True)
class JumpHop:
    """One checked ProxyJump entry."""

    host: str  # without brackets
    port: int | None
    user: str | None


def parse_jump(value: str, *, alias: str, field: str = "ProxyJump") -> tuple[JumpHop, ...]:
    """A ProxyJump value (`[ssh://][user@]host[:port]`, comma-separated), every part checked.

    `none` (OpenSSH's "no jump") gives (). Raises BadHostValue.
    """
    if not isinstance(value, str):
        raise BadHostValue(alias, field, value, "is not a string")
    reason = _why_not(value, MAX_JUMPS * (MAX_HOST + MAX_USER + 16))
    if reason:
        raise BadHostValue(alias, field, value, reason)
    if value.lower() == "none":
        return ()
    specs = [spec.strip() for spec in value.split(",") if spec.strip()]
    if not specs:
        raise BadHostValue(alias, field, value, "names no host")
    if len(specs) > MAX_JUMPS:
        raise BadHostValue(alias, field, value, f"has more than {MAX_JUMPS} hops")
    return tuple(_hop(spec, alias=alias, field=field) for spec in specs)


def _hop(spec: str, *, alias: str, field: str) -> JumpHop:
    body = spec.removeprefix("ssh://")
    user, at, hostport = body.rpartition("@")
    m = _HOSTPORT.fullmatch(hostport)
    if not m:
        raise BadHostValue(alias, field, spec, "is not [user@]host[:port]")
    host = m.group("h6") if m.group("h6") is not None else m.group("h")
    port = m.group("p6") if m.group("h6") is not None else m.group("p")
    if at and (reason := user_problem(user)):
        raise BadHostValue(alias, f"{field} user", user, reason)
    if (reason := host_problem(host)) is not None:
        raise BadHostValue(alias, f"{field} host", host, reason)
    if port is not None and (reason := port_problem(port)):
        raise BadHostValue(alias, f"{field} port", port, reason)
    return JumpHop(host, int(port) if port is not None else None, user if at else None)


def check_host(alias: str, field: str, value: str) -> str:
    """`value` if it is a usable host name or address, else BadHostValue."""
    if (reason := host_problem(value)) is not None:
        raise BadHostValue(alias, field, value, reason)
    return value


def check_user(alias: str, field: str, value: str) -> str:
    """`value` if it is a usable user name, else BadHostValue."""
    if (reason := user_problem(value)) is not None:
        raise BadHostValue(alias, field, value, reason)
    return value


def check_port(alias: str, field: str, value: object) -> int:
    """`value` as an int if it is a TCP port, else BadHostValue."""
    if (reason := port_problem(value)) is not None:
        raise BadHostValue(alias, field, value, reason)
    return int(str(value))


def strip_brackets(host: str) -> str:
    """`[::1]` -> `::1` (what sockets and known_hosts' [host]:port want inside)."""
    return host[1:-1] if host.startswith("[") and host.endswith("]") else host
