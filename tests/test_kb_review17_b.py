"""Review 17 (reviewer b): counter-examples for round 17's table changes.

apt.cuda-torch-on-amd's torch messages "Found no NVIDIA driver on your system" and "CUDA
driver version is insufficient for CUDA runtime version" are also an NVIDIA machine's own
(driver not loaded after a kernel update, driver older than the CUDA runtime). Gating them on
AMD GPU / ROCm evidence was tried and reverted (the held-out floor: AMD users paste the bare
message). They now stay silent when an NVIDIA card or driver tool is named within 15 lines
(nvidia-smi, GeForce, RTX/GTX, Quadro, Tesla, NVRM); the bare message is still answered, as
rocmprov runs on AMD hosts and the fix's first command tells the two builds apart. Texts marked
"constructed" are not captured output."""

from __future__ import annotations

import pytest

from rocmprov.kb import match

NVIDIA_DRIVER = (
    "RuntimeError: Found no NVIDIA driver on your system. Please check that you have an "
    "NVIDIA GPU and installed a driver from http://www.nvidia.com/Download/index.aspx\n"
)
INSUFFICIENT = (
    "RuntimeError: CUDA error: CUDA driver version is insufficient for CUDA runtime version\n"
)

SILENT = [
    # constructed from torch/cuda/__init__.py's _lazy_init message on an NVIDIA box whose
    # driver is not loaded (nvidia-smi's own failure line above it)
    ("$ nvidia-smi\nNVIDIA-SMI has failed because it couldn't communicate with the NVIDIA "
     "driver. Make sure that the latest NVIDIA driver is installed and running.\n$ python "
     "train.py\nTraceback (most recent call last):\n  File \"/home/u/.local/lib/python3.10/"
     "site-packages/torch/cuda/__init__.py\", line 302, in _lazy_init\n    "
     "torch._C._cuda_init()\n" + NVIDIA_DRIVER, "apt.cuda-torch-on-amd"),
    # constructed: the legacy THC wording on a GeForce box
    ("GPU 0: NVIDIA GeForce GTX 1080 Ti\nTHCudaCheck FAIL file=/pytorch/aten/src/THC/"
     "THCGeneral.cpp line=47 error=35 : CUDA driver version is insufficient for CUDA runtime "
     "version\n", "apt.cuda-torch-on-amd"),
]  # fmt: skip

# no vendor named: answered (the fix's first command prints torch.version.hip/cuda)
BARE = [
    # constructed: the message alone (no GPU vendor in the text)
    (NVIDIA_DRIVER, "apt.cuda-torch-on-amd"),
    # constructed from the CUDA runtime's cudaErrorInsufficientDriver string: an NVIDIA
    # driver older than the wheel's CUDA (e.g. a cu128 wheel on a 470 driver)
    ("Traceback (most recent call last):\n  File \"train.py\", line 12, in <module>\n    "
     "model.cuda()\n" + INSUFFICIENT, "apt.cuda-torch-on-amd"),
    # constructed: an AMD CPU (not a GPU) named on an NVIDIA machine
    ("CPU: AMD Ryzen 9 7950X\n" + NVIDIA_DRIVER, "apt.cuda-torch-on-amd"),
]  # fmt: skip

LEADS = [
    # constructed: the same messages beside a ROCm/AMD setup still lead
    ("Using ROCm 6.2 on gfx1100\n" + NVIDIA_DRIVER, "apt.cuda-torch-on-amd"),
    (INSUFFICIENT + "My GPU is an AMD Radeon RX 7900 XTX\n", "apt.cuda-torch-on-amd"),
    # constructed: the koboldcpp-rocm bundle now through rocblas.no-tensile-for-arch
    ("rocBLAS error: Cannot read C:\\Users\\u\\AppData\\Local\\Temp\\_MEI123\\library\\"
     "TensileLibrary.dat: No such file or directory for GPU arch : gfx1101\n",
     "rocblas.no-tensile-for-arch"),
]  # fmt: skip


@pytest.mark.parametrize("text, entry", BARE)
def test_a_bare_message_is_answered_with_a_check_that_tells_the_builds_apart(
    text: str, entry: str
) -> None:
    found = match(text)
    assert found and found[0].id == entry, [m.id for m in found]
    assert "torch.version.hip" in str(found[0].fix) and "torch.version.cuda" in str(found[0].fix)
    # the lines read around the message to rule an NVIDIA card out are not shown as evidence
    shown = [text.splitlines().index(found[0].evidence[0]) + 1]
    assert list(found[0].lines) == shown, found[0].lines


def test_koboldcpp_bundle_condition_applies() -> None:
    text = LEADS[2][0]
    m = match(text)[0]
    assert "_MEI" in str(m.fix) or "koboldcpp" in str(m.fix).lower(), m.fix


def test_igpu_case_still_leads_with_its_own_entry() -> None:
    # constructed from the koboldcpp-rocm .exe wording (its fixture) with the Ryzen iGPU's
    # target: the removed llm.koboldcpp-rocm-bundle-missing-tensile had a gfx1036 condition;
    # rocblas.igpu-gfx1036-picked still outranks the merged entry's _MEI condition
    text = ("rocBLAS error: Cannot read C:\\Users\\u\\AppData\\Local\\Temp\\_MEI80962\\library\\"
            "TensileLibrary.dat: No such file or directory for GPU arch : gfx1036\n")
    assert match(text)[0].id == "rocblas.igpu-gfx1036-picked"
