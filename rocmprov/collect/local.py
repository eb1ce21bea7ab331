"""Collect this machine: the probes through LocalTransport, PCI through pyudev, OS via distro."""

from __future__ import annotations

import platform

from rocmprov.collect.bundle import Bundle
from rocmprov.collect.host import collect_host
from rocmprov.collect.probes import Probe
from rocmprov.collect.sysfs import run_pci_sysfs
from rocmprov.transport.local import LocalTransport


def collect_local(
    probes: tuple[Probe, ...], *, become: bool = False, deadline: float | None = None
) -> Bundle:
    import distro

    meta = {
        "transport": "local",
        "distro": f"{distro.id()} {distro.version()}".strip(),
        "machine": platform.machine(),
    }
    return collect_host(
        LocalTransport(become=become),
        probes,
        extra=meta,
        native={"pci-sysfs": run_pci_sysfs},
        deadline=deadline,
    )
