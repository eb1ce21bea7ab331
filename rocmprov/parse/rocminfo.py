"""`rocminfo` text -> agents and the error state. Pure."""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Agent:
    name: str  # gfx target for GPUs, CPU model for CPUs
    marketing_name: str = ""
    device_type: str = ""  # CPU | GPU | DSP | AIE


@dataclass(frozen=True)
class RocmInfo:
    agents: tuple[Agent, ...] = ()
    runtime_version: str = ""
    error: str = ""  # "" | rock-not-loaded | kfd-permission | kfd-missing | hsa-error

    @property
    def gpus(self) -> tuple[Agent, ...]:
        return tuple(a for a in self.agents if a.device_type.upper() == "GPU")


_AGENT = re.compile(r"^\s*Agent \d+\s*$")
_FIELD = re.compile(r"^(\s*)(Name|Marketing Name|Device Type):\s*(.*?)\s*$")


def parse_rocminfo(text: str) -> RocmInfo:
    blocks: list[list[str]] = []
    for line in text.splitlines():
        if _AGENT.match(line):
            blocks.append([])
        elif blocks:
            blocks[-1].append(line)
    agents = tuple(a for a in (_agent(b) for b in blocks) if a is not None)
    runtime = re.search(r"Runtime Version:\s*(\S+)", text)
    return RocmInfo(agents, runtime.group(1) if runtime else "", _error(text))


def _agent(lines: list[str]) -> Agent | None:
    seen: dict[str, str] = {}
    indent: int | None = None
    for line in lines:
        m = _FIELD.match(line)
        if not m:
            continue
        depth = len(m.group(1))
        if indent is None:
            indent = depth
        if depth == indent and m.group(2) not in seen:
            seen[m.group(2)] = m.group(3)
    if "Name" not in seen:
        return None
    return Agent(seen["Name"], seen.get("Marketing Name", ""), seen.get("Device Type", ""))


def _error(text: str) -> str:
    if re.search(r"ROCk module is NOT loaded", text):
        return "rock-not-loaded"
    if re.search(r"/dev/kfd.*(Permission denied|read-write)", text, re.IGNORECASE):
        return "kfd-permission"
    if re.search(r"HSA_STATUS_ERROR\w*", text):
        return "hsa-error"
    return ""
