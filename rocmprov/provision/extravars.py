"""Extra variables (-e): read and validate them, tell secrets by name, hand them to Ansible.

Reading is bounded: `-e @FILE` must be a regular file of at most 1 MiB of UTF-8 YAML (or JSON)
holding a mapping of variable names, no deeper than MAX_DEPTH and with at most MAX_NODES values
counted through YAML aliases (a "billion laughs" file is refused, not expanded). Any bad input is
a UsageError: one line, exit 64, before anything runs.

Extra vars never go on a command line (another local user's `ps` would show them): they are
written as JSON to a 0600 file in a fresh 0700 directory (under $XDG_RUNTIME_DIR when it is
private, else the system temp dir), ansible-playbook gets `-e @FILE`, and the file and its
directory are removed as soon as ansible-playbook has loaded them and again, whatever happens,
when the run ends.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import stat
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from rocmprov.exitcodes import UsageError
from rocmprov.inventory.secrets import is_secret_name

MAX_BYTES = 1024 * 1024
MAX_DEPTH = 64
MAX_NODES = 100_000
VARS_DIR_PREFIX = "rocmprov-ev-"
VARS_FILE = "extravars.json"

_VAR_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


# ------------------------------------------------------------------ parsing -e


def parse_extravars(items: Sequence[str]) -> dict[str, Any]:
    """-e k=v (true/false become booleans, the rest stays text), -e @file.yml, -e '{json}'."""
    out: dict[str, Any] = {}
    for item in items:
        item = item.strip()
        if item.startswith("@"):
            label = f"-e {item}"
            pairs = load_vars_file(item[1:]).items()
        elif item.startswith(("{", "[")):
            label = "-e JSON"
            try:
                data = json.loads(item)
            except (json.JSONDecodeError, RecursionError) as exc:
                raise UsageError(f"-e {_short(item)}: not a JSON object ({exc})") from exc
            if not isinstance(data, dict):
                raise UsageError(f"-e {_short(item)}: must be a JSON object")
            pairs = data.items()
        else:
            key, sep, value = item.partition("=")
            if not sep:
                raise UsageError(f"-e {_short(item)}: expected KEY=VALUE, @FILE or a JSON object")
            label = "-e"
            low = value.strip().lower()
            pairs = [(key.strip(), True if low == "true" else False if low == "false" else value)]
        for key, value in pairs:
            if not isinstance(key, str) or not _VAR_NAME.match(key):
                raise UsageError(f"{label}: {_short(repr(key))} is not a valid variable name")
            out[key] = value
    _check_size(out, "-e")
    return out


def load_vars_file(name: str) -> dict[str, Any]:
    """A bounded, checked read of one `-e @FILE`; every failure is a one-line UsageError."""
    import yaml

    label = f"-e @{name}"
    path = Path(name).expanduser()
    try:
        # O_NONBLOCK: a FIFO must not hang the open; fstat then refuses it.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        raise UsageError(f"{label}: {exc.strerror or exc}") from exc
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise UsageError(f"{label}: is a directory, not a file of variables")
        if not stat.S_ISREG(st.st_mode):
            raise UsageError(f"{label}: not a regular file")
        if st.st_size > MAX_BYTES:
            raise UsageError(f"{label}: larger than {MAX_BYTES // 1024} KiB ({st.st_size} bytes)")
        chunks: list[bytes] = []
        size = 0
        while size <= MAX_BYTES:
            chunk = os.read(fd, MAX_BYTES + 1 - size)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        raw = b"".join(chunks)
    except OSError as exc:
        raise UsageError(f"{label}: {exc.strerror or exc}") from exc
    finally:
        os.close(fd)
    if len(raw) > MAX_BYTES:
        raise UsageError(f"{label}: larger than {MAX_BYTES // 1024} KiB")
    if b"\0" in raw:
        raise UsageError(f"{label}: a binary file, not YAML")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(f"{label}: not UTF-8 text (byte {exc.start})") from exc
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        first = " ".join(str(exc).split())[:200]
        raise UsageError(f"{label}: not valid YAML ({first})") from exc
    except RecursionError as exc:
        raise UsageError(f"{label}: nested deeper than {MAX_DEPTH} levels") from exc
    if not isinstance(data, dict):
        kind = "empty" if data is None else f"a {type(data).__name__}"
        raise UsageError(f"{label}: must hold a mapping of variables (it is {kind})")
    _check_size(data, label)
    return data


def _check_size(data: Any, label: str) -> None:
    """Refuse values too deep or too many (counting through YAML aliases, which share nodes)."""
    count = 0
    stack: list[tuple[Any, int]] = [(data, 0)]
    while stack:
        node, depth = stack.pop()
        count += 1
        if count > MAX_NODES:
            raise UsageError(f"{label}: more than {MAX_NODES} values (YAML aliases included)")
        if depth > MAX_DEPTH:
            raise UsageError(f"{label}: nested deeper than {MAX_DEPTH} levels")
        if isinstance(node, Mapping):
            stack += [(v, depth + 1) for v in node.values()]
        elif isinstance(node, list | tuple):
            stack += [(v, depth + 1) for v in node]


def _short(text: str, limit: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def inline_secret_names(items: Sequence[str]) -> list[str]:
    """Secret-named variables given on rocmprov's own command line (visible to `ps`)."""
    names: list[str] = []
    for item in items:
        item = item.strip()
        if item.startswith("@"):
            continue
        if item.startswith("{"):
            with contextlib.suppress(ValueError, RecursionError):
                data = json.loads(item)
                if isinstance(data, dict):
                    names += [k for k in data if is_secret_name(k)]
            continue
        key = item.partition("=")[0].strip()
        if is_secret_name(key):
            names.append(key)
    return names


