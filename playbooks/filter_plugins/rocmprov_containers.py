"""Filters of the rocmprov_containers role (pure; tests/test_containers_role.py).

`rocmprov_docker_merge` is the role's answer to `amd-ctk runtime configure`, which replaces
Docker's whole "features" key with {"cdi": true} (rocmprov/data/containers.yaml): here every key
the admin set stays, only the AMD runtime and features.cdi are added.
"""

from __future__ import annotations

import copy
from typing import Any


def mirror_url(url: str, mirrors: dict[str, str] | None) -> str:
    """An upstream URL rewritten onto its mirror ({"https://repo.radeon.com": "http://m/r"})."""
    for upstream, local in (mirrors or {}).items():
        up = str(upstream).rstrip("/")
        if url == up or url.startswith(up + "/"):
            return str(local).rstrip("/") + url[len(up) :]
    return url


def docker_merge(
    current: Any,
    runtime: bool = True,
    runtime_path: str = "amd-container-runtime",
    cdi: bool = True,
    default: bool = False,
) -> dict[str, Any]:
    """daemon.json with the AMD runtime (`runtimes.amd`, as amd-ctk writes it), features.cdi
    and, when asked, default-runtime amd, merged into what is there. Raises on a file that is
    not a JSON object or whose runtimes/features are not objects (never overwritten blindly)."""
    if current is None or current == "":
        current = {}
    if not isinstance(current, dict):
        raise ValueError("daemon.json is not a JSON object: left as it is")
    out = copy.deepcopy(current)
    for key in ("runtimes", "features"):
        if key in out and not isinstance(out[key], dict):
            raise ValueError(f"daemon.json: {key!r} is not an object: left as it is")
    if runtime:
        # an "amd" runtime the admin registered (another path, arguments) is theirs: kept
        out.setdefault("runtimes", {}).setdefault("amd", {"path": runtime_path, "args": []})
    if cdi:
        out.setdefault("features", {})["cdi"] = True
    if default and runtime:
        out["default-runtime"] = "amd"
    return out


class FilterModule:
    """Ansible filter plugin entry point."""

    def filters(self) -> dict[str, Any]:
        return {"rocmprov_mirror_url": mirror_url, "rocmprov_docker_merge": docker_merge}
