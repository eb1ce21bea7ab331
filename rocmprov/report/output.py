"""`--output FILE`: a report replaces FILE atomically, so a reader (node_exporter's textfile
collector, a CI job) sees the old file or the new one, never half of one.

A temp file in FILE's directory (created exclusively, never through a symbolic link) is written,
fsynced and renamed over FILE; the directory is fsynced after. A symbolic link at FILE is
replaced, never followed. The file is 0644: metrics and audit reports hold no secrets.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from rocmprov.exitcodes import UsageError

_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC


def check_target(path: Path, flag: str = "--output") -> None:
    """Refuse before any work: a FILE whose directory is missing, or that is a directory (the
    message names the option that gave it)."""
    parent = path.parent if str(path.parent) else Path(".")
    if not path.name or path.name in (".", ".."):
        raise UsageError(f"{flag} {path}: not a file name")
    if not parent.is_dir():
        raise UsageError(f"{flag} {path}: directory {parent} does not exist")
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    if stat.S_ISDIR(st.st_mode):
        raise UsageError(f"{flag} {path}: is a directory")


def write_atomic(path: Path, text: str, mode: int = 0o644) -> None:
    from rocmprov.store.atomic import replace_in_dir

    parent = path.parent if str(path.parent) else Path(".")
    dfd = os.open(parent, _DIR)
    try:
        replace_in_dir(dfd, path.name, text.encode("utf-8"), mode)
    finally:
        os.close(dfd)
