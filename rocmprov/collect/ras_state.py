"""The ECC counts of the last run, per GPU serial (checks/health_trend.py compares with them).

One JSON file, `ras-counts`, in the kernel-log state's directory (collect/cursor.py: 0700,
/var/lib/rocmprov as root, else $XDG_STATE_HOME/rocmprov; ROCMPROV_STATE_DIR overrides), 0600,
opened without following links and replaced atomically. Bounded: 512 KiB, 4096 GPUs; a
missing, foreign or unreadable file is "no previous run" (no trend finding, never an error).
"""

from __future__ import annotations

import json
import os
import re
import stat
from collections.abc import Mapping
from pathlib import Path

from rocmprov.collect.cursor import state_dir
from rocmprov.store.atomic import DIR_FLAGS, open_private_dir, replace_in_dir

NAME = "ras-counts"
_MAX = 512 * 1024
_MAX_GPUS = 4096
_SERIAL = re.compile(r"[A-Za-z0-9_.:-]{1,64}")
_KEYS = ("ce", "ue", "de")


def _clean(data: object) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    if not isinstance(data, Mapping):
        return out
    for serial, counts in list(data.items())[:_MAX_GPUS]:
        if not (isinstance(serial, str) and _SERIAL.fullmatch(serial)):
            continue
        if not isinstance(counts, Mapping):
            continue
        kept = {
            k: int(v) for k in _KEYS
            if isinstance(v := counts.get(k), int) and not isinstance(v, bool) and 0 <= v < 2**63
        }  # fmt: skip
        if kept and all(k in kept for k in counts if k in _KEYS):  # a bad count: drop the GPU
            out[serial] = kept
    return out


def load_ras_counts(path: Path | None = None) -> dict[str, dict[str, int]]:
    try:
        dfd = os.open(path or state_dir(), DIR_FLAGS)
    except OSError:
        return {}
    try:
        fd = os.open(NAME, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dfd)
        with os.fdopen(fd, "rb") as fh:
            st = os.fstat(fh.fileno())
            if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid():
                return {}
            raw = fh.read(_MAX + 1)
        return _clean(json.loads(raw.decode("utf-8"))) if len(raw) <= _MAX else {}
    except (OSError, ValueError):
        return {}
    finally:
        os.close(dfd)


def save_ras_counts(
    counts: Mapping[str, Mapping[str, int]],
    before: Mapping[str, Mapping[str, int]] | None = None,
    path: Path | None = None,
) -> None:
    """Write this run's counts over the previous ones (GPUs not seen this run, and counts not
    reported this run, are kept)."""
    merged = _clean(before or {})
    for serial, now in _clean(counts).items():  # a count not reported this run keeps its value
        merged[serial] = {**merged.get(serial, {}), **now}
    dfd = open_private_dir(path or state_dir())
    try:
        replace_in_dir(dfd, NAME, json.dumps(merged, sort_keys=True).encode(), 0o600)
    finally:
        os.close(dfd)
