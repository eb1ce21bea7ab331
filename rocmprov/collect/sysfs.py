"""The `pci-sysfs` probe done locally through pyudev; writes the same text as the shell probe."""

from __future__ import annotations

import os
import time
from pathlib import Path

from rocmprov.collect.probes import PCI_SYSFS_ATTRS
from rocmprov.transport.base import CommandResult


def pci_sysfs_text() -> str:
    import pyudev

    lines: list[str] = []
    devices = sorted(pyudev.Context().list_devices(subsystem="pci"), key=lambda d: d.sys_name)
    for dev in devices:
        base = Path(dev.sys_path)
        lines.append(f"bdf {dev.sys_name}")
        lines.append(f"path {os.path.realpath(base)}")
        for attr in PCI_SYSFS_ATTRS:
            value = _attr(dev, attr)
            if value is not None:
                lines.append(f"{attr} {value}")
        if dev.driver:
            lines.append(f"driver {dev.driver}")
        for res in _lines(base / "resource"):
            lines.append(f"resource {res}")
        lines.append("")
    return "\n".join(lines) + ("\n" if lines else "")


def _attr(dev: object, name: str) -> str | None:
    try:
        raw = dev.attributes.get(name)  # type: ignore[attr-defined]
    except (OSError, KeyError):
        return None
    if raw is None:
        return None
    return raw.decode("utf-8", errors="replace").rstrip("\n")


def _lines(path: Path) -> list[str]:
    try:
        return [line.strip() for line in path.read_text().splitlines()]
    except OSError:
        return []


def run_pci_sysfs() -> CommandResult:
    start = time.monotonic()
    try:
        text = pci_sysfs_text()
    except Exception as exc:  # pyudev missing libudev, no /sys: recorded, never a crash
        return CommandResult(1, "", f"pyudev: {exc}", time.monotonic() - start)
    return CommandResult(0, text, "", time.monotonic() - start)
