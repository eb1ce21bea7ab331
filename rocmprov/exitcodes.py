"""Exit codes of every rocmprov command (documented in README.md)."""

from __future__ import annotations

from enum import IntEnum


class Exit(IntEnum):
    OK = 0
    WARNING = 1
    CRITICAL = 2
    UNKNOWN = 3
    USAGE = 64
    INTERRUPTED = 130


class UsageError(Exception):
    """Bad input from the user: one line on stderr, exit 64, nothing changed anywhere."""

    exit_code = Exit.USAGE


class InputError(Exception):
    """Input that exists but cannot be analysed (unreadable bundle, other schema): exit 3."""

    exit_code = Exit.UNKNOWN
