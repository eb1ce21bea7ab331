"""`rocminfo` text -> agents and the error state. Pure; survives any input.

Real quirks (tests/fixtures/rocminfo): "ROCk module is NOT loaded" is printed inside Docker
(no lsmod there) even though /dev/kfd opens and the GPU agents follow, so it is an error only
when no agent is listed; a GPU lists its ISAs in a nested "ISA Info" block, and can list two
(gfx942:sramecc+:xnack- and gfx9-4-generic:...).
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Agent:
    name: str  # gfx target for GPUs, CPU model for CPUs
    marketing_name: str = ""
    device_type: str = ""  # CPU | GPU | DSP | AIE
    chip_id: int | None = None
    bdfid: int | None = None
    compute_units: int | None = None
    isas: tuple[str, ...] = ()  # amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-, ...

    @property
    def gfx(self) -> str:
        """'gfx942' (features and generic ISAs dropped)."""
        return self.name.split(":")[0].strip()


@dataclass(frozen=True)
class RocmInfo:
    agents: tuple[Agent, ...] = ()
    runtime_version: str = ""
    error: str = ""  # "" | rock-not-loaded | kfd-permission | kfd-missing | hsa-error
    rock_version: str = ""  # "ROCk module version 6.10.5 is loaded"
    rock_not_loaded_line: bool = False  # printed even when agents follow (Docker)

    @property
    def gpus(self) -> tuple[Agent, ...]:
        return tuple(a for a in self.agents if a.device_type.upper() == "GPU")


_AGENT = re.compile(r"^\s*Agent \d+\s*$")
_FIELD = re.compile(
    r"^(\s*)(Name|Marketing Name|Device Type|Chip ID|BDFID|Compute Unit):\s*(.*?)\s*$"
)
_ISA = re.compile(r"^\s*Name:\s*(amdgcn-amd-amdhsa--\S+)")


def parse_rocminfo(text: str) -> RocmInfo:
    blocks: list[list[str]] = []
    for line in text.splitlines():
        if _AGENT.match(line):
            blocks.append([])
        elif blocks:
            blocks[-1].append(line)
    agents = tuple(a for a in (_agent(b) for b in blocks) if a is not None)
    runtime = re.search(r"Runtime Version:\s*(\S+)", text)
    rock = re.search(r"ROCk module version (\S+) is loaded", text)
    not_loaded = "ROCk module is NOT loaded" in text
    return RocmInfo(
        agents,
        runtime.group(1) if runtime else "",
        _error(text, agents),
        rock.group(1) if rock else "",
        not_loaded,
    )


def _int(value: str) -> int | None:
    m = re.match(r"(\d+)", value)
    return int(m.group(1)) if m else None


def _agent(lines: list[str]) -> Agent | None:
    seen: dict[str, str] = {}
    indent: int | None = None
    isas: list[str] = []
    for line in lines:
        if m := _ISA.match(line):
            isas.append(m.group(1))
            continue
        m = _FIELD.match(line)
        if not m:
            continue
        depth = len(m.group(1))
        if indent is None:
            indent = depth
        if depth == indent and m.group(2) not in seen:
            seen[m.group(2)] = m.group(3)
    if not seen.get("Name"):
        return None
    return Agent(
        seen["Name"],
        seen.get("Marketing Name", ""),
        seen.get("Device Type", ""),
        _int(seen.get("Chip ID", "")),
        _int(seen.get("BDFID", "")),
        _int(seen.get("Compute Unit", "")),
        tuple(isas),
    )


def _error(text: str, agents: tuple[Agent, ...]) -> str:
    if agents:
        return ""  # the runtime enumerated agents: whatever it printed before is not fatal
    if "ROCk module is NOT loaded" in text:
        return "rock-not-loaded"
    if re.search(r"/dev/kfd.*(Permission denied)", text, re.IGNORECASE):
        return "kfd-permission"
    if re.search(r"Unable to open /dev/kfd", text):
        return "kfd-missing"
    if re.search(r"HSA_STATUS_ERROR\w*", text):
        return "hsa-error"
    return ""
