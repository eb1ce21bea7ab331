"""The one result type every transport returns, and the one error for an unreachable host."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol


@dataclass(frozen=True)
class CommandResult:
    """What a command did: exit status (124 on timeout, 127 when not found), output, seconds."""

    rc: int
    stdout: str
    stderr: str
    duration: float

    @property
    def ok(self) -> bool:
        return self.rc == 0


class FailureClass(StrEnum):
    """Why a host could not be audited. Never a failed check: the host is UNKNOWN."""

    DNS = "dns"
    REFUSED = "refused"
    TIMEOUT = "timeout"
    AUTH_DENIED = "auth-denied"
    HOSTKEY_UNKNOWN = "hostkey-unknown"
    HOSTKEY_CHANGED = "hostkey-changed"
    SUDO_DENIED = "sudo-denied"
    DISCONNECTED = "disconnected"
    PROBE_TIMEOUT = "probe-timeout"
    ERROR = "error"


class HostUnreachable(Exception):
    """The host could not be reached or used; `failure` names the class.

    For host key refusals, `known_name` is the known_hosts name of the key that was refused
    (`address`, or `[address]:port` off port 22; a jump host's when a jump host's key was
    refused) and `known_hosts` the file it was checked against.
    """

    def __init__(
        self,
        host: str,
        failure: FailureClass,
        message: str,
        *,
        known_name: str | None = None,
        known_hosts: str | None = None,
    ) -> None:
        super().__init__(f"{host}: {failure.value}: {message}")
        self.host = host
        self.failure = failure
        self.message = message
        self.known_name = known_name
        self.known_hosts = known_hosts


class Transport(Protocol):
    """Runs `/bin/sh -c COMMAND` on one host; commands are built with shlex.quote."""

    host: str

    def run(self, command: str, *, timeout: float, sudo: bool = False) -> CommandResult: ...

    def close(self) -> None: ...
