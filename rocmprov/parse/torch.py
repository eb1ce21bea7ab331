"""The `torch` probe's JSON -> TorchInfo. Pure."""

from __future__ import annotations

import json
from dataclasses import dataclass


@dataclass(frozen=True)
class TorchInfo:
    installed: bool = False
    version: str = ""
    hip: str = ""
    cuda: str = ""
    available: bool = False
    device_count: int = 0
    devices: tuple[str, ...] = ()
    error: str = ""
    python: str = ""
    executable: str = ""
    prefix: str = ""  # sys.prefix: the virtual environment, if any
    rocm_sdk: str = ""  # version of TheRock's rocm-sdk-core wheel in that environment
    hip_library: str = ""  # the libamdhip64.so this torch loaded (from /proc/self/maps)


def parse_torch(text: str) -> TorchInfo | None:
    """None when the probe printed no JSON object (probe failed)."""
    for line in reversed(text.strip().splitlines()):
        try:
            data = json.loads(line)
        except ValueError:
            continue
        if isinstance(data, dict):
            return _info(data)
    return None


def _info(d: dict) -> TorchInfo:
    def s(key: str) -> str:
        v = d.get(key)
        return str(v) if v is not None else ""

    devices = d.get("devices") if isinstance(d.get("devices"), list) else []
    count = d.get("device_count")
    return TorchInfo(
        installed=bool(d.get("torch")),
        version=s("torch"),
        hip=s("hip"),
        cuda=s("cuda"),
        available=d.get("available") is True,
        device_count=count if isinstance(count, int) else 0,
        devices=tuple(str(x) for x in devices),
        error=s("error") or s("device_error"),
        python=s("python"),
        executable=s("executable")[:400],
        prefix=s("prefix")[:400],
        rocm_sdk=s("rocm_sdk")[:80],
        hip_library=s("hip_library")[:400],
    )
