"""The container probes (rocmprov/collect/containers.py) -> ContainerFacts. Pure.

None means "not collected"; an empty value means the probe ran and found nothing (no runtime
installed: the checks say "not applicable").
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from rocmprov.parse.cdi import CdiSpec, parse_spec

CONTAINER_PROBES = ("containers", "container-config", "cdi-specs", "docker-info")
KEEP_GROUPS_ANNOTATION = "run.oci.keep_original_groups=1"
_VERSION = re.compile(r"\bv?(\d+\.\d+(?:\.\d+)?)")


@dataclass(frozen=True)
class Tool:
    name: str
    path: str
    version: str = ""  # X.Y[.Z]; "" when the output names none
    text: str = ""  # what --version (amd-ctk: version) printed, first line


@dataclass(frozen=True)
class DockerInfo:
    server_version: str = ""
    cdi_spec_dirs: tuple[str, ...] | None = None  # None: this Docker reports none (before 25)
    runtimes: tuple[str, ...] = ()
    default_runtime: str = ""
    discovered: tuple[str, ...] = ()  # CDI devices the daemon found (Docker 28.x+)
    errors: tuple[str, ...] = ()  # could not ask the daemon (not running, permission)


@dataclass(frozen=True)
class DaemonJson:
    """/etc/docker/daemon.json, the keys that matter for GPUs."""

    present: bool = False
    error: str = ""  # not JSON / not an object: dockerd refuses to start
    runtimes: dict[str, str] = field(default_factory=dict)  # name -> path
    default_runtime: str = ""
    features: dict[str, Any] = field(default_factory=dict)
    cdi_spec_dirs: tuple[str, ...] | None = None


@dataclass(frozen=True)
class NodeStat:
    path: str
    kind: str  # "c" character device, "d" directory, "l" link, "-" other
    major: int
    minor: int
    mode: str  # octal permission bits, e.g. "660"
    group: str
    gid: int
    driver: str = ""  # the DRM node's kernel driver (amdgpu, ast...); "" unknown


@dataclass(frozen=True)
class ContainerFacts:
    tools: dict[str, Tool] | None = None
    daemon_json: DaemonJson | None = None
    conf_files: tuple[str, ...] = ()  # containers.conf files read, in order
    podman_runtime: str = ""  # containers.conf [engine] runtime (last file wins); "" = default
    keep_groups: str = ""  # the containers.conf file whose annotations keep the groups
    subuid: frozenset[str] | None = None  # users (or uids) with subordinate ids; None: no file
    subgid: frozenset[str] | None = None
    docker_group: frozenset[str] | None = None  # None: no docker group
    refresh_unit: str = ""  # is-enabled state of rocmprov-cdi-refresh.service; "" not asked
    specs: tuple[CdiSpec, ...] | None = None
    other_files: tuple[str, ...] = ()  # files in the CDI directories that are not specs
    nodes: dict[str, NodeStat] | None = None
    docker_info: DockerInfo | None = None

    def has(self, name: str) -> bool:
        return bool(self.tools and name in self.tools)

    def version(self, name: str) -> str:
        tool = (self.tools or {}).get(name)
        return tool.version if tool else ""

    @property
    def runtimes(self) -> tuple[str, ...]:
        return tuple(n for n in ("docker", "podman", "containerd") if self.has(n))


def build_containers(texts: dict[str, str | None]) -> ContainerFacts | None:
    """Probe id -> stdout (None: not collected). None when no container probe ran at all."""
    if all(texts.get(p) is None for p in CONTAINER_PROBES):
        return None
    config = texts.get("container-config")
    cdi = texts.get("cdi-specs")
    base = ContainerFacts(
        tools=parse_tools(texts["containers"]) if texts.get("containers") is not None else None,
        docker_info=parse_docker_info(texts["docker-info"])
        if texts.get("docker-info") is not None
        else None,
    )
    if config is not None:
        base = _with_config(base, config)
    if cdi is not None:
        specs, others, nodes = parse_cdi_probe(cdi)
        base = _replace(base, specs=specs, other_files=others, nodes=nodes)
    return base


def _replace(facts: ContainerFacts, **changes: Any) -> ContainerFacts:
    from dataclasses import replace

    return replace(facts, **changes)


def _sections(text: str) -> list[tuple[str, str]]:
    """`== head` lines and the text below each, in order."""
    out: list[tuple[str, list[str]]] = []
    for line in text.splitlines():
        if line.startswith("== "):
            out.append((line[3:].strip(), []))
        elif out:
            out[-1][1].append(line)
    return [(head, "\n".join(body)) for head, body in out]


def parse_tools(text: str) -> dict[str, Tool]:
    tools: dict[str, Tool] = {}
    for head, body in _sections(text):
        parts = head.split(None, 2)
        if len(parts) < 3 or parts[0] != "tool":
            continue
        name, path = parts[1], parts[2]
        first = next((line.strip() for line in body.splitlines() if line.strip()), "")
        tools[name] = Tool(name, path, tool_version(name, body), first[:200])
    return tools


def tool_version(name: str, text: str) -> str:
    """`Docker version 28.3.0, build 265f709`, `podman version 4.3.1`, `containerd
    github.com/containerd/containerd 1.6.20~ds1 ...`, amd-ctk's `Version: 1.2.0`."""
    if name == "amd-ctk":
        m = re.search(r"^Version:\s*v?(\S+)", text, re.M)
        return m[1] if m and m[1] != "dev" else ("dev" if m else "")
    for line in text.splitlines():
        line = line.replace("github.com/containerd/containerd", "")
        m = _VERSION.search(line)
        if m:
            return m[1]
    return ""


