"""Review 17 (reviewer b): counter-examples for round 17's table changes.

apt.cuda-torch-on-amd's torch messages "Found no NVIDIA driver on your system" and "CUDA
driver version is insufficient for CUDA runtime version" are, on their own, an NVIDIA
machine's (driver not loaded after a kernel update, driver older than the CUDA runtime);
they name an AMD cause with no AMD evidence in the text. Gating them on the AMD GPU / ROCm
evidence of the entry's "Torch not compiled" patterns was tried and reverted (held-out
floor), so those counter-examples are a strict xfail. Texts marked "constructed" are not
captured output."""

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
    # constructed: the message alone (no GPU vendor in the text)
    (NVIDIA_DRIVER, "apt.cuda-torch-on-amd"),
    # constructed from the CUDA runtime's cudaErrorInsufficientDriver string: an NVIDIA
    # driver older than the wheel's CUDA (e.g. a cu128 wheel on a 470 driver)
    ("Traceback (most recent call last):\n  File \"train.py\", line 12, in <module>\n    "
     "model.cuda()\n" + INSUFFICIENT, "apt.cuda-torch-on-amd"),
    # constructed: the legacy THC wording on a GeForce box
    ("GPU 0: NVIDIA GeForce GTX 1080 Ti\nTHCudaCheck FAIL file=/pytorch/aten/src/THC/"
     "THCGeneral.cpp line=47 error=35 : CUDA driver version is insufficient for CUDA runtime "
     "version\n", "apt.cuda-torch-on-amd"),
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


# KNOWN WOLF, not fixed: gating both messages on AMD evidence (tried in 8c4eaaf) dropped the
# held-out top-1 figure below its 55% floor (54.1%), so it was reverted; strict xfail, so the
# test fails (XPASS) once a narrower fix lands and the marker must come off
@pytest.mark.xfail(strict=True, reason="apt.cuda-torch-on-amd's bare NVIDIA-driver messages")
@pytest.mark.parametrize("text, wolf", SILENT)
def test_no_amd_diagnosis_without_amd_evidence(text: str, wolf: str) -> None:
    assert wolf not in [m.id for m in match(text)]


@pytest.mark.parametrize("text, entry", LEADS)
def test_the_cause_leads(text: str, entry: str) -> None:
    found = [m.id for m in match(text)]
    assert found and found[0] == entry, found


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
