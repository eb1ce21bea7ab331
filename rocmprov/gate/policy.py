"""The drain policy: which findings may take a node out of service. Pure.

A node is drained only for a finding that says the node cannot run GPU jobs. Out of the box
those are the families

| family    | check ids | what they say                                                   |
|-----------|-----------|-----------------------------------------------------------------|
| GPU       | `gpu.*`   | GPUs missing or unhealthy: count, ECC/RAS, XGMI, temperature    |
|           | `pcie.*`  | the GPUs' own PCIe links and VRAM BARs (a lost link width)      |
| driver    | `driver.*`| amdgpu/KFD not loaded, /dev/kfd or render nodes missing, DKMS   |
| kernel GPU| `dmesg.*` | the kernel's amdgpu/KFD/DRM lines this boot: RAS, hangs, probe  |

Every other finding (ROCm packages, repositories, OS, torch, users, kernel settings) only
warns: it is in the audit, the log line and the metrics, never a drain. A site changes the
families with `--drain PATTERN` (replaces the list) and `--no-drain PATTERN` (takes checks out),
shell-style patterns on check ids. Package-manager state (`repo.*`: sources, pins, signing
keys) never drains whatever the patterns say: it is the same on every node, so one expired key
would drain a whole cluster at once (AMD's ROCm key expired on 2018-08-01, 2019-08-02 and
2021-08-01).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from fnmatch import fnmatchcase

from rocmprov.model import Finding

DEFAULT_DRAIN = ("gpu.*", "pcie.*", "driver.*", "dmesg.*")
NEVER_DRAIN = ("repo.*",)
_PATTERN = re.compile(r"[a-z0-9_.*?\[\]-]{1,64}")


@dataclass(frozen=True)
class DrainPolicy:
    drain: tuple[str, ...] = DEFAULT_DRAIN
    no_drain: tuple[str, ...] = ()

    @classmethod
    def from_patterns(cls, drain: Iterable[str] = (), no_drain: Iterable[str] = ()) -> DrainPolicy:
        """ValueError names a pattern that is not a check-id pattern."""
        drain, no_drain = tuple(drain), tuple(no_drain)
        for p in (*drain, *no_drain):
            if not _PATTERN.fullmatch(p):
                raise ValueError(f"not a check id pattern: {p!r} (e.g. gpu.* or dmesg.gpu.ras)")
        return cls(drain or DEFAULT_DRAIN, no_drain)

    def drains(self, check: str) -> bool:
        """True when a CRITICAL finding of `check` takes the node out of service. `fam.*`
        also stands for the family's own bare id (`dmesg`: the kernel log not read)."""
        if any(_matches(check, p) for p in (*NEVER_DRAIN, *self.no_drain)):
            return False
        return any(_matches(check, p) for p in self.drain)

    def select(self, findings: Iterable[Finding]) -> tuple[Finding, ...]:
        """The findings that decide drain and resume."""
        return tuple(f for f in findings if self.drains(f.check))

    def describe(self) -> str:
        no = f" except {','.join(self.no_drain)}" if self.no_drain else ""
        return f"{','.join(self.drain)}{no}"


def _matches(check: str, pattern: str) -> bool:
    return fnmatchcase(check, pattern) or (pattern.endswith(".*") and check == pattern[:-2])