def parse_docker_info(text: str) -> DockerInfo:
    """`docker info --format '{{json .}}'` (docker prints its errors around the JSON)."""
    doc = _json_object(text)
    if doc is None:
        lines = [line.strip() for line in text.splitlines() if line.strip()]
        return DockerInfo(errors=tuple(lines[:3]) or ("no output",))
    errors = tuple(str(e) for e in doc.get("ServerErrors") or [])
    dirs = doc.get("CDISpecDirs")
    runtimes = doc.get("Runtimes")
    return DockerInfo(
        server_version=str(doc.get("ServerVersion") or ""),
        cdi_spec_dirs=tuple(str(d) for d in dirs) if isinstance(dirs, list) else None,
        runtimes=tuple(sorted(runtimes)) if isinstance(runtimes, dict) else (),
        default_runtime=str(doc.get("DefaultRuntime") or ""),
        discovered=tuple(
            str(d.get("ID")) for d in doc.get("DiscoveredDevices") or [] if isinstance(d, dict)
        ),
        errors=errors,
    )


def _json_object(text: str) -> dict[str, Any] | None:
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("{"):
            try:
                value = json.loads(line)
            except ValueError:
                continue
            if isinstance(value, dict):
                return value
    return None


def parse_daemon_json(text: str) -> DaemonJson:
    try:
        doc = json.loads(text) if text.strip() else {}
    except ValueError as exc:
        return DaemonJson(True, error=f"not JSON: {str(exc)[:200]}")
    if not isinstance(doc, dict):
        return DaemonJson(True, error="not a JSON object")
    runtimes = doc.get("runtimes")
    features = doc.get("features")
    dirs = doc.get("cdi-spec-dirs")
    return DaemonJson(
        True,
        runtimes={
            str(k): str(v.get("path", "")) if isinstance(v, dict) else ""
            for k, v in (runtimes.items() if isinstance(runtimes, dict) else ())
        },
        default_runtime=str(doc.get("default-runtime") or ""),
        features=dict(features) if isinstance(features, dict) else {},
        cdi_spec_dirs=tuple(str(d) for d in dirs) if isinstance(dirs, list) else None,
    )


