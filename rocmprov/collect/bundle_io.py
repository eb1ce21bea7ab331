"""Safe file I/O for support bundles: bounded reads of untrusted bundles, private writes.

Bundles are exchanged between people, so a bundle is hostile input until read: every read is
bounded (the limits below), only regular files are read, and nothing inside a bundle is
followed through a symbolic link. Writes never follow a link and never replace what is there:
files are created with O_EXCL|O_NOFOLLOW (0600), directories 0700, relative to an open
directory descriptor, so a link planted between two steps cannot redirect them.
"""

from __future__ import annotations

import bz2
import errno
import gzip
import io
import lzma
import os
import stat
import tarfile
import time
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from typing import BinaryIO

MiB = 1 << 20
MAX_FILE_BYTES = 16 * MiB  # one file of a bundle (manifest.json or a <probe>.out)
MAX_TOTAL_BYTES = 64 * MiB  # all files read from one bundle together
MAX_ENTRIES = 1024  # tar members, or directory entries looked at
MAX_ARCHIVE_BYTES = MAX_TOTAL_BYTES + 8 * MiB  # a tarball, uncompressed (headers, skipped members)

_READ = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC  # O_NONBLOCK: opening a FIFO never hangs
_NOFOLLOW = os.O_NOFOLLOW
_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


class Unreadable(Exception):
    """A bundle, or a file in it, that is not read: the message says which and why."""


def size_text(n: int) -> str:
    return f"{n // MiB} MiB" if n % MiB == 0 else f"{n} bytes"


