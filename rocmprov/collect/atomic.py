"""Replace a file in a directory atomically: readers see the old file or the new one.

A temp file beside the target is created exclusively and never through a symbolic link,
written, fsynced and renamed over the target; the directory is fsynced after. Used by the
report writer (`--output FILE`) and the dmesg cursor.
"""

from __future__ import annotations

import contextlib
import os
import secrets

_TEMP = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


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
