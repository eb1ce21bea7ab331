"""Replace a file in a directory atomically: readers see the old file or the new one.

A temp file beside the target is created exclusively and never through a symbolic link,
written, fsynced and renamed over the target; the directory is fsynced after. Used by the
report writer (`--output FILE`), the dmesg cursor and the inventory cache, which also share
`open_private_dir` (a 0700 directory of this user, opened without following a link).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from pathlib import Path

_TEMP = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def open_private_dir(path: Path) -> int:
    """Open (creating, 0700) `path`; never through a symbolic link at its last component, and
    refuse a directory that another user owns or that others can write to."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    parent = os.open(path.parent, DIR_FLAGS)
    try:
        with contextlib.suppress(FileExistsError):
            os.mkdir(path.name, 0o700, dir_fd=parent)
        fd = os.open(path.name, DIR_FLAGS, dir_fd=parent)
    finally:
        os.close(parent)
    st = os.fstat(fd)
    if st.st_uid != os.geteuid() or stat.S_IMODE(st.st_mode) & 0o022:
        os.close(fd)
        raise PermissionError(f"{path}: not a private directory of this user")
    if stat.S_IMODE(st.st_mode) != 0o700:
        os.fchmod(fd, 0o700)
    return fd


def replace_in_dir(dir_fd: int, name: str, data: bytes, mode: int) -> None:
    """Write `data` as `name` in the open directory `dir_fd`, with `mode` whatever the umask."""
    tmp = f".{name}.{secrets.token_hex(6)}.tmp"
    try:
        fd = os.open(tmp, _TEMP, mode, dir_fd=dir_fd)
        try:
            os.fchmod(fd, mode)
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.rename(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        os.fsync(dir_fd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=dir_fd)
        raise
