"""Support bundles: one directory (or .tar.gz) per host, `manifest.json` + `<probe-id>.out`.

A bundle on disk and a live collection are the same object (`Bundle`), so `audit --bundle`
analyses what a user sent exactly as a live host.
"""

from __future__ import annotations

import io
import json
import os
import re
import tarfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rocmprov import __version__
from rocmprov.exitcodes import InputError, UsageError
from rocmprov.scrub import scrub

SCHEMA = "rocmprov.bundle/1"
MAX_STDERR = 4096


@dataclass(frozen=True)
class ProbeOutput:
    """One probe's run. status: ok | missing (tool/file absent) | timeout | failed."""

    id: str
    command: str
    rc: int
    stdout: str
    stderr: str = ""
    duration: float = 0.0
    collected_at: str = ""

    @property
    def status(self) -> str:
        if self.rc == 0:
            return "ok"
        if self.rc == 127:
            return "missing"
        if self.rc == 124:
            return "timeout"
        return "failed"


@dataclass(frozen=True)
class Bundle:
    host: str
    outputs: Mapping[str, ProbeOutput]
    meta: Mapping[str, Any] = field(default_factory=dict)

    def get(self, probe_id: str) -> ProbeOutput | None:
        return self.outputs.get(probe_id)


# --- write ------------------------------------------------------------------------------------


def write_bundle(bundle: Bundle, directory: Path) -> Path:
    """Write `bundle` under directory/<host>/ (files 0600) and return that path."""
    target = directory / _safe_name(bundle.host)
    target.mkdir(parents=True, exist_ok=True)
    probes = []
    for out in bundle.outputs.values():
        _write_private(target / f"{out.id}.out", scrub(out.stdout))
        probes.append(
            {
                "id": out.id,
                "command": out.command,
                "rc": out.rc,
                "status": out.status,
                "duration": round(out.duration, 4),
                "collected_at": out.collected_at,
                "stderr": scrub(out.stderr[-MAX_STDERR:]),
            }
        )
    manifest = {
        "schema": SCHEMA,
        "host": bundle.host,
        "rocmprov_version": __version__,
        **{k: v for k, v in bundle.meta.items() if k not in ("schema", "host", "probes")},
        "probes": probes,
    }
    _write_private(target / "manifest.json", json.dumps(manifest, indent=2) + "\n")
    return target


def _write_private(path: Path, text: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)


def _safe_name(host: str) -> str:
    name = re.sub(r"[^A-Za-z0-9._-]", "_", host).strip(".")
    return name or "host"


# --- read -------------------------------------------------------------------------------------


def read_bundle(path: Path) -> Bundle:
    """Read a bundle directory or .tar.gz. Missing path: UsageError; not a bundle: InputError."""
    if not path.exists():
        raise UsageError(f"no such bundle: {path}")
    try:
        files = _dir_files(path) if path.is_dir() else _tar_files(path)
    except tarfile.TarError as exc:
        raise InputError(f"cannot read bundle {path}: not a directory or a tar archive") from exc
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise InputError(f"cannot read bundle {path}: {reason}") from exc
    return _from_files(files, str(path))


def _dir_files(path: Path) -> dict[str, str]:
    if not (path / "manifest.json").exists():
        subdirs = [p for p in path.iterdir() if (p / "manifest.json").is_file()]
        if len(subdirs) == 1:
            path = subdirs[0]
    return {
        p.name: p.read_text(encoding="utf-8", errors="replace")
        for p in path.iterdir()
        if p.name == "manifest.json" or (p.is_file() and p.suffix == ".out")
    }


def _tar_files(path: Path) -> dict[str, str]:
    files: dict[str, str] = {}
    with tarfile.open(path, "r:*") as tar:
        for member in tar.getmembers():
            name = member.name.rsplit("/", 1)[-1]
            if not member.isfile() or not (name == "manifest.json" or name.endswith(".out")):
                continue
            fh = tar.extractfile(member)
            if fh is not None:
                files[name] = io.TextIOWrapper(fh, encoding="utf-8", errors="replace").read()
    return files


def _from_files(files: Mapping[str, str], where: str) -> Bundle:
    if "manifest.json" not in files:
        raise InputError(f"not a rocmprov bundle (no manifest.json): {where}")
    try:
        manifest = json.loads(files["manifest.json"])
    except json.JSONDecodeError as exc:
        raise InputError(f"bundle manifest is not JSON: {where}: {exc.msg}") from exc
    if not isinstance(manifest, dict) or manifest.get("schema") != SCHEMA:
        found = manifest.get("schema") if isinstance(manifest, dict) else type(manifest).__name__
        raise InputError(f"bundle schema {found!r} is not {SCHEMA!r}: {where}")
    outputs: dict[str, ProbeOutput] = {}
    for entry in manifest.get("probes") or []:
        if not isinstance(entry, dict) or not isinstance(entry.get("id"), str):
            raise InputError(f"bundle manifest has a malformed probe entry: {where}")
        pid = entry["id"]
        stdout = files.get(f"{pid}.out")
        if stdout is None:
            continue  # listed but absent: analysed as far as it goes, the rest is UNKNOWN
        outputs[pid] = ProbeOutput(
            id=pid,
            command=str(entry.get("command", "")),
            rc=_int(entry.get("rc"), 0),
            stdout=stdout,
            stderr=str(entry.get("stderr", "")),
            duration=_float(entry.get("duration")),
            collected_at=str(entry.get("collected_at", "")),
        )
    meta = {k: v for k, v in manifest.items() if k not in ("probes",)}
    return Bundle(host=str(manifest.get("host") or "unknown"), outputs=outputs, meta=meta)


def _int(value: object, default: int) -> int:
    try:
        return int(value)  # type: ignore[call-overload]
    except (TypeError, ValueError):
        return default


def _float(value: object) -> float:
    try:
        return float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return 0.0
