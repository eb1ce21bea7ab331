"""What went wrong while connecting over SSH, as one failure class and one line. Pure.

Every exception paramiko, the socket layer or a ProxyCommand raises while a connection is made
(DNS, refusal, timeout, no route, a jump host's refusal, authentication, a missing or late SSH
banner) maps to one `FailureClass` and a message naming `where`; anything else is ERROR with
the exception's type, never a traceback.
"""

from __future__ import annotations

import errno
import socket

import paramiko

from rocmprov.transport.base import FailureClass


def classify(exc: BaseException, where: str, timeout: float) -> tuple[FailureClass, str]:
    """The failure class and one line for `exc`, raised while connecting to `where`."""
    if isinstance(exc, socket.gaierror):
        return (FailureClass.DNS, f"cannot resolve {where}: {exc.strerror}")
    if isinstance(exc, ConnectionRefusedError):
        return (FailureClass.REFUSED, f"connection refused by {where}")
    if isinstance(exc, TimeoutError | socket.timeout):
        return (FailureClass.TIMEOUT, f"no answer from {where} within {timeout:g}s")
    if isinstance(exc, OSError) and exc.errno in (
        errno.EHOSTUNREACH,
        errno.ENETUNREACH,
        errno.EHOSTDOWN,
    ):
        return (FailureClass.TIMEOUT, f"no route to {where} ({exc.strerror})")
    if isinstance(exc, paramiko.ChannelException):
        return (
            FailureClass.REFUSED,
            f"jump host could not open a connection to {where}: {exc.text}",
        )
    if isinstance(exc, paramiko.AuthenticationException):
        return (FailureClass.AUTH_DENIED, f"{where}: {exc}")
    if isinstance(exc, paramiko.ProxyCommandFailure):
        return (FailureClass.DISCONNECTED, f"ProxyCommand for {where} failed: {exc}")
    text = " ".join(str(exc).split()) or type(exc).__name__
    if isinstance(exc, paramiko.SSHException) and "banner" in text.lower():
        # paramiko raises "Error reading SSH protocol banner" with an empty socket.timeout
        # as its context when its own banner deadline passes: that is a timeout too
        cause = exc.__cause__ or exc.__context__
        if (
            isinstance(cause, TimeoutError)
            or "timed out" in text.lower()
            or "timeout" in text.lower()
        ):
            return (FailureClass.TIMEOUT, f"{where} sent no SSH banner within {timeout:g}s")
        return (FailureClass.DISCONNECTED, f"{where} closed before the SSH banner")
    if isinstance(exc, OSError | EOFError | paramiko.SSHException):
        return (FailureClass.DISCONNECTED, f"{where}: connection lost: {text}")
    return (FailureClass.ERROR, f"{where}: {type(exc).__name__}: {text}")
