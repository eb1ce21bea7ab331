"""The quick profile's kernel-log state: read dmesg only since the last run, and keep the GPU
lines it found for the rest of the boot (sticky kernel findings).

Each consumer keeps its own state (`dmesg-cursor.<name>`: the health gate `health`, the metrics
timer `metrics`, the Ansible collection `collection`, a plain `audit --profile quick` `audit`),
so one consumer never hides a kernel error from another. A state holds the boot, the last log
line the previous run saw, and the lines of this boot in which the kernel reported a GPU event
(a RAS error, a ring timeout, a reset...): the checks read those kept lines and the lines after
the cursor, so a RAS error seen once keeps its finding, run after run, until the next boot or
until an admin clears it (`rocmprov health --clear-kernel-findings`).

Files: in /var/lib/rocmprov as root, else $XDG_STATE_HOME/rocmprov (~/.local/state/rocmprov);
ROCMPROV_STATE_DIR overrides both. The directory is 0700 and the file 0600, both created and
opened without following symbolic links; the file is replaced atomically (temp file + fsync +
rename). A missing or unreadable state, another boot, or a cursor line that has left the ring
buffer means the whole log is read (first run = whole log).
"""

from __future__ import annotations

import json
import os
import re
import stat
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from rocmprov.store.atomic import DIR_FLAGS, open_private_dir, replace_in_dir

CURSOR_PREFIX = "dmesg-cursor."
CONSUMERS = ("health", "metrics", "collection", "audit")
BOOT_ID = Path("/proc/sys/kernel/random/boot_id")
_NAME = re.compile(r"[a-z][a-z0-9-]{0,31}")
_MAX_STATE = 512 * 1024
MAX_LINE = 1024  # one kept line (kernel lines are shorter)
PER_TAG = 8  # kept lines per kind of event: the first ones of the boot
MAX_KEPT = 128

# (tag, line) for each GPU event in a piece of kernel log (parse.dmesg, passed in by the caller)
Events = Callable[[str], Iterable[tuple[str, str]]]


@dataclass(frozen=True)
class Cursor:
    boot_id: str = ""
    last: str = ""  # the last non-empty line of the log at the previous run
    kept: tuple[str, ...] = ()  # this boot's lines with a GPU event, until cleared


def cursor_file(consumer: str) -> str:
    if not _NAME.fullmatch(consumer):
        raise ValueError(f"not a kernel-log state name: {consumer!r}")
    return CURSOR_PREFIX + consumer


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


def cursor_after(text: str, boot_id: str, kept: tuple[str, ...] = ()) -> Cursor:
    last = next((ln for ln in reversed(text.splitlines()) if ln.strip()), "")
    return Cursor(boot_id, last[:4096], kept)


def advance(
    text: str, cursor: Cursor | None, boot_id: str, events: Events
) -> tuple[str, Cursor, int]:
    """Pure: (what the checks read, the cursor to save, how many kept lines were carried over).

    What the checks read: the GPU-event lines kept earlier in this boot (not those the log
    still shows after the cursor), then the log after the cursor. The new cursor points at the
    end of `text` and keeps, besides the old kept lines, the first PER_TAG lines of each kind
    of event found after the old cursor (MAX_KEPT in all, MAX_LINE characters each)."""
    same_boot = bool(boot_id) and cursor is not None and cursor.boot_id == boot_id
    old = cursor.kept if same_boot and cursor is not None else ()
    recent = lines_since(text, cursor, boot_id)
    present = set(recent.splitlines())
    carried = [ln for ln in old if ln not in present]
    counts: dict[str, int] = {}
    for line in old:
        for tag, _ in events(line):
            counts[tag] = counts.get(tag, 0) + 1
    kept = list(old)
    seen = set(old)
    for tag, line in events(recent):
        line = line[:MAX_LINE]
        if line in seen or counts.get(tag, 0) >= PER_TAG or len(kept) >= MAX_KEPT:
            continue
        counts[tag] = counts.get(tag, 0) + 1
        seen.add(line)
        kept.append(line)
    shown = "".join(f"{ln}\n" for ln in carried) + recent
    return shown, cursor_after(text, boot_id, tuple(kept)), len(carried)


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


def load_cursor(consumer: str, path: Path | None = None) -> Cursor | None:
    """The consumer's saved state; None when there is none or it cannot be trusted (then:
    the whole log, nothing kept)."""
    name = cursor_file(consumer)
    path = path or state_dir()
    try:
        dfd = os.open(path, DIR_FLAGS)
    except OSError:
        return None
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dfd)
        with os.fdopen(fd, "rb") as fh:
            if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
                return None
            data = json.loads(fh.read(_MAX_STATE + 1).decode("utf-8"))
        kept = data.get("kept") or []
        if not isinstance(kept, list):
            return None
        return Cursor(
            str(data.get("boot_id", "")),
            str(data.get("last", ""))[:4096],
            tuple(str(ln)[:MAX_LINE] for ln in kept[:MAX_KEPT]),
        )
    except (OSError, ValueError, AttributeError):
        return None
    finally:
        os.close(dfd)


def save_cursor(consumer: str, cursor: Cursor, path: Path | None = None) -> None:
    """Replace the consumer's state atomically (0600 temp file in the same directory, fsync,
    rename)."""
    name = cursor_file(consumer)
    dfd = open_private_dir(path or state_dir())
    data = json.dumps({"boot_id": cursor.boot_id, "last": cursor.last, "kept": cursor.kept})
    try:
        replace_in_dir(dfd, name, data.encode(), 0o600)
    finally:
        os.close(dfd)


def saved_consumers(path: Path | None = None) -> tuple[str, ...]:
    """The consumers that have a state file in the state directory (and the known ones)."""
    names = set(CONSUMERS)
    try:
        for entry in (path or state_dir()).iterdir():
            rest = entry.name[len(CURSOR_PREFIX) :]
            if entry.name.startswith(CURSOR_PREFIX) and _NAME.fullmatch(rest):
                names.add(rest)
    except OSError:
        pass
    return tuple(sorted(names))
