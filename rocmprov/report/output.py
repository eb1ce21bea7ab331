"""`--output FILE`: a report replaces FILE atomically, so a reader (node_exporter's textfile
collector, a CI job) sees the old file or the new one, never half of one.

A temp file in FILE's directory (created exclusively, never through a symbolic link) is written,
fsynced and renamed over FILE; the directory is fsynced after. A symbolic link at FILE is
replaced, never followed. The file is 0644: metrics and audit reports hold no secrets.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from pathlib import Path

from rocmprov.exitcodes import UsageError

_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
_TEMP = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


def check_target(path: Path) -> None:
    """Refuse before any work: a FILE whose directory is missing, or that is a directory."""
    parent = path.parent if str(path.parent) else Path(".")
    if not path.name or path.name in (".", ".."):
        raise UsageError(f"--output {path}: not a file name")
    if not parent.is_dir():
        raise UsageError(f"--output {path}: directory {parent} does not exist")
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    if stat.S_ISDIR(st.st_mode):
        raise UsageError(f"--output {path}: is a directory")


def write_atomic(path: Path, text: str, mode: int = 0o644) -> None:
    parent = path.parent if str(path.parent) else Path(".")
    dfd = os.open(parent, _DIR)
    tmp = f".{path.name}.{secrets.token_hex(6)}.tmp"
    try:
        fd = os.open(tmp, _TEMP, mode, dir_fd=dfd)
        try:
            os.fchmod(fd, mode)  # whatever the umask
            data = text.encode("utf-8")
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.rename(tmp, path.name, src_dir_fd=dfd, dst_dir_fd=dfd)
        os.fsync(dfd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=dfd)
        raise
    finally:
        os.close(dfd)
