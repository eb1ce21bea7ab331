"""A cache of `ansible-inventory --list` JSON, keyed by the inventory files' mtimes and sizes.

`ansible-inventory` costs 0.5-1.4 s of CPU per call (docs/benchmarks.md, diagnosis 2); the
inventory of a fleet changes far less often than it is audited. An entry is used only while
every file it was built from is unchanged: the inventory file (or every file of an inventory
directory), each file under the `group_vars/` and `host_vars/` beside it, and the Ansible
configuration files that apply (`ANSIBLE_CONFIG`, ./ansible.cfg, ~/.ansible.cfg,
/etc/ansible/ansible.cfg), compared by (mtime_ns, size, inode) and by the set of files itself
(a new host_vars file is a miss; directories behind symbolic links are read, as Ansible
reads them), and a `--limit @file`'s file. The key also holds the inventory's absolute path,
`--limit`, the working directory, the `ANSIBLE_*` environment and the `ansible-inventory`
executable.

Never cached (always re-parsed): a "h1,h2," list, an executable (script) inventory, an
inventory plugin configuration (a YAML file with a top-level `plugin:`; its hosts live
elsewhere), anything that holds Ansible Vault data (the cache would keep it decrypted), and
an answer with a variable named like a secret (ansible_password, ansible_become_pass...).

Storage: `$XDG_CACHE_HOME/rocmprov` (~/.cache/rocmprov), or `ROCMPROV_CACHE_DIR`; the directory
0700 and each file 0600, opened without following symbolic links and replaced atomically. An
unreadable, corrupt or foreign entry is a miss. `ROCMPROV_INVENTORY_CACHE=0` turns it off.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rocmprov.store.atomic import DIR_FLAGS, open_private_dir, replace_in_dir

SCHEMA = "rocmprov.inventory.hosts-cache/1"
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC
_MAX_ENTRY = 256 * 1024 * 1024
_MAX_FILES = 5000  # an inventory tree larger than this is not cached
_VAULT = b"$ANSIBLE_VAULT"
# Never cached: a variable whose name says secret (the project's one rule, provision/extravars:
# *pass*, *secret*, *token*, *credential*, *vault*, *private*, api_key, *_pw, *_key), and any
# string holding a URL with a password (https://user:pass@host) or a private key, whatever
# its variable is called.
_SECRET_VALUE = re.compile(r"://[^/@\s:]*:[^/@\s]*@|-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY")
# names that point at a secret rather than hold one (ansible_ssh_private_key_file): their value
# is still checked like any other
_WHERE = re.compile(r"(?i)[_.-](?:file|path|dir)s?$")

Stamp = list[list[Any]]  # [[path, mtime_ns, size, inode], ...] sorted by path


def enabled() -> bool:
    return os.environ.get("ROCMPROV_INVENTORY_CACHE", "1").strip().lower() not in (
        "0",
        "false",
        "no",
        "off",
    )


def cache_dir() -> Path:
    override = os.environ.get("ROCMPROV_CACHE_DIR")
    if override:
        return Path(override)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "rocmprov"


def cached_inventory(
    source: str, limit: str | None, tool: str, parse: Callable[[], dict[str, Any]]
) -> dict[str, Any]:
    """`parse()` (ansible-inventory's JSON for `source`), from the cache while it is valid."""
    if not enabled() or "," in source:
        return parse()
    found = _lookup(source, limit, tool)
    if found is None:
        return parse()
    key, stamp, data = found
    if data is not None:
        return data
    data = parse()
    if holds_secrets(data):  # kept out of a second, longer-lived copy on disk
        return data
    with contextlib.suppress(OSError, RuntimeError, ValueError):  # unwritable: only slower
        save_entry(key, stamp, data)
    return data


def holds_secrets(data: Any) -> bool:
    """A variable named like a secret (ansible_password, ansible_become_pass, db_pw,
    tls_private_key, *_credential...), or a value with a URL password or a private key,
    anywhere in ansible-inventory's answer (host vars, group vars, nested dicts)."""
    from rocmprov.inventory.secrets import is_secret_name

    stack = [data]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            for name, value in item.items():
                if is_secret_name(str(name)) and not _WHERE.search(str(name)):
                    return True
                stack.append(value)
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, str) and _SECRET_VALUE.search(item):
            return True
    return False


def _lookup(
    source: str, limit: str | None, tool: str
) -> tuple[str, Stamp, dict[str, Any] | None] | None:
    """(key, stamp, the cached data or None); None: not cacheable. The cache only saves time:
    whatever stops it (a removed working directory, no home directory) is not the command's
    error."""
    try:
        stamp = inputs_stamp(Path(source).expanduser())
        limit_files = _limit_files_stamp(limit)
        if stamp is None or limit_files is None:
            return None
        stamp += limit_files
        key = entry_key(source, limit, tool)
        return key, stamp, load_entry(key, stamp)
    except (OSError, RuntimeError, ValueError):
        return None


def entry_key(source: str, limit: str | None, tool: str) -> str:
    """What, besides the files, decides ansible-inventory's answer."""
    try:
        tool_st = os.stat(tool)
        tool_id = [tool, tool_st.st_mtime_ns, tool_st.st_size]
    except OSError:
        tool_id = [tool]
    env = sorted((k, v) for k, v in os.environ.items() if k.startswith("ANSIBLE_"))
    parts = [
        SCHEMA,
        str(Path(source).expanduser().resolve()),
        limit or "",
        os.getcwd(),
        tool_id,
        env,
    ]
    return hashlib.sha256(json.dumps(parts).encode()).hexdigest()[:32]


