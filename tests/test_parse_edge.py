"""Edge cases of the pure parsers: empty, all-zero, garbage, and the real-format quirks."""

from __future__ import annotations

import pytest

from rocmprov.parse.dmesg import parse_dmesg, strip_prefix
from rocmprov.parse.lspci import parse_lspci, parse_lspci_block
from rocmprov.parse.pci import parse_speed, parse_width
from rocmprov.parse.rocminfo import parse_rocminfo
from rocmprov.parse.smi import load_json, normalize_gfx, parse_amd_smi, parse_rocm_smi
from rocmprov.parse.sysfs import parse_pci_sysfs

GARBAGE = ["", "\x00" * 64, "0" * 4096, "}}}{{{[[", "\n\n\n", "Agent", "Region 0: Memory at"]


@pytest.mark.parametrize("text", GARBAGE)
def test_garbage_gives_empty_facts(text: str) -> None:
    assert parse_lspci(text) == []
    assert parse_pci_sysfs(text) == []
    assert parse_rocminfo(text).agents == ()
    assert parse_rocm_smi(text) == []
    assert parse_amd_smi(text) == []
    assert parse_dmesg(text).events == ()


def test_speed_and_width_forms() -> None:
    assert parse_speed("16GT/s") == 16.0
    assert parse_speed("16.0 GT/s PCIe") == 16.0
    assert parse_speed("2.5GT/s (downgraded)") == 2.5
    assert parse_speed("Unknown") is None
    assert parse_width("x16 (ok)") == 16
    assert parse_width("0") is None


def test_lnksta_ok_suffix_is_not_downgraded() -> None:
    dev = parse_lspci_block("\t\tLnkCap:\tPort #0, Speed 8GT/s, Width x4\n"
                            "\t\tLnkSta:\tSpeed 8GT/s (ok), Width x4 (ok)\n")
    assert (dev.link_sta.speed_gts, dev.link_sta.width, dev.downgraded) == (8.0, 4, False)


def test_rebar_capability_lines_are_not_regions() -> None:
    dev = parse_lspci_block("\t\tBAR 0: current size: 256MB, supported: 256MB 512MB 32GB\n")
    assert dev.bars == ()


def test_all_zero_sysfs_resources_give_no_bars() -> None:
    text = ("bdf 0000:03:00.0\nvendor 0x1002\nclass 0x038000\n"
            + "resource 0x0000000000000000 0x0000000000000000 0x0000000000000000\n" * 6)
    (dev,) = parse_pci_sysfs(text)
    assert dev.bars == () and dev.is_amd_gpu


def test_rocm_smi_warning_before_json_and_gfx9010() -> None:
    text = 'WARNING: No AMD GPUs specified\n{"card0": {"Card Series": "MI250X", ' \
           '"Card Model": "0x7408", "GFX Version": "gfx9010"}}'
    (gpu,) = parse_rocm_smi(text)
    assert gpu.name == "MI250X" and normalize_gfx(gpu.gfx) == "gfx90a"
    assert normalize_gfx("gfx1100") == "gfx1100" and normalize_gfx("gfx942") == "gfx942"


def test_load_json_skips_bracketed_preamble() -> None:
    assert load_json("[WARN] x\n{\"a\": 1}") == {"a": 1}


def test_amd_smi_na_sections_and_envelope() -> None:
    text = '{"gpu_data": [{"gpu": 0, "asic": "N/A", "bus": "N/A", ' \
           '"vram": {"size": {"value": 196592, "unit": "MB"}}}]}'
    (gpu,) = parse_amd_smi(text)
    assert gpu.name == "" and gpu.vram_total_bytes == 196592 << 20


def test_rocminfo_not_loaded_but_agents_is_not_an_error() -> None:
    text = "ROCk module is NOT loaded, possibly no GPU devices\n*******\nAgent 1\n*******\n" \
           "  Name:                    gfx900\n  Device Type:             GPU\n"
    info = parse_rocminfo(text)
    assert info.error == "" and info.rock_not_loaded_line and info.gpus[0].gfx == "gfx900"
    assert parse_rocminfo("ROCk module is NOT loaded").error == "rock-not-loaded"


def test_dmesg_prefixes() -> None:
    assert strip_prefix("Oct  7 12:58:23 host kernel: [ 1.5] amdgpu x") == "amdgpu x"
    assert strip_prefix("2024-05-01T10:00:00+0000 host kernel: amdgpu y") == "amdgpu y"
    log = parse_dmesg("[  1.0] amdgpu 0000:03:00.0: amdgpu: [gfxhub] page fault (src_id:0)\n")
    assert log.tags == ("page_fault",) and log.gpu_bdfs == ("0000:03:00.0",)