# ------------------------------------------------------------------ secret values


def secret_values(data: Mapping[str, Any], *, minimum: int = 3) -> list[str]:
    """Every value of a secret-named variable, at any depth (lists and mappings included),
    longest first; values shorter than `minimum` and booleans are not searched for."""
    found: set[str] = set()

    def leaves(node: Any) -> None:
        if isinstance(node, Mapping):
            for v in node.values():
                leaves(v)
        elif isinstance(node, list | tuple):
            for v in node:
                leaves(v)
        elif isinstance(node, str | int | float) and not isinstance(node, bool):
            text = str(node)
            if len(text) >= minimum and text.lower() not in _NOT_SECRETS:
                found.add(text)

    def walk(node: Any) -> None:
        if isinstance(node, Mapping):
            for k, v in node.items():
                if is_secret_name(k):
                    leaves(v)
                else:
                    walk(v)
        elif isinstance(node, list | tuple):
            for v in node:
                walk(v)

    walk(data)
    return sorted(found, key=lambda s: (-len(s), s))


_NOT_SECRETS = frozenset({"true", "false", "none", "null", "yes", "no"})


# ------------------------------------------------------------------ the private file


def _runtime_dir() -> str | None:
    """$XDG_RUNTIME_DIR when it is a real directory of ours that no one else can enter."""
    path = os.environ.get("XDG_RUNTIME_DIR")
    if not path:
        return None
    try:
        st = os.lstat(path)
    except OSError:
        return None
    if stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid() and not st.st_mode & 0o077:
        return path
    return None


def sweep_stale(base: str | None = None) -> None:
    """Remove private dirs left by an apply that was killed (SIGKILL, power loss)."""
    root = Path(base or _runtime_dir() or tempfile.gettempdir())
    with contextlib.suppress(OSError):
        for d in root.glob(f"{VARS_DIR_PREFIX}*-*"):
            pid = d.name[len(VARS_DIR_PREFIX) :].split("-", 1)[0]
            try:
                st = d.lstat()
            except OSError:
                continue
            if not pid.isdigit() or not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid():
                continue
            try:
                os.kill(int(pid), 0)
                continue  # that apply is still running
            except ProcessLookupError:
                shutil.rmtree(d, ignore_errors=True)
            except PermissionError:
                continue


@contextmanager
def private_vars_file(data: Mapping[str, Any], base: str | None = None) -> Iterator[Path]:
    """A 0600 JSON file of `data` in a fresh 0700 directory; both removed on leaving, always.

    The directory is made by mkdtemp (an exclusive mkdir, mode 0700); the file is created
    inside it through the directory's descriptor with O_CREAT|O_EXCL|O_NOFOLLOW, mode 0600.
    """
    text = json.dumps(dict(data), default=str)
    d = Path(
        tempfile.mkdtemp(prefix=f"{VARS_DIR_PREFIX}{os.getpid()}-", dir=base or _runtime_dir())
    )
    try:
        dfd = os.open(d, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
        try:
            st = os.fstat(dfd)
            if st.st_uid != os.getuid() or st.st_mode & 0o077:
                raise OSError(f"{d} is not a private directory")
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
            fd = os.open(VARS_FILE, flags, 0o600, dir_fd=dfd)
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                os.fchmod(f.fileno(), 0o600)
                f.write(text)
        finally:
            os.close(dfd)
        yield d / VARS_FILE
    finally:
        remove_vars_file(d / VARS_FILE)


def remove_vars_file(path: Path) -> None:
    """Remove the file and its private directory (safe to call more than once)."""
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
    shutil.rmtree(path.parent, ignore_errors=True)
