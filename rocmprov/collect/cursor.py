"""The quick profile's kernel-log cursor: read dmesg only since the last run.

State: one small JSON file, `dmesg-cursor` ({"boot_id", "last"}: the boot and the last log line
the previous run saw), in /var/lib/rocmprov as root, else $XDG_STATE_HOME/rocmprov
(~/.local/state/rocmprov); ROCMPROV_STATE_DIR overrides both. The directory is 0700 and the
file 0600, both created and opened without following symbolic links; the file is replaced
atomically (temp file + fsync + rename). A missing or unreadable cursor, another boot, or a
cursor line that has left the ring buffer means the whole log is read (first run = whole log).
"""

from __future__ import annotations

import json
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from rocmprov.collect.atomic import DIR_FLAGS, open_private_dir, replace_in_dir

CURSOR_FILE = "dmesg-cursor"
BOOT_ID = Path("/proc/sys/kernel/random/boot_id")
_MAX_CURSOR = 16 * 1024


@dataclass(frozen=True)
class Cursor:
    boot_id: str = ""
    last: str = ""  # the last non-empty line of the log at the previous run


def lines_since(text: str, cursor: Cursor | None, boot_id: str) -> str:
    """Pure: the part of `text` after the cursor's line; all of it when the cursor is absent,
    from another boot, or no longer in the log (the ring buffer dropped it, so every line
    still there is newer)."""
    if cursor is None or not cursor.last or not boot_id or cursor.boot_id != boot_id:
        return text
    lines = text.splitlines(keepends=True)
    for i in range(len(lines) - 1, -1, -1):
        if lines[i].rstrip("\r\n") == cursor.last:
            return "".join(lines[i + 1 :])
    return text


def cursor_after(text: str, boot_id: str) -> Cursor:
    last = next((ln for ln in reversed(text.splitlines()) if ln.strip()), "")
    return Cursor(boot_id, last[:4096])


def state_dir() -> Path:
    override = os.environ.get("ROCMPROV_STATE_DIR")
    if override:
        return Path(override)
    if os.geteuid() == 0:
        return Path("/var/lib/rocmprov")
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "rocmprov"


def current_boot_id() -> str:
    try:
        return BOOT_ID.read_text(encoding="ascii", errors="replace").strip()
    except OSError:
        return ""


def load_cursor(path: Path | None = None) -> Cursor | None:
    """The saved cursor; None when there is none or it cannot be trusted (then: whole log)."""
    path = path or state_dir()
    try:
        dfd = os.open(path, DIR_FLAGS)
    except OSError:
        return None
    try:
        fd = os.open(CURSOR_FILE, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dfd)
        with os.fdopen(fd, "rb") as fh:
            if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
                return None
            data = json.loads(fh.read(_MAX_CURSOR).decode("utf-8"))
        return Cursor(str(data.get("boot_id", "")), str(data.get("last", "")))
    except (OSError, ValueError, AttributeError):
        return None
    finally:
        os.close(dfd)


def save_cursor(cursor: Cursor, path: Path | None = None) -> None:
    """Replace the cursor file atomically (0600 temp file in the same directory, fsync,
    rename)."""
    dfd = open_private_dir(path or state_dir())
    data = json.dumps({"boot_id": cursor.boot_id, "last": cursor.last}).encode()
    try:
        replace_in_dir(dfd, CURSOR_FILE, data, 0o600)
    finally:
        os.close(dfd)
