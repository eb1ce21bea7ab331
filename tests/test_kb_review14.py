"""Round 14's hostile read (issue 28): texts on which a new or widened entry cried wolf.

The texts are CONSTRUCTED, not captured outputs: each joins a message's format string (named
beside it) with a device name or a command line that makes the entry's cause wrong. They test
that a pattern keeps its context; they say nothing about hardware.
"""

from __future__ import annotations

from rocmprov.kb import match

NOT_COMPILED = "AssertionError: Torch not compiled with CUDA enabled"  # torch/cuda/__init__.py

CASES = [
    # an NVIDIA laptop's Radeon iGPU, an Intel Mac's Radeon Pro, DirectML, a ZLUDA web UI:
    # the CPU-only wheel is the answer, not "reinstall from the ROCm index"
    ("GPU 0: AMD Radeon(TM) Graphics (iGPU), GPU 1: NVIDIA GeForce RTX 3060 Laptop GPU\n"
     + NOT_COMPILED, "apt.cuda-torch-on-amd"),
    ("MacBook Pro 2019 (Intel), AMD Radeon Pro 5500M, macOS 13: " + NOT_COMPILED,
     "apt.cuda-torch-on-amd"),
    ("Using torch-directml on AMD Radeon RX 6600 (Windows); " + NOT_COMPILED,
     "apt.cuda-torch-on-amd"),
    ("ROCm: agents=['gfx1031']\nLaunching Web UI with arguments: --use-zluda\n" + NOT_COMPILED,
     "apt.cuda-torch-on-amd"),
    # torch/cuda/memory.py on a CUDA build: "CUDA error" is never the ROCm wording
    ('  File "/opt/venv/lib/python3.10/site-packages/torch/cuda/memory.py", line 712, in '
     "mem_get_info\n    return torch.cuda.cudart().cudaMemGetInfo(device)\n"
     "RuntimeError: CUDA error: invalid argument\n", "rocr.incompatible-kernel-userspace"),
    # glibc ld.so for an MPI program, MPICH's soname: not a community torch wheel
    ("$ mpirun -np 8 ./build/all_reduce_perf -b 8 -e 128M\n./build/all_reduce_perf: error while "
     "loading shared libraries: libmpi.so.40: cannot open shared object file: No such file or "
     "directory\n", "pytorch.custom-wheel-system-openmpi-missing"),
    (">>> from mpi4py import MPI\nImportError: libmpi.so.12: cannot open shared object file: "
     "No such file or directory\n", "pytorch.custom-wheel-system-openmpi-missing"),
    # ATen/cuda/Exceptions.h: ALLOC_FAILED on the handle is out of video memory
    ('  File "C:\\ComfyUI-Zluda\\comfy\\ops.py", line 68, in forward\nRuntimeError: CUDA error: '
     "CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`\n",
     "framework.zluda-cublas-call-failed"),
    # LM Studio's engine error with the CUDA runtime: a missing DLL, not the ROCm runtime
    ("Runtime: CUDA 12 llama.cpp (Windows) v1.52.0, GPU: NVIDIA GeForce RTX 4070\nError: Engine "
     "protocol runtime llama-server for abc exited before becoming healthy. "
     "exitCode=3221225781\n", "llm.lmstudio-llama-server-dll-not-found"),
]  # fmt: skip


def test_the_omniperf_roofline_line_ranks_below_a_failure() -> None:
    text = (
        "[roofline] Roofline temporarily disabled in MI300\n"
        "rocminfo: HSA_STATUS_ERROR_OUT_OF_RESOURCES: The runtime failed to allocate the "
        "necessary resources.\n"
    )
    found = [m.id for m in match(text)]
    assert found[-1] == "rocm.omniperf-roofline-disabled-mi300" and len(found) > 1, found


def test_an_apu_only_machine_is_not_told_to_disable_its_gpu() -> None:
    text = (
        "rocprofiler_iterate_agent_supported_counters failed for agent 1 (gfx1150) :: Agent HW "
        "architecture is not supported, no counter metrics found.\n"
        "terminate called after throwing an instance of 'std::out_of_range'\n"
    )
    (top,) = [m for m in match(text) if m.id == "rocm.rocprofv3-pmc-igpu-no-counters-crash"]
    assert "only GPU" in top.fix and "If the machine also has a discrete GPU" in top.fix


def test_sdnext_windows_line_gets_the_windows_fix() -> None:
    text = "WARNING  ROCm: torch-rocm is installed, but none of build targets are available\n"
    (top,) = [m for m in match(text) if m.id == "llm.sdwebui-torch-cannot-use-gpu"]
    assert (
        top.condition.startswith("SD.Next on Windows") and "download.pytorch.org has no" in top.fix
    )
