"""transport/ssh/failures.classify: one failure class and one line per connect-time exception."""

from __future__ import annotations

import errno
import socket

import paramiko
import pytest

from rocmprov.transport.base import FailureClass
from rocmprov.transport.ssh.failures import classify


def _banner_timeout() -> paramiko.SSHException:
    try:
        try:
            raise TimeoutError()
        except TimeoutError as inner:
            raise paramiko.SSHException("Error reading SSH protocol banner") from inner
    except paramiko.SSHException as exc:
        return exc


@pytest.mark.parametrize(
    ("exc", "failure", "words"),
    [
        (socket.gaierror(socket.EAI_NONAME, "Name or service not known"), FailureClass.DNS,
         "cannot resolve h:22: Name or service not known"),
        (ConnectionRefusedError(errno.ECONNREFUSED, "refused"), FailureClass.REFUSED,
         "connection refused by h:22"),
        (TimeoutError(), FailureClass.TIMEOUT, "no answer from h:22 within 5s"),
        (OSError(errno.EHOSTUNREACH, "No route to host"), FailureClass.TIMEOUT,
         "no route to h:22 (No route to host)"),
        (paramiko.AuthenticationException("Authentication failed."), FailureClass.AUTH_DENIED,
         "h:22: Authentication failed."),
        (_banner_timeout(), FailureClass.TIMEOUT, "h:22 sent no SSH banner within 5s"),
        (paramiko.SSHException("Error reading SSH protocol banner"), FailureClass.DISCONNECTED,
         "h:22 closed before the SSH banner"),
        (EOFError(), FailureClass.DISCONNECTED, "h:22: connection lost: EOFError"),
        (ValueError("odd\n  value"), FailureClass.ERROR, "h:22: ValueError: odd value"),
    ],
)  # fmt: skip
def test_each_connect_failure_gets_one_class_and_one_line(
    exc: BaseException, failure: FailureClass, words: str
) -> None:
    got, line = classify(exc, "h:22", 5.0)
    assert (got, line) == (failure, words)
    assert "\n" not in line