def kind(mode: int) -> str:
    """What a file is, in words, for messages."""
    for test, words in (
        (stat.S_ISREG, "a regular file"),
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISLNK, "a symbolic link"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return words
    return "a special file"


class Budget:
    """What is left of MAX_TOTAL_BYTES for one bundle."""

    def __init__(self, total: int = MAX_TOTAL_BYTES) -> None:
        self.total = total
        self.used = 0

    def take(self, n: int, name: str) -> None:
        self.used += n
        if self.used > self.total:
            raise Unreadable(
                f"{name} takes it over {size_text(self.total)} (the limit for a whole bundle)"
            )


# --- read -------------------------------------------------------------------------------------


@contextmanager
def open_input(
    path: os.PathLike[str] | str, *, follow: bool = True, dir_fd: int | None = None
) -> Iterator[tuple[int, int]]:
    """Open a bundle path (a directory or a regular file) without blocking: (fd, st_mode).

    `follow` follows a symbolic link at `path` itself (the user named it); never inside it."""
    try:
        fd = os.open(path, _READ | (0 if follow else _NOFOLLOW), dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise Unreadable("it is a symbolic link") from exc
        raise
    try:
        mode = os.fstat(fd).st_mode
        if not (stat.S_ISDIR(mode) or stat.S_ISREG(mode)):
            raise Unreadable(f"it is {kind(mode)}, not a directory or a regular file")
        yield fd, mode
    finally:
        os.close(fd)


def read_at(dir_fd: int, name: str, budget: Budget, where: str = "") -> bytes | None:
    """Read regular file `name` in `dir_fd`, at most MAX_FILE_BYTES; None when it is absent."""
    shown = f"{where}{name}"
    try:
        fd = os.open(name, _READ | _NOFOLLOW, dir_fd=dir_fd)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise Unreadable(f"{shown} is a symbolic link, not a regular file") from exc
        raise
    with os.fdopen(fd, "rb", buffering=0) as fh:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise Unreadable(f"{shown} is {kind(st.st_mode)}, not a regular file")
        _check_size(st.st_size, shown)
        data = _read_upto(fh, MAX_FILE_BYTES + 1)
    _check_size(len(data), shown)
    budget.take(len(data), shown)
    return data


def _check_size(size: int, name: str) -> None:
    if size > MAX_FILE_BYTES:
        raise Unreadable(
            f"{name} is larger than {size_text(MAX_FILE_BYTES)} (the limit for one file)"
        )


def _read_upto(fh: BinaryIO | io.RawIOBase, limit: int) -> bytes:
    parts: list[bytes] = []
    left = limit
    while left > 0:
        chunk = fh.read(min(left, MiB))
        if not chunk:
            break
        parts.append(chunk)
        left -= len(chunk)
    return b"".join(parts)


def open_subdir(dir_fd: int, name: str) -> int:
    """Open directory `name` in `dir_fd`, never through a link."""
    return os.open(name, _DIR, dir_fd=dir_fd)


def find_bundle_dir(dir_fd: int, marker: str) -> tuple[str, int] | None:
    """The only visible subdirectory of `dir_fd` that holds `marker`: (name, opened fd)."""
    found: list[str] = []
    with os.scandir(dir_fd) as entries:
        for count, entry in enumerate(entries, 1):
            if count > MAX_ENTRIES:
                raise Unreadable(f"it has more than {MAX_ENTRIES} entries")
            if entry.name.startswith(".") or not entry.is_dir(follow_symlinks=False):
                continue
            try:
                os.stat(f"{entry.name}/{marker}", dir_fd=dir_fd, follow_symlinks=False)
            except OSError:
                continue
            found.append(entry.name)
    return (found[0], open_subdir(dir_fd, found[0])) if len(found) == 1 else None


class _Capped(io.RawIOBase):
    """A read-only stream that refuses to give more than `limit` bytes (a decompression bomb)."""

    def __init__(self, inner: BinaryIO, limit: int) -> None:
        self.inner = inner
        self.left = limit
        self.limit = limit

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        want = self.left + 1 if size is None or size < 0 else min(size, self.left + 1)
        data = self.inner.read(want)
        self.left -= len(data)
        if self.left < 0:
            raise Unreadable(
                f"it unpacks to more than {size_text(self.limit)} (the limit for an archive)"
            )
        return data

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        data = self.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)


def _decompressed(raw: BinaryIO) -> BinaryIO:
    head = raw.read(6)
    raw.seek(0)
    if head.startswith(b"\x1f\x8b"):
        return gzip.GzipFile(fileobj=raw, mode="rb")
    if head.startswith(b"BZh"):
        return bz2.BZ2File(raw)
    if head.startswith(b"\xfd7zXZ\x00"):
        return lzma.LZMAFile(raw)
    return raw


def read_tar(fd: int, wanted: Callable[[str], bool], budget: Budget) -> dict[str, bytes]:
    """The wanted regular files of the tar archive at `fd`, by base name, streamed and bounded.

    Plain, gzip, bzip2 or xz; at most MAX_ENTRIES members and MAX_ARCHIVE_BYTES uncompressed.
    A wanted name that is not a regular file, or that appears twice, makes it Unreadable."""
    files: dict[str, bytes] = {}
    # A compressed archive is never larger than what it holds: a bigger file is padding or a
    # bomb, and gzip reads trailing zero padding a byte at a time (no output to cap).
    if os.fstat(fd).st_size > MAX_ARCHIVE_BYTES:
        raise Unreadable(f"the archive is larger than {MAX_ARCHIVE_BYTES // MiB} MiB")
    raw = os.fdopen(os.dup(fd), "rb")
    try:
        stream = io.BufferedReader(_Capped(_decompressed(raw), MAX_ARCHIVE_BYTES), MiB)
        with tarfile.open(fileobj=stream, mode="r|") as tar:
            for count, member in enumerate(tar, 1):
                if count > MAX_ENTRIES:
                    raise Unreadable(f"it has more than {MAX_ENTRIES} members")
                name = member.name.rstrip("/").rsplit("/", 1)[-1]
                if member.isdir() or not wanted(name):
                    continue
                if not member.isreg():
                    raise Unreadable(f"{member.name} is not a regular file in the archive")
                if name in files:
                    raise Unreadable(f"it holds more than one {name}")
                _check_size(member.size, member.name)
                budget.take(member.size, member.name)
                fh = tar.extractfile(member)
                files[name] = _read_upto(fh, member.size) if fh is not None else b""
    except EOFError as exc:
        raise Unreadable("the archive is truncated") from exc
    except tarfile.TarError as exc:
        raise Unreadable(f"not a directory or a tar archive ({exc})") from exc
    except (zlib.error, lzma.LZMAError) as exc:
        raise Unreadable(f"the archive is corrupt ({exc})") from exc
    except OSError as exc:
        if exc.errno is None:  # gzip.BadGzipFile, bz2's "Invalid data stream"
            raise Unreadable(f"the archive is corrupt ({exc})") from exc
        raise
    finally:
        raw.close()
    return files


# --- write ------------------------------------------------------------------------------------


def open_output_dir(path: os.PathLike[str] | str) -> int:
    """Open (creating it 0700 if absent) a directory the caller may safely write bundles into.

    Refused (ValueError, with the reason): a symbolic link, not a directory, owned by another
    user, or writable by everyone without the sticky bit."""
    with suppress(FileExistsError):
        os.makedirs(path, mode=0o700)
    try:
        fd = os.open(path, _DIR)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR) and os.path.islink(path):
            raise ValueError("it is a symbolic link; give the directory itself") from exc
        if exc.errno == errno.ENOTDIR:
            raise ValueError("not a directory") from exc
        raise
    st = os.fstat(fd)
    euid = os.geteuid()
    reason = ""
    if st.st_uid != euid:
        reason = f"it is owned by uid {st.st_uid}, not by you (uid {euid})"
    elif st.st_mode & stat.S_IWOTH and not st.st_mode & stat.S_ISVTX:
        reason = "anyone can write to it (mode o+w without the sticky bit)"
    if reason:
        os.close(fd)
        raise ValueError(reason)
    return fd


