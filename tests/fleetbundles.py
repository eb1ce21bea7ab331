"""A fleet of support bundles for the drift and HTML-report tests, built from real outputs only:
the real bundle in tests/data (an H200 VM, rocmprov collect, 2026-12-01) plus two real AMD
captures from tests/fixtures as the amd-smi static and rocm-smi probes' outputs (both from one
Radeon RX 6600 host, so they agree). Hosts differ by name,
and the hosts named in `changes` by a few version strings replaced in those outputs (exactly
what drift must then find)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from rocmprov.collect.bundle import Bundle, ProbeOutput, read_bundle, write_bundle
from tests.fixtureload import FIXTURES, load

REAL_BUNDLE = Path(__file__).resolve().parent / "data" / "h200-vm-bundle-2026-12-01.tar.gz"
STATIC = load(FIXTURES / "amd-smi" / "static-json-bare-list-rx6600-vbios-driver.txt")
ROCM_SMI = load(FIXTURES / "rocm-smi" / "showallinfo-json-rx6600-firmware-vbios-driver.txt")
DMI = "bios_vendor American Megatrends International, LLC.\nbios_version 1.0b\n"

# probe id -> the (old, new) string replacements a changed host gets
Change = Mapping[str, tuple[str, str] | None]
PMFW_CHANGE: Change = {"rocm-smi-firmware": ("00.59.50.00", "00.59.52.00")}
VBIOS_CHANGE: Change = {
    "amd-smi-static": ("115-D534P00-100", "115-D534P00-101"),
    "rocm-smi-firmware": ("115-D534P00-100", "115-D534P00-101"),
}
KERNEL_CHANGE: Change = {"uname": ("6.18.44-fc-v973-gpu", "6.18.44-fc-v999-gpu")}
NO_TORCH: Change = {"torch": None}


def base_bundle() -> Bundle:
    real = read_bundle(REAL_BUNDLE)
    outputs = dict(real.outputs)
    for pid, text in (
        ("amd-smi-static", STATIC.text),
        ("rocm-smi-firmware", ROCM_SMI.text),
        ("dmi", DMI),
    ):
        outputs[pid] = ProbeOutput(pid, f"fixture {pid}", 0, text)
    return Bundle(real.host, outputs, real.meta)


def host_bundle(base: Bundle, name: str, change: Change | None = None) -> Bundle:
    outputs = dict(base.outputs)
    for pid, edit in (change or {}).items():
        if edit is None:  # the probe's output is lost (as from a host where it timed out)
            del outputs[pid]
            continue
        old, new = edit
        out = outputs[pid]
        assert old in out.stdout, (pid, old)
        outputs[pid] = ProbeOutput(out.id, out.command, out.rc, out.stdout.replace(old, new))
    return Bundle(name, outputs, {**base.meta, "host": name})


def write_fleet(
    directory: Path, count: int, changes: Mapping[str, Change] | None = None
) -> list[str]:
    """`count` bundles gpu000.. in `directory`; returns the host names."""
    base = base_bundle()
    names = [f"gpu{i:03d}" for i in range(count)]
    for name in names:
        write_bundle(host_bundle(base, name, (changes or {}).get(name)), directory)
    return names
