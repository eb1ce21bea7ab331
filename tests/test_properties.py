"""Property tests: every parser returns its types and never raises, on any text.

Every parser gets 10,000 examples per run (one test feeds each example to all), drawn from:
arbitrary unicode, very long text, random bytes decoded with errors='replace', and lines glued
from real-format fragments (so the regexes are exercised past their first character).
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rocmprov.parse.dmesg import Dmesg, parse_dmesg
from rocmprov.parse.lspci import parse_lspci, parse_lspci_block
from rocmprov.parse.pci import PciDevice
from rocmprov.parse.rocminfo import RocmInfo, parse_rocminfo
from rocmprov.parse.smi import SmiGpu, parse_amd_smi, parse_rocm_smi
from rocmprov.parse.sysfs import parse_link_files, parse_pci_sysfs, parse_pp_dpm_pcie
from rocmprov.parse.system import OsRelease, infer_os_release, parse_os_release

EXAMPLES = int(os.environ.get("ROCMPROV_HYPOTHESIS_EXAMPLES", "10000"))

FRAGMENTS = [
    "0000:03:00.0 Display controller [0380]: Advanced Micro Devices, Inc. [AMD/ATI] ",
    "03:00.0 VGA compatible controller: Advanced Micro Devices, Inc. [AMD/ATI] Device 67df",
    "[1002:738c] (rev 01)", "\tRegion 0: Memory at 4f800000000 (64-bit, prefetchable) ",
    "[size=32G]", "[size=", "\tMemory at e0000000 (32-bit, non-prefetchable) [size=256K]",
    "\t\tLnkCap:\tPort #0, Speed 16GT/s, Width x16", "\t\tLnkSta:\tSpeed 2.5GT/s (downgraded), ",
    "Width x1 (ok)", "\tCapabilities: <access denied>", "\tBus: primary=00, secondary=01",
    "bdf 0000:03:00.0", "path /sys/devices/pci0000:00/0000:00:01.1/0000:03:00.0",
    "current_link_speed 16.0 GT/s PCIe", "resource 0x0000 0xffff 0x0014220c", "class 0x038000",
    "Agent 2", "  Name:                    gfx942", "  Device Type:             GPU",
    "ROCk module is NOT loaded", "  Chip ID:  29877(0x74b5)", '{"card0": {"Card Series": ',
    '"GFX Version": "gfx9010"', '[{"gpu": 0, "asic": "N/A", "vram": {"size": {"value": ',
    '{"gpu_data": [', "WARNING: No AMD GPUs specified", "]}", "}", "{", "[", '"N/A"',
    "[    9.29] amdgpu 0000:83:00.0: amdgpu: Fatal error during GPU init",
    "amdgpu: probe of 0000:83:00.0 failed with error -12", "ring gfx_0.0.0 timeout",
    "Sep 06 14:59:32 host kernel: ", "ID=ubuntu", 'VERSION_ID="22.04"', "NAME=\"Ubuntu",
    "Description:\tUbuntu 22.04.4 LTS", "1: 8.0GT/s, x16 619Mhz *", "==> /sys/x/max_link_width <==",
    "device,VRAM Total Memory (B)", "card0,1", "GPU[0]          : GPU ID: 0x731f",
    "GPU  Temp   AvgPwr", "0    43.0c", "\x00", "\r\n", "\n", "\t", " ",
]

TEXT = st.one_of(
    st.text(max_size=200),
    st.text(min_size=1, max_size=20).map(lambda s: s * (4000 // len(s))),
    st.binary(max_size=600).map(lambda b: b.decode("utf-8", errors="replace")),
    st.lists(st.sampled_from(FRAGMENTS), max_size=25).map("".join),
    st.lists(st.sampled_from(FRAGMENTS), max_size=25).map("\n".join),
)

FAST = settings(max_examples=EXAMPLES, deadline=None, database=None,
                suppress_health_check=list(HealthCheck))


@FAST
@given(TEXT)
def test_every_parser(text: str) -> None:
    """One example feeds every parser, so each parser sees all EXAMPLES inputs per run."""
    devices = parse_lspci(text)
    assert isinstance(devices, list) and all(isinstance(d, PciDevice) for d in devices)
    for d in devices:
        assert all(b.size >= 0 for b in d.bars)
        assert d.link_sta.width is None or 0 < d.link_sta.width <= 64
    assert isinstance(parse_lspci_block(text), PciDevice)

    assert all(isinstance(d, PciDevice) for d in parse_pci_sysfs(text))
    assert isinstance(parse_pp_dpm_pcie(text), list)
    assert isinstance(parse_link_files(text), dict)

    info = parse_rocminfo(text)
    assert isinstance(info, RocmInfo) and isinstance(info.gpus, tuple)
    assert info.error in ("", "rock-not-loaded", "kfd-permission", "kfd-missing", "hsa-error")

    for gpus in (parse_rocm_smi(text), parse_amd_smi(text)):
        assert isinstance(gpus, list) and all(isinstance(g, SmiGpu) for g in gpus)
        assert all(g.vram_total_bytes is None or g.vram_total_bytes >= 0 for g in gpus)

    log = parse_dmesg(text)
    assert isinstance(log, Dmesg) and all(isinstance(t, str) and t for t in log.tags)

    assert isinstance(parse_os_release(text), OsRelease)
    assert isinstance(infer_os_release(text), OsRelease)
