"""Transports run a shell command on a host and return one CommandResult, whatever the host."""

from rocmprov.transport.base import (
    CommandResult,
    FailureClass,
    HostUnreachable,
    Transport,
)

__all__ = ["CommandResult", "FailureClass", "HostUnreachable", "Transport"]
