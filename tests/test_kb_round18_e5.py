"""Round 18 (engineer 5): multi-GPU, memory configuration and WSL. Every text below is
CONSTRUCTED (not a captured output) from the programs' format strings: the leads vary the
wording real reports show (other pids, prefixes, line order); the counter-examples are healthy
or unrelated lines of the same programs that must not fire the new patterns."""

from __future__ import annotations

import pytest

from tests.kbcases import assert_leads, assert_silent

LEADS = [
    # constructed from librocdxg's pr_err: native Windows build (no WSL line), other pid/tid
    ("pid:25152 tid:0x26356 [topology_sysfs_get_system_props] No WDDM adapters found.\n"
     "checkHipErrors() HIP API error = 0100 \"no ROCm-capable device is detected\"\n",
     "wsl.no-wddm-adapters"),
    # constructed: the WDDM line printed before rocminfo's WSL notice; the DXG-detection entry
    # (which needs the two rocminfo lines adjacent) must not be the first cause
    ("pid:2971 tid:0x7553c30d9e80 [topology_sysfs_get_system_props] No WDDM adapters found.\n"
     "WSL environment detected.\nhsa_init Failed, possibly no supported GPU devices\n",
     "wsl.no-wddm-adapters"),
]  # fmt: skip

SILENT = [
    # constructed: HSA_ENABLE_DXG_DETECTION unset: librocdxg never ran, no WDDM line
    ("WSL environment detected.\nhsa_init Failed, possibly no supported GPU devices\n",
     "wsl.no-wddm-adapters"),
    # constructed: a healthy rocminfo under WSL
    ("WSL environment detected.\n=====================\nHSA System Attributes\n"
     "=====================\nRuntime Version:         1.18\nDMAbuf Support:          YES\n"
     "  Name:                    gfx1100\n  Marketing Name:          AMD Radeon RX 7900 XTX\n",
     "wsl.no-wddm-adapters"),
]  # fmt: skip


@pytest.mark.parametrize("text, entry", LEADS)
def test_the_cause_leads(text: str, entry: str) -> None:
    assert_leads(text, entry)


@pytest.mark.parametrize("text, wolf", SILENT)
def test_the_entry_stays_silent_where_its_cause_is_wrong(text: str, wolf: str) -> None:
    assert_silent(text, wolf)