def inputs_stamp(inventory: Path) -> Stamp | None:
    """(path, mtime_ns, size, inode) of every file the answer depends on; None: do not cache."""
    files: list[Path] = []
    try:
        if inventory.is_dir():
            files += _walk(inventory)
        elif inventory.is_file():
            files.append(inventory)
            base = inventory.parent
            for sub in ("group_vars", "host_vars"):
                if (base / sub).is_dir():
                    files += _walk(base / sub)
        else:
            return None
    except _TooMany:
        return None
    stamp: Stamp = []
    for path in sorted(set(files)):
        try:
            st = path.stat()
        except OSError:
            return None
        if _uncacheable(path, inventory):
            return None
        stamp.append([str(path), st.st_mtime_ns, st.st_size, st.st_ino])
    for cfg in _config_files():
        try:
            st = cfg.stat()
        except OSError:
            stamp.append([str(cfg), None, None, None])
            continue
        stamp.append([str(cfg), st.st_mtime_ns, st.st_size, st.st_ino])
    return stamp


class _TooMany(Exception):
    pass


def _limit_files_stamp(limit: str | None) -> Stamp | None:
    """`--limit @file` names its hosts in a file (each ',' or ':' separated pattern may be
    one): the file is an input too. None: a file that cannot be read (Ansible says why)."""
    stamp: Stamp = []
    for part in re.split(r"[,:]", limit or ""):
        if not part.startswith("@"):
            continue
        path = Path(part[1:]).absolute()
        try:
            st = path.stat()
        except OSError:
            return None
        stamp.append([f"limit:{path}", st.st_mtime_ns, st.st_size, st.st_ino])
    return stamp


def _walk(top: Path) -> list[Path]:
    """The files under `top`, through symbolic links to directories as Ansible reads them
    (each real directory once: a link loop ends)."""
    found: list[Path] = []
    seen = {os.path.realpath(top)}
    for root, dirs, names in os.walk(top, followlinks=True):
        keep = []
        for d in sorted(dirs):
            real = os.path.realpath(os.path.join(root, d))
            if not d.startswith(".") and real not in seen:
                seen.add(real)
                keep.append(d)
        dirs[:] = keep
        for name in names:
            if not name.startswith("."):
                found.append(Path(root) / name)
        if len(found) > _MAX_FILES:
            raise _TooMany
    return found


def _uncacheable(path: Path, inventory: Path) -> bool:
    """Vault data anywhere; an inventory plugin config as (or in) the inventory source."""
    try:
        data = path.read_bytes()
    except OSError:
        return True
    if _VAULT in data:
        return True
    in_source = path == inventory or (inventory in path.parents and not _is_vars(path, inventory))
    if in_source and path.suffix in (".yml", ".yaml"):
        return any(line.startswith(b"plugin:") for line in data.splitlines())
    # a script: its answer can change at any time
    return in_source and os.access(path, os.X_OK)


def _is_vars(path: Path, inventory: Path) -> bool:
    rel = path.relative_to(inventory).parts if inventory in path.parents else ()
    return bool(rel) and rel[0] in ("group_vars", "host_vars")


def _config_files() -> list[Path]:
    cfgs = [Path("ansible.cfg"), Path.home() / ".ansible.cfg", Path("/etc/ansible/ansible.cfg")]
    env = os.environ.get("ANSIBLE_CONFIG")
    if env:
        cfgs.insert(0, Path(env).expanduser())
    return [p.absolute() for p in cfgs]


def load_entry(key: str, stamp: Stamp, directory: Path | None = None) -> dict[str, Any] | None:
    """The cached JSON for `key` when its stamp equals `stamp`; None on any doubt."""
    try:
        dfd = os.open(directory or cache_dir(), DIR_FLAGS)
    except OSError:
        return None
    try:
        st = os.fstat(dfd)
        if st.st_uid != os.geteuid() or stat.S_IMODE(st.st_mode) & 0o077:
            return None
        fd = os.open(_name(key), _FILE_FLAGS, dir_fd=dfd)
        with os.fdopen(fd, "rb") as fh:
            fst = os.fstat(fh.fileno())
            if not stat.S_ISREG(fst.st_mode) or fst.st_uid != os.geteuid():
                return None
            if stat.S_IMODE(fst.st_mode) & 0o077 or fst.st_size > _MAX_ENTRY:
                return None
            entry = json.loads(fh.read(_MAX_ENTRY + 1))
    except (OSError, ValueError, RecursionError):
        return None
    finally:
        os.close(dfd)
    if not isinstance(entry, dict) or entry.get("schema") != SCHEMA or entry.get("key") != key:
        return None
    data = entry.get("data")
    if entry.get("stamp") != stamp or not isinstance(data, dict):
        return None
    return data


def save_entry(key: str, stamp: Stamp, data: dict[str, Any], directory: Path | None = None) -> None:
    """Write the entry 0600 into the private (0700) cache directory, atomically."""
    dfd = open_private_dir(directory or cache_dir())
    try:
        body = json.dumps({"schema": SCHEMA, "key": key, "stamp": stamp, "data": data})
        replace_in_dir(dfd, _name(key), body.encode(), 0o600)
    finally:
        os.close(dfd)


def _name(key: str) -> str:
    return f"inventory-{key}.json"
