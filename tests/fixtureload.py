"""Load tests/fixtures/<kind>/<name>.txt: YAML header, a line '---', then the raw capture."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

FIXTURES = Path(__file__).resolve().parent / "fixtures"


@dataclass(frozen=True)
class Fixture:
    path: Path
    kind: str  # the directory: lspci, dmesg, rocminfo, rocm-smi, amd-smi, os-release, sysfs
    header: dict[str, Any]
    text: str

    @property
    def expect(self) -> dict[str, Any]:
        return self.header.get("expect") or {}

    @property
    def name(self) -> str:
        return f"{self.kind}/{self.path.name}"


def load(path: Path) -> Fixture:
    raw = path.read_text(encoding="utf-8")
    head, sep, body = raw.partition("\n---\n")
    if not sep:
        raise ValueError(f"{path}: no '---' line after the YAML header")
    return Fixture(path, path.parent.name, yaml.safe_load(head) or {}, body)


KINDS = ("lspci", "sysfs", "rocminfo", "rocm-smi", "amd-smi", "dmesg", "os-release")


def all_fixtures(kinds: tuple[str, ...] = KINDS) -> list[Fixture]:
    """The hardware-truth captures (other directories, e.g. kb/, belong to other tests)."""
    return [load(p) for kind in kinds for p in sorted((FIXTURES / kind).glob("*.txt"))]