def _with_config(facts: ContainerFacts, text: str) -> ContainerFacts:
    daemon = DaemonJson()
    confs: list[str] = []
    runtime, keep = "", ""
    subuid: frozenset[str] | None = None
    subgid: frozenset[str] | None = None
    group: frozenset[str] | None = None
    unit = ""
    for head, body in _sections(text):
        kind, _, rest = head.partition(" ")
        if kind == "file" and rest.endswith("daemon.json"):
            daemon = parse_daemon_json(body)
        elif kind == "conf":
            confs.append(rest)
            conf_runtime, annotations = _containers_conf(body)
            runtime = conf_runtime or runtime
            if annotations is not None:  # a later file's list replaces an earlier one
                keep = rest if KEEP_GROUPS_ANNOTATION in annotations else ""
        elif kind == "ids":
            users = frozenset(
                line.split(":", 1)[0].strip() for line in body.splitlines() if ":" in line
            )
            if rest.endswith("subuid"):
                subuid = users
            else:
                subgid = users
        elif kind == "group":
            members = rest.split(":")[3] if rest.count(":") >= 3 else ""
            group = frozenset(m for m in members.split(",") if m)
        elif kind == "unit":
            unit = rest.partition(" ")[2].strip() or "unknown"
    return _replace(
        facts,
        daemon_json=daemon,
        conf_files=tuple(confs),
        podman_runtime=runtime,
        keep_groups=keep,
        subuid=subuid,
        subgid=subgid,
        docker_group=group,
        refresh_unit=unit,
    )


def _containers_conf(text: str) -> tuple[str, list[str] | None]:
    """containers.conf (TOML; comments already dropped): [engine] runtime and [containers]
    annotations. A small reader of the two keys, not a TOML parser: values are one line."""
    section, runtime, annotations = "", "", None
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("["):
            section = line.strip("[] ")
            continue
        key, eq, value = line.partition("=")
        if not eq:
            continue
        key, value = key.strip(), value.strip()
        if section == "engine" and key == "runtime":
            runtime = value.strip("\"'")
        elif section == "containers" and key == "annotations":
            annotations = re.findall(r"[\"']([^\"']*)[\"']", value)
    return runtime, annotations


def parse_cdi_probe(
    text: str,
) -> tuple[tuple[CdiSpec, ...], tuple[str, ...], dict[str, NodeStat]]:
    specs: list[CdiSpec] = []
    others: list[str] = []
    nodes: dict[str, NodeStat] = {}
    for head, body in _sections(text):
        kind, _, rest = head.partition(" ")
        if kind == "spec":
            path, _, size = rest.rpartition(" ")
            if not path:  # no size (an older probe)
                path, size = rest, ""
            cut = size.isdigit() and int(size) > len(body.encode("utf-8", "replace")) + 1
            specs.append(parse_spec(path, body, cut=cut))
        elif kind == "other":
            others.append(rest)
        elif kind == "nodes":
            nodes = parse_node_stats(body)
    return tuple(specs), tuple(others), nodes


_KINDS = {"character special file": "c", "directory": "d", "symbolic link": "l"}


def parse_node_stats(text: str) -> dict[str, NodeStat]:
    """`stat -c '%n|%F|%t|%T|%a|%U|%G|%g'` lines (major/minor in hex, as stat prints them),
    then `|driver`."""
    out: dict[str, NodeStat] = {}
    for line in text.splitlines():
        parts = line.strip().split("|")
        if len(parts) not in (8, 9):
            continue
        try:
            major, minor, gid = int(parts[2], 16), int(parts[3], 16), int(parts[7])
        except ValueError:
            continue
        out[parts[0]] = NodeStat(
            parts[0],
            _KINDS.get(parts[1], "-"),
            major,
            minor,
            parts[4],
            parts[6],
            gid,
            parts[8].strip() if len(parts) == 9 else "",
        )
    return out
