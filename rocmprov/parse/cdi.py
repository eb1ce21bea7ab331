"""CDI spec files (/etc/cdi, /var/run/cdi) -> CdiSpec, checked against the CDI schema. Pure.

The rules are the schema's and the spec's (rocmprov/data/containers.yaml, `cdi:`): required
cdiVersion, kind and a non-empty devices list; each device a name and containerEdits; each
device node a path; kind `vendor.tld/class`; device names alphanumeric at both ends. Unknown
fields are not errors here (runtimes built on newer CDI libraries know more fields).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

import yaml

MAX_SPEC_BYTES = 262144  # the probe cuts each file there; a longer one is reported as cut

# SPEC.md: kind = DNS-subdomain prefix "/" name (63 chars, alphanumeric ends, - _ . between);
# device name: alphanumeric ends, - _ . between (digits first allowed from 0.5.0).
_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_KIND = re.compile(rf"^{_LABEL}(?:\.{_LABEL})*/[A-Za-z0-9](?:[A-Za-z0-9_.-]{{0,61}}[A-Za-z0-9])?$")
_NAME = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9_.-]*[A-Za-z0-9])?$")
_SEMVER = re.compile(r"^(\d+)\.(\d+)\.(\d+)$")


@dataclass(frozen=True)
class CdiNode:
    path: str
    host_path: str = ""  # empty: the same as path
    type: str = ""
    major: int | None = None  # None: not given (Go writes no "minor" when it is 0)
    minor: int | None = None

    @property
    def on_host(self) -> str:
        return self.host_path or self.path


@dataclass(frozen=True)
class CdiDevice:
    name: str
    nodes: tuple[CdiNode, ...] = ()


@dataclass(frozen=True)
class CdiSpec:
    path: str
    kind: str = ""
    version: str = ""
    devices: tuple[CdiDevice, ...] = ()
    nodes: tuple[CdiNode, ...] = ()  # spec-level containerEdits (every requested device gets them)
    errors: tuple[str, ...] = ()  # schema violations; empty = valid

    @property
    def valid(self) -> bool:
        return not self.errors

    def device(self, name: str) -> CdiDevice | None:
        return next((d for d in self.devices if d.name == name), None)

    def qualified(self) -> tuple[str, ...]:
        return tuple(f"{self.kind}={d.name}" for d in self.devices)

    def all_nodes(self) -> tuple[CdiNode, ...]:
        """Every device node the spec names (spec level and per device), each path once."""
        seen: dict[str, CdiNode] = {}
        for node in (*self.nodes, *(n for d in self.devices for n in d.nodes)):
            seen.setdefault(node.on_host, node)
        return tuple(seen.values())


def version_tuple(version: str) -> tuple[int, int, int] | None:
    m = _SEMVER.match(version.strip())
    return (int(m[1]), int(m[2]), int(m[3])) if m else None


def parse_spec(path: str, text: str, *, cut: bool = False) -> CdiSpec:
    """One spec file's text (JSON or YAML by extension, as the CDI library reads them)."""
    if cut or len(text.encode("utf-8", "replace")) >= MAX_SPEC_BYTES:
        return CdiSpec(path, errors=(f"larger than {MAX_SPEC_BYTES} bytes: not read whole",))
    try:
        doc = json.loads(text) if path.endswith(".json") else yaml.safe_load(text)
    except (ValueError, yaml.YAMLError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return CdiSpec(
            path, errors=(f"not {'JSON' if path.endswith('.json') else 'YAML'}: {first[:200]}",)
        )
    if not isinstance(doc, dict):
        return CdiSpec(path, errors=("not an object",))
    errors: list[str] = []
    version = _string(doc, "cdiVersion", "spec", errors)
    kind = _string(doc, "kind", "spec", errors)
    if version and version_tuple(version) is None:
        errors.append(f"cdiVersion {version!r} is not a semantic version X.Y.Z")
    if kind and not _KIND.match(kind):
        errors.append(f"kind {kind!r} is not vendor.tld/class")
    devices: list[CdiDevice] = []
    raw_devices = doc.get("devices")
    if "devices" not in doc:
        errors.append("spec: devices is required")
    elif not isinstance(raw_devices, list):
        errors.append("spec: devices is not a list")
    elif not raw_devices:
        errors.append("spec: devices is empty (at least one device is required)")
    else:
        for i, raw in enumerate(raw_devices):
            devices.append(_device(raw, i, errors))
    names = [d.name for d in devices if d.name]
    for dup in sorted({n for n in names if names.count(n) > 1}):
        errors.append(f"device {dup!r} is defined more than once")
    spec_edits = doc.get("containerEdits")
    nodes = _edits(spec_edits, "spec containerEdits", errors) if spec_edits is not None else ()
    return CdiSpec(path, kind, version, tuple(devices), nodes, tuple(errors))


def _string(doc: dict[str, Any], key: str, where: str, errors: list[str]) -> str:
    value = doc.get(key)
    if value is None:
        errors.append(f"{where}: {key} is required")
        return ""
    if not isinstance(value, str):
        errors.append(f"{where}: {key} is not a string")
        return str(value)
    return value


def _device(raw: Any, i: int, errors: list[str]) -> CdiDevice:
    where = f"devices[{i}]"
    if not isinstance(raw, dict):
        errors.append(f"{where}: not an object")
        return CdiDevice("")
    name = _string(raw, "name", where, errors)
    if name and not _NAME.match(name):
        errors.append(f"{where}: name {name!r} must start and end with a letter or digit")
    if "containerEdits" not in raw:
        errors.append(f"{where}: containerEdits is required")
        return CdiDevice(name)
    return CdiDevice(name, _edits(raw["containerEdits"], f"{where}.containerEdits", errors))


def _edits(raw: Any, where: str, errors: list[str]) -> tuple[CdiNode, ...]:
    if not isinstance(raw, dict):
        errors.append(f"{where}: not an object")
        return ()
    nodes = raw.get("deviceNodes") or []
    if not isinstance(nodes, list):
        errors.append(f"{where}.deviceNodes: not a list")
        return ()
    out: list[CdiNode] = []
    for j, node in enumerate(nodes):
        here = f"{where}.deviceNodes[{j}]"
        if not isinstance(node, dict):
            errors.append(f"{here}: not an object")
            continue
        path = node.get("path")
        if not isinstance(path, str) or not path:
            errors.append(f"{here}: path is required")
            continue
        numbers = [_int(node, k, here, errors) for k in ("major", "minor")]
        host = node.get("hostPath")
        out.append(
            CdiNode(
                path,
                host if isinstance(host, str) else "",
                str(node.get("type") or ""),
                numbers[0],
                numbers[1],
            )
        )
    for key, required in (
        ("mounts", ("hostPath", "containerPath")),
        ("hooks", ("hookName", "path")),
    ):
        for j, item in enumerate(raw.get(key) or []):
            missing = [k for k in required if not isinstance(item, dict) or not item.get(k)]
            if missing:
                errors.append(f"{where}.{key}[{j}]: {', '.join(missing)} required")
    return tuple(out)


def _int(node: dict[str, Any], key: str, where: str, errors: list[str]) -> int | None:
    value = node.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        errors.append(f"{where}: {key} is not an integer")
        return None
    return value
