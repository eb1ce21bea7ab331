"""Session 25, review A: one test per finding the fixer changed. Each is a case the table of
1488db1 answered wrongly. The inputs are written for the test, in the programs' real formats as
the entries' cited sources and the reviewer's counter-examples show them; they are not captures
of real machines (except where a test reads a fixture)."""

from __future__ import annotations

from pathlib import Path

from rocmprov.kb import match
from tests.kb_helpers import first as _first
from tests.kb_helpers import ids as _ids

FIXTURES = Path(__file__).parent / "fixtures"






def _body(path: Path) -> str:
    return path.read_text(encoding="utf-8").split("\n---\n", 1)[1]


def test_1_rocprof_v1_context_create_failed_alone_is_not_an_unsupported_metric() -> None:
    """ "Error: Context Create failed" follows every rocprofiler v1 context failure."""
    for cause in ("Metrics list exceeds HW limits\n", "MetricsDict create failed\n"):
        text = cause + "Error: Context Create failed\nAborted (core dumped)\n"
        assert "rocm.rocprofiler-v1-metric-not-supported" not in _ids(text)
    text = (
        "Initialize(), input metric 'SQ_INSTS_VALU' is not supported on this hardware: gfx942\n"
        "Error: Context Create failed\n"
    )
    found = _first(text)
    assert found is not None and found.id == "rocm.rocprofiler-v1-metric-not-supported"


_NIL = (
    "Memory access fault by GPU node-1 (Agent handle: 0x55d5c3a1b2c0) on address (nil). "
    "Reason: Page not present or supervisor privilege.\n"
)


def test_2_null_address_fault_in_a_framework_run_gets_the_general_fix() -> None:
    torch = ">>> import torch\n>>> y = x @ x\n" + _NIL
    ollama = 'level=INFO source=server.go:619 msg="llama runner started in 4.27 seconds"\n' + _NIL
    for text in (torch, ollama):
        faults = [m for m in match(text) if m.id == "hsa.memory-access-fault"]
        assert faults and not faults[0].condition.startswith("the fault address is null"), text
    own = "srun -n 1 --gpus 1 ./saxpy\n" + _NIL
    found = _first(own)
    assert found is not None and found.id == "hsa.memory-access-fault"
    assert found.condition.startswith("the fault address is null")


def test_3_a_system_rocm_extension_build_in_a_venv_is_the_dev_package() -> None:
    text = (
        "  Building wheel for flash_attn (setup.py) ... error\n"
        "  /opt/rocm-6.2.0/bin/hipcc -I/home/u/venv/lib/python3.10/site-packages/torch/include "
        "-I/opt/rocm-6.2.0/include -c csrc/flash_api.hip -o build/flash_api.o "
        "--offload-arch=gfx90a\n"
        "  /home/u/venv/lib/python3.10/site-packages/torch/include/ATen/hip/cub.cuh:10:10: "
        "fatal error: 'hipcub/hipcub.hpp' file not found\n"
    )
    found = _first(text)
    assert found is not None and found.id == "compiler.rocm-library-dev-headers-not-found"
    assert "compiler.torch-extension-rocm-sdk-headers-not-found" not in _ids(text)
    for name in ("compiler.torch-extension-rocm-sdk-headers-not-found",
                 "compiler.rocm-library-dev-headers-not-found"):  # fmt: skip
        found = _first(_body(FIXTURES / "kb" / f"{name}.txt"))
        assert found is not None and found.id == name


_BTOP = (
    "2025/03/02 (10:11:12) | INFO: Failed to load librocm_smi64.so, AMD GPUs will not be "
    "detected: librocm_smi64.so: cannot open shared object file: No such file or directory\n"
)


def test_4_btop_line_on_a_hybrid_laptop_with_amdgpu_in_dmesg_keeps_the_install_fix() -> None:
    text = (
        '$ sudo dmesg | grep -E "i915|amdgpu" | head -4\n'
        "[    2.101] i915 0000:00:02.0: [drm] Finished loading DMC firmware i915/adlp_dmc.bin\n"
        "[    2.514] [drm] amdgpu kernel modesetting enabled.\n"
        "[    3.912] [drm] Initialized amdgpu 3.57.0 20150101 for 0000:03:00.0 on minor 1\n"
        "$ cat ~/.config/btop/btop.log\n" + _BTOP
    )
    found = _first(text)
    assert found is not None and found.id == "amdsmi.btop-librocm-smi64-not-found"
    intel = "[    2.101] i915 0000:00:02.0: [drm] Finished loading DMC firmware\n" + _BTOP
    assert _first(intel) is None and match(intel)[0].id == "noise.btop-librocm-smi64-no-amd-gpu"


def test_5_lld_32bit_lib_in_a_non_hip_link_is_not_an_unset_hip_path() -> None:
    text = (
        "ld.lld: error: /usr/lib/libm.so is incompatible with elf64-x86-64\n"
        "ld.lld: error: /lib/libc.so.6 is incompatible with elf64-x86-64\n"
    )
    assert "compiler.lld-lib-path-from-unset-variable" not in _ids(text)
    found = _first("make -f Makefile.hip\n" + text)
    assert found is not None and found.id == "compiler.lld-lib-path-from-unset-variable"
    assert "a -L in the link expands to /lib" in found.cause


