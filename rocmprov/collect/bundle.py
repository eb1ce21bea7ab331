"""Support bundles: one directory (or .tar.gz) per host, `manifest.json` + `<probe-id>.out`.

A bundle on disk and a live collection are the same object (`Bundle`), so `audit --bundle`
analyses what a user sent exactly as a live host. A bundle read from disk is hostile input:
reads are bounded and refuse anything but regular files (see bundle_io for the limits); a bad
bundle is one InputError naming the path and what is wrong. Writes go to a private staging
directory beside the target and are renamed into place only when complete.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import os
import re
import secrets
import shutil
import stat
from collections.abc import Callable, Mapping
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rocmprov import __version__
from rocmprov.collect.bundle_io import (
    Budget,
    Unreadable,
    exists_at,
    find_bundle_dir,
    make_private_dir,
    open_input,
    open_output_dir,
    owned_at,
    place_dir,
    place_file,
    read_at,
    read_tar,
    write_private,
    write_tar,
)
from rocmprov.collect.scrub import scrub
from rocmprov.exitcodes import InputError, UsageError

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

MANIFEST = "manifest.json"
_PROBE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")
_NAME_MAX = 64


def bundle_name(host: str) -> str:
    """The on-disk name of a host's bundle: the host name where it is safe as it is, otherwise
    the sanitised name + 8 hex digits of the name's SHA-256, so no two hosts share a name."""
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", host).strip(".-")[:_NAME_MAX]
    if safe and safe == host:
        return safe
    digest = hashlib.sha256(host.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return f"{safe or 'host'}-{digest}"


@dataclass(frozen=True)
class Written:
    host: str
    path: Path  # the bundle directory
    tar: Path | None = None  # <name>.tar.gz beside it, when asked for


class BundleWriter:
    """Writes bundles into one output directory, checked before anything is collected.

    The directory must be the caller's (not a link, not another user's, not o+w without the
    sticky bit) and writable: a private staging directory `.rocmprov-XXXX` is made in it at
    once. Each bundle is written there in full (files 0600 O_EXCL|O_NOFOLLOW, directories
    0700), then renamed into place; a name already used by another host, or by something that
    is not this caller's bundle of the same host, is never overwritten (a new name is taken).
    """

    def __init__(self, directory: Path, *, tar: bool = False) -> None:
        self.directory = directory
        self.tar = tar
        self._taken: set[str] = set()
        self._count = 0
        try:
            self._fd = open_output_dir(directory)
        except ValueError as exc:
            raise UsageError(f"refusing output directory {directory}: {exc}") from exc
        except OSError as exc:
            raise UsageError(f"cannot use output directory {directory}: {_why(exc)}") from exc
        self._stage_name = f".rocmprov-{secrets.token_hex(6)}"
        try:
            self._stage = make_private_dir(self._fd, self._stage_name)
        except OSError as exc:
            os.close(self._fd)
            raise UsageError(f"cannot write to output directory {directory}: {_why(exc)}") from exc

    def __enter__(self) -> BundleWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Remove the staging directory (and whatever an interrupted write left in it)."""
        if self._stage < 0:
            return
        os.close(self._stage)
        self._stage = -1
        try:
            with suppress(OSError):  # best effort: a leftover .rocmprov-* is never read as a bundle
                shutil.rmtree(self._stage_name, dir_fd=self._fd)
        finally:
            os.close(self._fd)

    def write(self, bundle: Bundle) -> Written:
        files = render(bundle)
        name = self._name_for(bundle.host)
        self._count += 1
        work = f"b{self._count}"
        wfd = make_private_dir(self._stage, work)
        try:
            for fname, data in files.items():
                write_private(wfd, fname, data)
        finally:
            os.close(wfd)
        if self.tar:
            write_tar(self._stage, f"{work}.tar.gz", name, files)
        old = exists_at(self._fd, name)  # this caller's earlier bundle of this host: replaced
        if old:
            os.rename(name, f"{work}.old", src_dir_fd=self._fd, dst_dir_fd=self._stage)
        try:
            place_dir(self._stage, work, self._fd, name)
        except OSError:
            if old:  # put the earlier bundle back rather than lose it
                with suppress(OSError):
                    os.rename(f"{work}.old", name, src_dir_fd=self._stage, dst_dir_fd=self._fd)
            raise
        self._taken.add(name)
        tar_path = None
        if self.tar:
            tar_name = f"{name}.tar.gz"
            if exists_at(self._fd, tar_name):  # checked by _name_for: ours, of this host
                os.rename(f"{work}.tar.gz", tar_name, src_dir_fd=self._stage, dst_dir_fd=self._fd)
            else:
                place_file(self._stage, f"{work}.tar.gz", self._fd, tar_name)
            tar_path = self.directory / tar_name
        return Written(bundle.host, self.directory / name, tar_path)

    def _name_for(self, host: str) -> str:
        base = bundle_name(host)
        for n in itertools.count(1):
            name = base if n == 1 else f"{base}-{n}"
            if name in self._taken:
                continue
            if all(self._free_for(entry, host) for entry in (name, f"{name}.tar.gz")):
                return name
        raise AssertionError("unreachable")

    def _free_for(self, entry: str, host: str) -> bool:
        """Nothing is there, or this caller's own bundle of `host` (a re-collect replaces it)."""
        if not exists_at(self._fd, entry):
            return True
        if not owned_at(self._fd, entry):
            return False
        try:
            with open_input(entry, follow=False, dir_fd=self._fd) as (fd, mode):
                if stat.S_ISDIR(mode):
                    data = read_at(fd, MANIFEST, Budget())
                else:
                    data = read_tar(fd, lambda n: n == MANIFEST, Budget()).get(MANIFEST)
            manifest = json.loads(data) if data is not None else None
        except (Unreadable, OSError, ValueError, RecursionError):
            return False
        return isinstance(manifest, dict) and manifest.get("host") == host


def write_bundle(bundle: Bundle, directory: Path, *, tar: bool = False) -> Path:
    """Write `bundle` under directory/<name>/ (see BundleWriter) and return that path."""
    with BundleWriter(directory, tar=tar) as writer:
        return writer.write(bundle).path


def render(bundle: Bundle) -> dict[str, bytes]:
    """The files of a bundle: `<probe-id>.out` (scrubbed stdout) and manifest.json."""
    files: dict[str, bytes] = {}
    probes = []
    for out in bundle.outputs.values():
        if not _PROBE_ID.fullmatch(out.id) or out.id == "manifest":
            raise ValueError(f"probe id {out.id!r} cannot be a file name")
        files[f"{out.id}.out"] = scrub(out.stdout).encode("utf-8", "replace")
        probes.append(
            {
                "id": out.id,
                "command": scrub(out.command),
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
    files[MANIFEST] = (json.dumps(manifest, indent=2) + "\n").encode("utf-8", "replace")
    return files


def _why(exc: OSError) -> str:
    return exc.strerror or str(exc)


# --- read -------------------------------------------------------------------------------------


class _Bad(Exception):
    """What is wrong with a manifest, in words."""


def read_bundle(path: Path) -> Bundle:
    """Read a bundle directory or .tar.gz. Missing path: UsageError; not a bundle: InputError.

    Bounded (bundle_io's MAX_FILE_BYTES, MAX_TOTAL_BYTES, MAX_ENTRIES, MAX_ARCHIVE_BYTES); only
    regular files are read and nothing inside the bundle is followed through a link."""
    if not path.exists():
        raise UsageError(f"no such bundle: {path}")
    budget = Budget()
    try:
        with open_input(path) as (fd, mode):
            if stat.S_ISDIR(mode):
                return _read_dir(fd, str(path), budget)
            files = read_tar(fd, lambda n: n == MANIFEST or n.endswith(".out"), budget)
            return _from_manifest(files.get(MANIFEST), files.get, str(path))
    except Unreadable as exc:
        raise InputError(f"cannot read bundle {path}: {exc}") from exc
    except OSError as exc:
        raise InputError(f"cannot read bundle {path}: {_why(exc)}") from exc


def _read_dir(fd: int, where: str, budget: Budget) -> Bundle:
    sub = None if exists_at(fd, MANIFEST) else find_bundle_dir(fd, MANIFEST)
    bfd, prefix = (fd, "") if sub is None else (sub[1], f"{sub[0]}/")
    try:
        manifest = read_at(bfd, MANIFEST, budget, prefix)
        return _from_manifest(manifest, lambda n: read_at(bfd, n, budget, prefix), where)
    finally:
        if sub is not None:
            os.close(sub[1])


def _from_manifest(data: bytes | None, load: Callable[[str], bytes | None], where: str) -> Bundle:
    if data is None:
        raise InputError(f"not a rocmprov bundle (no manifest.json): {where}")
    try:
        manifest = json.loads(data)
    except RecursionError as exc:
        raise InputError(f"bundle manifest is not JSON: {where}: nested too deeply") from exc
    except ValueError as exc:
        msg = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)
        raise InputError(f"bundle manifest is not JSON: {where}: {msg}") from exc
    if not isinstance(manifest, dict) or manifest.get("schema") != SCHEMA:
        found = manifest.get("schema") if isinstance(manifest, dict) else type(manifest).__name__
        raise InputError(f"bundle schema {found!r} is not {SCHEMA!r}: {where}")
    try:
        host = _field(manifest, "host", str, "unknown") or "unknown"
        entries = _field(manifest, "probes", list, [])
        outputs: dict[str, ProbeOutput] = {}
        for index, entry in enumerate(entries):
            out = _probe(entry, index, load)
            if out is not None:
                if out.id in outputs:
                    raise _Bad(f"probe {out.id!r} is listed twice")
                outputs[out.id] = out
    except _Bad as exc:
        raise InputError(f"bad bundle manifest in {where}: {exc}") from exc
    meta = {k: v for k, v in manifest.items() if k != "probes"}
    return Bundle(host=host, outputs=outputs, meta=meta)


def _probe(entry: object, index: int, load: Callable[[str], bytes | None]) -> ProbeOutput | None:
    if not isinstance(entry, dict):
        raise _Bad(f"probes[{index}] is {_json(entry)}, not an object")
    pid = entry.get("id")
    if not isinstance(pid, str) or not _PROBE_ID.fullmatch(pid):
        raise _Bad(f"probes[{index}] has id {_json(pid)}, not a probe id")
    try:
        rc = entry.get("rc")
        if not isinstance(rc, int) or isinstance(rc, bool) or not -(2**31) <= rc < 2**32:
            raise _Bad(f'"rc" is {_json(rc)}, not an exit status')
        duration = _field(entry, "duration", (int, float), 0.0)
        if isinstance(duration, bool) or not math.isfinite(duration) or duration < 0:
            raise _Bad(f'"duration" is {_json(duration)}, not a number of seconds')
        text = {k: _field(entry, k, str, "") for k in ("command", "stderr", "collected_at")}
    except _Bad as exc:
        raise _Bad(f"probe {pid!r}: {exc}") from exc
    stdout = load(f"{pid}.out")
    if stdout is None:
        return None  # listed but absent: analysed as far as it goes, the rest is UNKNOWN
    return ProbeOutput(
        id=pid,
        command=text["command"],
        rc=rc,
        stdout=stdout.decode("utf-8", "replace"),
        stderr=text["stderr"],
        duration=float(duration),
        collected_at=text["collected_at"],
    )


def _field(obj: Mapping[str, Any], key: str, kind: type | tuple[type, ...], default: Any) -> Any:
    value = obj.get(key, default)
    if value is None:
        return default
    if not isinstance(value, kind):
        words = {str: "a string", list: "a list"}.get(kind, "a number")  # type: ignore[call-overload]
        raise _Bad(f"{json.dumps(key)} is {_json(value)}, not {words}")
    return value


def _json(value: object) -> str:
    """A value as the manifest has it (JSON), cut short for a one-line message."""
    try:
        text = json.dumps(value)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
