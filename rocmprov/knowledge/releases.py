"""The ROCm release table: every release of both streams, as the playbooks read it.

The table is one data file shipped with the playbooks (playbooks/data/rocm_releases.yml, every
row with its source URL), so that plain `ansible-playbook` and rocmprov read the same rows. The
choice of a row for a host is the playbooks' filter plugin (playbooks/filter_plugins/
rocmprov_release.py), imported here from the same file: apply and audit cannot disagree.
"""

from __future__ import annotations

import functools
import importlib.util
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from rocmprov.parse.datafile import load_yaml
from rocmprov.paths import playbooks_dir

SCHEMA = "rocmprov.releases/1"
MAX_TABLE_BYTES = 4 * 1024 * 1024


def table_path() -> Path:
    return playbooks_dir() / "data" / "rocm_releases.yml"


@functools.cache
def _resolver() -> ModuleType:
    path = playbooks_dir() / "filter_plugins" / "rocmprov_release.py"
    spec = importlib.util.spec_from_file_location("rocmprov_release_filter", path)
    if spec is None or spec.loader is None:  # pragma: no cover - the file ships with the package
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@functools.cache
def load_table(path: Path | None = None) -> dict[str, Any]:
    path = path or table_path()
    with path.open("rb") as f:
        data = f.read(MAX_TABLE_BYTES + 1)
    if len(data) > MAX_TABLE_BYTES:
        raise ValueError(f"{path}: larger than {MAX_TABLE_BYTES} bytes")
    table = load_yaml(data)
    if not isinstance(table, dict) or table.get("schema") != SCHEMA:
        raise ValueError(f"{path}: not a {SCHEMA} table")
    return table


@dataclass(frozen=True)
class Release:
    """One row of the table, with the fields the audit uses."""

    version: str
    stream: str
    status: str
    packages: tuple[str, ...]
    prefix: str
    torch_index: str
    torch_versions: tuple[str, ...]
    source: str

    @property
    def minor(self) -> str:
        return ".".join(self.version.split(".")[:2])


def _release(row: dict[str, Any]) -> Release:
    torch = row.get("torch") or {}
    return Release(
        version=str(row["version"]),
        stream=str(row.get("stream", "")),
        status=str(row.get("status", "production")),
        packages=tuple(str(p) for p in row.get("packages") or ()),
        prefix=str(row.get("prefix") or ""),
        torch_index=str(torch.get("index") or ""),
        torch_versions=tuple(str(v) for v in torch.get("versions") or ()),
        source=str(row.get("source", "")),
    )


def all_releases() -> list[Release]:
    return list(_all_releases())


@functools.cache
def _all_releases() -> tuple[Release, ...]:
    """Built once: the fleet audit asks for every row twice per host (torch checks)."""
    return tuple(_release(r) for r in _resolver().releases(load_table()))


def find(wanted: object) -> Release | None:
    """The row for "7.2.1", "7.2" (its newest point), "" (the default) or "latest"."""
    row = _resolver().find_release(load_table(), wanted)
    return _release(row) if row else None


def default_version() -> str:
    return str(load_table().get("default") or "")


def streams() -> dict[str, dict[str, Any]]:
    return dict(load_table().get("streams") or {})


def resolve(
    wanted: object, facts: dict[str, Any] | None = None, mirrors: dict[str, str] | None = None
) -> dict[str, Any]:
    """What the playbooks install for `wanted` on a host with these Ansible-style facts."""
    return dict(_resolver().resolve(load_table(), wanted, facts, mirrors))


def version_key(version: str) -> tuple[int, ...]:
    return tuple(_resolver()._version_key(version))