def make_private_dir(dir_fd: int, name: str) -> int:
    """Create directory `name` (0700) in `dir_fd` and open it; fails if anything is there."""
    os.mkdir(name, 0o700, dir_fd=dir_fd)
    fd = open_subdir(dir_fd, name)
    os.fchmod(fd, 0o700)  # whatever the umask
    return fd


def write_private(dir_fd: int, name: str, data: bytes) -> None:
    """Create file `name` (0600) in `dir_fd` with `data`; fails if anything is there."""
    fd = os.open(name, _CREATE, 0o600, dir_fd=dir_fd)
    with os.fdopen(fd, "wb") as fh:
        os.fchmod(fd, 0o600)
        fh.write(data)


def write_tar(dir_fd: int, name: str, top: str, files: dict[str, bytes]) -> None:
    """Create `name` (0600), a .tar.gz of `files` under directory `top` (0700, files 0600)."""
    fd = os.open(name, _CREATE, 0o600, dir_fd=dir_fd)
    now = time.time()
    with os.fdopen(fd, "wb") as fh:
        os.fchmod(fd, 0o600)
        with tarfile.open(fileobj=fh, mode="w:gz") as tar:
            info = tarfile.TarInfo(top)
            info.type, info.mode, info.mtime = tarfile.DIRTYPE, 0o700, now
            tar.addfile(info)
            for fname, data in files.items():
                info = tarfile.TarInfo(f"{top}/{fname}")
                info.size, info.mode, info.mtime = len(data), 0o600, now
                tar.addfile(info, io.BytesIO(data))


def place_dir(src_fd: int, name: str, dst_fd: int, dst: str) -> None:
    """Rename directory `name` into `dst`: never replaces a file, a link or a non-empty dir."""
    try:
        os.rename(name, dst, src_dir_fd=src_fd, dst_dir_fd=dst_fd)
    except OSError as exc:
        if exc.errno in (errno.ENOTEMPTY, errno.EEXIST, errno.ENOTDIR, errno.EISDIR):
            raise FileExistsError(errno.EEXIST, "something else appeared there", dst) from exc
        raise


def place_file(src_fd: int, name: str, dst_fd: int, dst: str) -> None:
    """Move file `name` to `dst` without replacing anything there (a hard link, then unlink)."""
    try:
        os.link(name, dst, src_dir_fd=src_fd, dst_dir_fd=dst_fd, follow_symlinks=False)
    except OSError as exc:
        if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EMLINK):
            raise
        if exists_at(dst_fd, dst):  # a filesystem without hard links: check, then rename
            raise FileExistsError(errno.EEXIST, "something else is there", dst) from exc
        os.rename(name, dst, src_dir_fd=src_fd, dst_dir_fd=dst_fd)
        return
    os.unlink(name, dir_fd=src_fd)


def exists_at(dir_fd: int, name: str) -> bool:
    try:
        os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return False
    return True


def owned_at(dir_fd: int, name: str) -> bool:
    """`name` in `dir_fd` is there, not a link, and owned by the caller."""
    try:
        st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return False
    return not stat.S_ISLNK(st.st_mode) and st.st_uid == os.geteuid()
