"""Review B of round 15 (kb15e4): counter-examples that the merged patterns got wrong.

Every text here is constructed (no report's text): from rocminfo.cc's format strings (ROCm
3.x, commits cd4b7ce..10da0a7 of ROCm/rocminfo, which printed "ROCk module is NOT loaded" and
then went on), from lspci's pci.ids names, from torch's and HIP's messages and from an
interactive Python session. Kept in its own file so that it does not collide with review A.
"""

from __future__ import annotations

from rocmprov.kb import match

NOT_LOADED = "ROCk module is NOT loaded, possibly no GPU devices\n"
FAILED = (
    "hsa api call failure at: /src/rocminfo/rocminfo.cc:1102\n"
    "Call returned HSA_STATUS_ERROR_OUT_OF_RESOURCES: The runtime failed to allocate the "
    "necessary resources.\n"
)


def ids(text: str) -> list[str]:
    return [m.id for m in match(text)]


def test_rock_not_loaded_then_kfd_opens_then_hsa_fails_is_no_harmless_line() -> None:
    # rocminfo 3.x: the module check says NOT loaded, /dev/kfd opens (a KFD with no usable
    # GPU opens too), then hsa_init fails; before the review the line was called harmless
    text = "$ /opt/rocm/bin/rocminfo\n" + NOT_LOADED + "Able to open /dev/kfd read-write\n" + FAILED
    found = ids(text)
    assert found[0] == "rocr.rock-module-not-loaded"
    assert "rocr.rock-not-loaded-but-kfd-opens" not in found


def test_rock_not_loaded_harmless_only_once_the_system_attributes_follow() -> None:
    ok = (NOT_LOADED + "Able to open /dev/kfd read-write\n=====================\n"
          "HSA System Attributes\n=====================\nRuntime Version:         1.1\n")
    assert ids(ok) == ["rocr.rock-not-loaded-but-kfd-opens"]


SI = ("0a:00.0 VGA compatible controller: Advanced Micro Devices, Inc. [AMD/ATI] Oland "
      "[Radeon HD 8570 / R5 430 OEM / R7 240/340 / Radeon 520 OEM] (rev 87)\n")
NAVI = ("03:00.0 VGA compatible controller: Advanced Micro Devices, Inc. [AMD/ATI] Navi 21 "
        "[Radeon RX 6800/6800 XT / 6900 XT] (rev c1)\n")
DENIED = (
    "ROCk module is loaded\nUnable to open /dev/kfd read-write: Permission denied\n"
    "bob is member of render group\n" + FAILED
)
NOMEM = (
    "ROCk module is loaded\nUnable to open /dev/kfd read-write: Cannot allocate memory\n"
    "bob is member of render group\n" + FAILED
)


def test_gfx6_lspci_with_a_permission_refusal_is_the_permission() -> None:
    text = "$ lspci | grep -i vga\n" + SI + "$ rocminfo\n" + DENIED
    assert ids(text)[0] == "kfd.permission-denied"


def test_gfx6_lspci_with_another_amd_gpu_listed_is_not_too_old() -> None:
    # a supported card (or an APU) next to an old display card: the old one is not the reason
    for text in (
        "$ lspci | grep -i vga\n" + NAVI + SI + "$ rocminfo\n" + NOMEM,
        "$ lspci | grep -i vga\n" + SI + NAVI + "$ rocminfo\n" + NOMEM,
        "$ rocminfo\n" + NOMEM + "$ lspci | grep -i vga\n" + SI + NAVI,
        "$ rocminfo\n" + NOMEM + "$ lspci | grep -i vga\n" + NAVI + SI,
    ):
        assert "kfd.asic-not-supported" not in ids(text), text


def test_gfx6_lspci_alone_with_the_failure_still_leads() -> None:
    top = "kfd.asic-not-supported"
    assert ids("$ lspci | grep -i vga\n" + SI + "$ rocminfo\n" + NOMEM)[0] == top
    assert ids("$ rocminfo\n" + NOMEM + "$ lspci | grep -i vga\n" + SI)[0] == top
    assert "kfd.asic-not-supported" not in ids("$ lspci | grep -i vga\n" + SI)


def test_zluda_operation_not_supported_is_not_the_cpu_fallback() -> None:
    # ComfyUI turns on torch's cudaMallocAsync backend for a "+cu" torch on a non-NVIDIA GPU
    # name (cuda_malloc.py), which ZLUDA does not implement: "operation not supported" there
    # is answered by --disable-cuda-malloc, not by a ZLUDA/driver reinstall
    text = (
        "Error occurred when executing KSampler:\n\nCUDA error: operation not supported\n"
        'File "C:\\ComfyUI-Zluda\\execution.py", line 151, in recursive_execute\n'
    )
    assert "framework.zluda-webui-cpu-fallback" not in ids(text)


def test_both_masks_at_zero_are_no_ordinal_problem() -> None:
    # ROCR=0 then HIP=0 is valid whenever ROCr left a GPU; False comes from something else
    # (a CPU-only torch wheel, no GPU at all)
    text = ("$ export ROCR_VISIBLE_DEVICES=0\n$ export HIP_VISIBLE_DEVICES=0\n$ python\n"
            ">>> import torch\n>>> torch.cuda.is_available()\nFalse\n")
    assert "hip.invalid-device-ordinal" not in ids(text)
    assert ids(text.replace("HIP_VISIBLE_DEVICES=0", "HIP_VISIBLE_DEVICES=1"))[0] == (
        "hip.invalid-device-ordinal"
    )


def test_apu_carveout_not_on_a_4_gib_discrete_card() -> None:
    text = ("torch.OutOfMemoryError: HIP out of memory. Tried to allocate 20.00 MiB. GPU 0 has a "
            "total capacity of 3.98 GiB of which 0 bytes is free. Of the allocated memory\n")
    assert "memory.apu-small-carveout-oom" not in ids(text)
    assert ids(text.replace("3.98 GiB", "512.00 MiB"))[0] == "memory.apu-small-carveout-oom"
