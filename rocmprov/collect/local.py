"""Collect this machine: the probes through LocalTransport, PCI through pyudev, OS via distro."""

from __future__ import annotations

import platform

from rocmprov.collect.bundle import Bundle, ProbeOutput
from rocmprov.collect.host import now_iso
from rocmprov.collect.sysfs import run_pci_sysfs
from rocmprov.probes import Probe
from rocmprov.transport.local import LocalTransport


def collect_local(probes: tuple[Probe, ...], *, become: bool = False) -> Bundle:
    import distro

    transport = LocalTransport(become=become)
    outputs: dict[str, ProbeOutput] = {}
    for probe in probes:
        stamp = now_iso()
        res = run_pci_sysfs() if probe.id == "pci-sysfs" else None
        if res is None or not res.ok:  # no libudev: the shell probe reads the same sysfs
            res = transport.run(probe.command, timeout=probe.timeout, sudo=probe.needs_root)
        outputs[probe.id] = ProbeOutput(
            probe.id, probe.command, res.rc, res.stdout, res.stderr, res.duration, stamp
        )
    meta = {
        "transport": "local",
        "distro": f"{distro.id()} {distro.version()}".strip(),
        "machine": platform.machine(),
    }
    return Bundle(host=transport.host, outputs=outputs, meta=meta)