def test_6_clang_cuda_builds_are_not_hip_ports() -> None:
    cudart = (
        "$ clang++ -x cuda --cuda-gpu-arch=sm_80 --cuda-path=/usr/local/cuda-12.4 -fuse-ld=lld "
        "-o saxpy saxpy.cu -lcudart\n"
        "ld.lld: error: unable to find library -lcudart\n"
    )
    hostdev = (
        "$ clang++ -x cuda --cuda-gpu-arch=sm_86 -c kernel.cu\n"
        "kernel.cu:3:7: note: candidate function not viable: call to __host__ function from "
        "__device__ function\n"
    )
    assert "compiler.hip-port-links-cudart" not in _ids(cudart)
    assert "compiler.hip-device-calls-host-function" not in _ids(hostdev)
    for name in ("compiler.hip-port-links-cudart", "compiler.hip-device-calls-host-function"):
        found = _first(_body(FIXTURES / "kb" / f"{name}.txt"))
        assert found is not None and found.id == name


def test_7_vmid0_condition_needs_a_gfxhub_cpc_fault() -> None:
    mmhub = (
        "amdgpu 0000:05:00.0: amdgpu: [mmhub] page fault (src_id:0 ring:40 vmid:0 pasid:0)\n"
        "amdgpu 0000:05:00.0: amdgpu: MMVM_L2_PROTECTION_FAULT_STATUS:0x00040B52\n"
        "amdgpu 0000:05:00.0: amdgpu: \t Faulty UTCL2 client ID: DCEDMC (0x5)\n"
    )
    old = _body(FIXTURES / "kb-wordings" / "kernel.gpuvm-page-fault.vm-id-pas-id-old-kernel.txt")
    for text in (mmhub, old):
        found = _first(text)
        assert found is not None and found.id == "kernel.gpuvm-page-fault"
        assert not found.condition.startswith("vmid 0"), found.condition
    cpc = (
        "amdgpu 0000:03:00.0: amdgpu: [gfxhub] page fault (src_id:0 ring:32 vmid:0 pasid:0)\n"
        "amdgpu 0000:03:00.0: amdgpu: GCVM_L2_PROTECTION_FAULT_STATUS:0x00040A40\n"
        "amdgpu 0000:03:00.0: amdgpu:          Faulty UTCL2 client ID: CPC (0x5)\n"
    )
    found = _first(cpc)
    assert found is not None and found.condition.startswith("vmid 0")


_MESA = (
    "gnome-shell[2101]: amdgpu: The CS has cancelled because the context is lost. This context "
    "is guilty of a hard recovery.\n"
)


def test_8_mesa_hard_recovery_after_a_ring_reset_is_the_ring_reset() -> None:
    text = "amdgpu 0000:c5:00.0: amdgpu: Ring gfx_0.0.0 reset succeeded\n" + _MESA
    found = _first(text)
    assert found is not None and found.id == "kernel.ring-reset-recovered"
    alone = _first(_MESA)
    assert alone is not None and alone.id == "kernel.gpu-reset"


def test_10_smu_metrics_fixture_is_the_reports_text_and_the_kernel_form_matches() -> None:
    body = _body(FIXTURES / "kb" / "firmware.smu-metrics-export-failed.txt")
    assert "multiple paths which lead to the `Failed to export SMU metrics table`" in body
    text = "[ 8123.1] amdgpu 0000:83:00.0: amdgpu: Failed to export SMU metrics table!\n"
    found = _first(text)
    assert found is not None and found.id == "firmware.smu-metrics-export-failed"


def test_11_gfx1151_gfx_ring_reset_wording_gives_the_gfxoff_condition() -> None:
    """1bit-MONSTER#2013's own lines (its wording fixture holds them): the base table answered
    kernel.gpu-reset (the Mesa line) first, without the GFXOFF fix."""
    text = (
        "hangs the gfx ring / display-present path on the Strix Halo iGPU (gfx1151).\n"
        "resets the ring (`Ring gfx_0.0.0 reset succeeded`)\n"
        "3. Mesa: `amdgpu: The CS has cancelled because the context is lost. This context is "
        "guilty of a hard recovery.`\n"
    )
    path = FIXTURES / "kb-wordings" / "kernel.ring-reset-recovered.gfx1151-gfx-ring-gnome-shell.txt"
    for sample in (text, _body(path) if path.exists() else text):
        found = _first(sample)
        assert found is not None and found.id == "kernel.ring-reset-recovered"
        assert found.condition.startswith("Strix Halo (gfx1151)")


def test_12_deepspeed_cuda_home_on_an_nvidia_machine_is_not_a_rocm_problem() -> None:
    tail = (
        '    raise MissingCUDAException("CUDA_HOME does not exist, unable to compile CUDA op(s)")\n'
        "deepspeed.ops.op_builder.builder.MissingCUDAException: CUDA_HOME does not exist, "
        "unable to compile CUDA op(s)\n"
    )
    nvidia = (
        "| NVIDIA-SMI 550.54.14              Driver Version: 550.54.14      CUDA Version: 12.4 |\n"
    )
    assert "framework.deepspeed-cuda-home-on-rocm" not in _ids(nvidia + tail)
    found = _first(tail)
    assert found is not None and found.id == "framework.deepspeed-cuda-home-on-rocm"
