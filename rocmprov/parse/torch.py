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
    )
