"""Round 16 (engineer 3): precision of entries that fired where their cause is wrong.

The texts are CONSTRUCTED, not captured outputs: each fills a program's format string (named
beside it) with sample values and the context that makes the entry's cause right or wrong.
They test that a pattern keeps its evidence; they say nothing about hardware.
"""

from __future__ import annotations

import pytest

from rocmprov.kb import match

# AMDGPU.jl src/AMDGPU.jl __init__: @warn "HIP library is unavailable, HIP integration will be
# disabled." and Julia's ConsoleLogger location line "└ @ AMDGPU <path>:<line>" under it
HIP_WARN = "┌ Warning: HIP library is unavailable, HIP integration will be disabled.\n"
HSA_WARN = ("┌ Warning: HSA runtime is unavailable, compilation and runtime functionality will be "
            "disabled.\n")  # fmt: skip
# amdgpu_kms.c amdgpu_debugfs_firmware_info_show: "MES feature version: %u, firmware version:
# 0x%08x"; ROCr's "Memory access fault by GPU node-%u (Agent handle: %p) on address %p."
MES_83 = "MES feature version: 1, firmware version: 0x00000083\n"
FAULT = ("Memory access fault by GPU node-1 (Agent handle: 0x55d1c0a0) on address 0x7f1a00000000. "
         "Reason: Page not present or supervisor privilege.\n")  # fmt: skip
# amd-smi / rocm-smi's module check (amdsmi.yaml), with uname -a under it
INITSTATE = "cat: /sys/module/amdgpu/initstate: No such file or directory\n"

FIRST = [
    # Linux: __init__ returns quietly without /dev/kfd, so the warning means an AMD GPU is there
    (HIP_WARN + "└ @ AMDGPU ~/.julia/packages/AMDGPU/abcde/src/AMDGPU.jl:205\n",
     "rocm.library-not-found"),
    (HIP_WARN + "└ @ AMDGPU /home/me/.julia/packages/AMDGPU/abcde/src/AMDGPU.jl:205\n",
     "rocm.library-not-found"),
    # the HSA line prints on Linux only, after the /dev/kfd check
    (HSA_WARN + "└ @ AMDGPU ~/.julia/packages/AMDGPU/abcde/src/AMDGPU.jl:178\n",
     "rocm.library-not-found"),
    # LM Studio: the survey's failure message alone is the failed survey
    ('Error trying to query ROCm GPUs: Failed to get memory info for hip device id "0".\n',
     "llm.lmstudio-rocm-gpu-survey-unsuccessful"),
    # the broken MES firmware on a Strix Halo / Strix Point APU, evidence before or after
    ("  Name:                    gfx1151\n" + FAULT + MES_83, "kernel.mes-failed-to-respond"),
    (MES_83 + FAULT + "  Marketing Name:          AMD Radeon 890M Graphics\n",
     "kernel.mes-failed-to-respond"),
    (FAULT + "x\n" + MES_83 + "amdgpu 0000:c5:00.0: loading gc_11_5_1_mes_2.bin\n",
     "kernel.mes-failed-to-respond"),
    # torch.utils.collect_env's platform line on the older WSL kernels
    ("Python platform: Linux-4.19.128-microsoft-standard-x86_64-with-glibc2.29\n",
     "wsl.rocm-on-wsl-no-gpu"),
    ("Python platform: Linux-4.4.0-19041-Microsoft-x86_64-with-glibc2.29\n",
     "wsl.rocm-on-wsl-no-gpu"),
]  # fmt: skip

WOLVES = [
    # Windows and macOS print the HIP line on every machine without the HIP SDK (CPU-only CI,
    # an NVIDIA box): no evidence of an AMD GPU
    (HIP_WARN + "└ @ AMDGPU C:\\Users\\ci\\.julia\\packages\\AMDGPU\\abcde\\src\\AMDGPU.jl:205\n",
     "rocm.library-not-found"),
    (HIP_WARN + "└ @ AMDGPU ~\\.julia\\packages\\AMDGPU\\abcde\\src\\AMDGPU.jl:205\n",
     "rocm.library-not-found"),
    (HIP_WARN + "└ @ AMDGPU /Users/runner/.julia/packages/AMDGPU/abcde/src/AMDGPU.jl:205\n",
     "rocm.library-not-found"),
    # the bare warning (a CI summary, a log without the location line) says nothing of a GPU
    (HIP_WARN, "rocm.library-not-found"),
    ("Warning: HIP library is unavailable, HIP integration will be disabled.\n"
     "Test Summary: | Pass  Total\n", "rocm.library-not-found"),
    # MES 0x83 and a fault without gfx115x evidence: another GPU's MES numbering
    (FAULT + MES_83, "kernel.mes-failed-to-respond"),
    ("  Name:                    gfx1100\n" + MES_83 + FAULT, "kernel.mes-failed-to-respond"),
    ("Marketing Name: AMD Radeon RX 7900 XTX\n" + FAULT + MES_83,
     "kernel.mes-failed-to-respond"),
    # a native kernel is not WSL
    ("Python platform: Linux-6.8.0-45-generic-x86_64-with-glibc2.39\n", "wsl.rocm-on-wsl-no-gpu"),
    ("Python platform: Linux-5.15.0-1034-azure-x86_64-with-glibc2.35\n", "wsl.rocm-on-wsl-no-gpu"),
]  # fmt: skip


@pytest.mark.parametrize("text, entry", FIRST)
def test_the_entry_ranks_first_with_its_evidence(text: str, entry: str) -> None:
    found = [m.id for m in match(text)]
    assert found and found[0] == entry, found


@pytest.mark.parametrize("text, wolf", WOLVES)
def test_the_entry_does_not_answer_where_its_cause_is_wrong(text: str, wolf: str) -> None:
    assert wolf not in [m.id for m in match(text)]


@pytest.mark.parametrize(
    "uname, words",
    [
        ("Linux box 4.4.0-19041-Microsoft #1237-Microsoft Sat Sep 11 14:32:00 PST 2021 x86_64",
         "ROCm does not run under WSL1"),
        ("Linux box 4.19.128-microsoft-standard #1 SMP Tue Jun 23 12:58:10 UTC 2020 x86_64",
         "Expected under WSL2"),
        ("Linux box 5.15.153.1-microsoft-standard-WSL2 #1 SMP Fri Mar 29 23:14:13 UTC 2024 x86_64",
         "Expected under WSL2"),
    ],
)  # fmt: skip
def test_every_wsl_kernel_string_picks_the_wsl_fix(uname: str, words: str) -> None:
    found = {m.id: m for m in match(INITSTATE + uname + "\n")}
    assert words in found["amdsmi.driver-not-initialized"].fix


def test_a_native_kernel_keeps_the_native_fix() -> None:
    uname = "Linux box 6.8.0-45-generic #45-Ubuntu SMP PREEMPT_DYNAMIC x86_64\n"
    found = {m.id: m for m in match(INITSTATE + "Linux version 6.8.0-45-generic (buildd@lcy02)\n"
                                     + uname)}  # fmt: skip
    fix = found["amdsmi.driver-not-initialized"].fix
    assert "WSL" not in fix
