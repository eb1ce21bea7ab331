"""Review 27W: wordings taken from the programs' histories (r27-w2, r27-w3) that the same
program prints in other situations (macOS, NVIDIA/CUDA builds, Vulkan builds, other dkms
statuses or modules, NVIDIA-only NCCL releases) are narrowed or removed. Every text below is
constructed from the cited format strings to test the rule; none is captured output."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from kb_helpers import ids

from rocmprov.kb import match

FIXTURES = Path(__file__).parent / "fixtures" / "kb-wordings"
OLLAMA_APU = "memory.ollama-apu-vram-only-cpu-fallback"


# H1: Ollama's darwin branch (llm/llm.go f9cd55c7 L70-76, 08f1e189 L89) prints both lines
@pytest.mark.parametrize("line", [
    'time=2024-03-20T10:00:00.000+01:00 level=INFO source=llm.go:76'
    ' msg="not enough vram available, setting num_gpu=0"',
    "2024/01/09 12:00:00 llm.go:89: not enough vram available, falling back to CPU only",
])  # fmt: skip
def test_ollama_s_macos_vram_lines_are_not_the_apu_carve_out(line: str) -> None:
    assert OLLAMA_APU not in ids(line)


def test_ollama_s_slog_vram_line_still_is_the_apu_carve_out() -> None:
    line = 'level=INFO source=llm.go:111 msg="not enough vram available, falling back to CPU only"'
    assert OLLAMA_APU in ids(line)


# H2: dkms 3.1 autoinstall status 6 (version sanity), 21 (headers), 13 (BUILD_DEPENDS) are
# not build failures; 10 and 7 are (dell/dkms 793fdab5 dkms.in L1748, L1180, L2894)
AUTOINSTALL_31 = "Autoinstall on 6.8.0-49-generic failed for module(s) {m}({rc})."
AUTOINSTALL_30 = "dkms autoinstall on 6.8.0-49-generic/x86_64 failed for {m}({rc})"


@pytest.mark.parametrize("form", [AUTOINSTALL_31, AUTOINSTALL_30])
@pytest.mark.parametrize("module, entry", [
    ("amdgpu", "dkms.amdgpu-build-failed"), ("nvidia", "dkms.other-module-build-failed"),
])  # fmt: skip
def test_dkms_autoinstall_status_is_a_build_failure_only_for_10_and_7(
    form: str, module: str, entry: str
) -> None:
    for rc in ("10", "7"):
        assert entry in ids(form.format(m=module, rc=rc)), rc
    for rc in ("6", "21", "13"):
        assert entry not in ids(form.format(m=module, rc=rc)), rc


def test_dkms_version_sanity_refusal_is_not_an_amdgpu_build_failure() -> None:
    log = (
        "Error! Module version 6.8.5 for amdgpu.ko.zst\n"
        "is not newer than what is already found in kernel 6.8.0-49-generic (6.8.5).\n"
        "You may override by specifying --force.\n\n"
        "Error! Installation aborted.\n\n"
        "Autoinstall on 6.8.0-49-generic failed for module(s) amdgpu(6).\n"
    )
    found = ids(log)
    assert "dkms.module-not-newer-than-kernel" in found
    assert "dkms.amdgpu-build-failed" not in found


# H3: cuBLAS status 7 is INVALID_VALUE in a CUDA build; "CUDA error 2 ... out of memory" is
# cudaErrorMemoryAllocation there (ggml ef336850 ggml-cuda.cu L165-166, L187-191)
def test_ggml_numbered_cublas_error_is_hipblas_only_for_5_and_6() -> None:
    line = "cuBLAS error {n} at /home/user/llama.cpp/ggml-cuda.cu:6246\ncurrent device: 0"
    assert "llm.ggml-hipblas-internal-error" in ids(line.format(n=6))
    assert "llm.ggml-hipblas-internal-error" in ids(line.format(n=5))
    assert "llm.ggml-hipblas-internal-error" not in ids(line.format(n=7))


def test_ggml_cuda_error_2_is_not_the_llamacpp_buffer_oom() -> None:
    line = "CUDA error 2 at /home/u/llama.cpp/ggml-cuda.cu:7036: out of memory\ncurrent device: 0"
    assert "memory.llamacpp-gpu-buffer-oom" not in ids(line)


# H4: bitsandbytes 0.47 prints these whenever torch.cuda.is_available() is False (ea4b59f3
# cextension.py L295, cuda_specs.py L56): Mac, CPU torch, a broken NVIDIA driver
@pytest.mark.parametrize("line", [
    "The 8-bit optimizer is not available on your device, only available on CUDA for now.",
    "Method 'quantize_4bit' not available in CPU-only version of bitsandbytes.",
])  # fmt: skip
def test_bitsandbytes_no_cuda_lines_are_not_a_cpu_only_rocm_build(line: str) -> None:
    assert "framework.bitsandbytes-cpu-only-build" not in ids(line)


# M1: `#if GGML_USE_CUBLAS || GGML_USE_SYCL` ... #else (ollama 9ac6440d server.cpp L2449):
# Vulkan, Metal and Kompute builds print it too
@pytest.mark.parametrize("line", [
    "llama.cpp was compiled without cuBLAS. It is not possible to set a main GPU.",
    "llama.cpp was compiled without CUDA/SYCL/Vulkan. Setting the split mode has no effect.",
])  # fmt: skip
def test_llamacpp_compiled_without_cublas_is_not_a_cpu_only_build(line: str) -> None:
    log = "ggml_vulkan: Found 1 Vulkan devices:\n" + line
    assert "llm.llamacpp-no-usable-gpu-backend" not in ids(log)


# M2: dkms 3.1 "Module <path> already installed" (793fdab5 dkms.in L1048) for any module
def test_dkms_already_installed_is_the_amdgpu_version_check_only_for_amdgpu() -> None:
    line = ("Module /lib/modules/6.8.0-45-generic/kernel/drivers/{p}.ko.zst already installed"
            " at version {v}, override by specifying --force")  # fmt: skip
    amdgpu = line.format(p="gpu/drm/amd/amdgpu/amdgpu", v="6.8.5")
    ice = line.format(p="net/ethernet/intel/ice/ice", v="1.14.9")
    assert "dkms.module-not-newer-than-kernel" in ids(amdgpu)
    assert "dkms.module-not-newer-than-kernel" not in ids(ice)


# M3: wordings of NVIDIA/nccl that no RCCL release prints (2.24/2.29 socket code, 2.29 GIN,
# 2.30 ibvsymbols.cc, which logs each name it tries even when libibverbs.so.1 then loads)
@pytest.mark.parametrize("line, entry", [
    ("node03:1:1 [0] os/linux.cc:288 NCCL WARN ncclOsSocketStartConnect: connect to"
     " 10.10.1.4<43719> returned No route to host, exceeded error retry count after 35 attempts",
     "rccl.socket-interface-unusable"),
    ("node03:1:1 [0] misc/socket.cc:543 NCCL WARN socketStartConnect: connect returned No route to"
     " host, exceeded error retry count (35)", "rccl.socket-interface-unusable"),
    ("node03:1:1 [0] NCCL WARN Call to socket failed: Address family not supported by protocol",
     "rccl.socket-interface-unusable"),
    ("node03:1:1 [0] NCCL WARN NET/IB/GIN: Got completion from peer 10.1.1.2<1234> with status=12"
     " opcode=0 len=0 vendor err 129 (Recv)", "rccl.ib-completion-retry-exceeded"),
    ("node05:3321:3321 [0] NCCL INFO Count not open libibverbs.so",
     "noise.rccl-libibverbs-not-found"),
])  # fmt: skip
def test_nccl_only_wordings_are_not_rccl_s(line: str, entry: str) -> None:
    assert entry not in ids(line)


def test_rccl_s_own_wordings_still_match() -> None:
    ib = ("NCCL WARN NET/IB : Got completion from peer 10.1.1.2<1234> with error 12, opcode 1,"
          " len 0, vendor err 129 (Recv)")  # fmt: skip
    assert "rccl.ib-completion-retry-exceeded" in ids(ib)
    assert "noise.rccl-libibverbs-not-found" in ids("NCCL INFO Failed to open libibverbs.so[.1]")


# L1: the 2023 ggml_init_cublas switch lines come from CUDA builds as well (ggml ff904332)
def test_ggml_init_cublas_switch_line_is_not_hip_build_noise() -> None:
    noise = "noise.ggml-cuda-init-device-list"
    assert noise not in ids("ggml_init_cublas: GGML_CUDA_FORCE_MMQ:   no")
    assert noise in ids("ggml_init_cublas: found 1 ROCm devices:")


# L2: MIOpen logger.cpp (2d1fd997 L186-197) prints the elapsed time with setw(8)
def test_miopen_elapsed_time_fixtures_print_the_time_as_setw_8_does() -> None:
    for path in FIXTURES.glob("miopen.*.src-elapsed-time-prefix.txt"):
        text = path.read_text().split("---\n", 1)[1]
        field = re.search(r"MIOpen\(HIP\)([ \d.]+): ", text)
        assert field, path.name
        value = field.group(1)
        assert value == value.strip().rjust(8), path.name
        assert path.name.split(".src-")[0] in ids(text), path.name


# L3: the rocBLAS "Cannot read" path is bounded (a path of over 260 characters is no path)
def test_rocblas_cannot_read_path_is_bounded() -> None:
    line = (
        "rocBLAS error: Cannot read C:\\Program Files\\{d}\\rocblas\\library\\TensileLibrary.dat:"
        " No such file or directory"
    )
    assert "rocblas.tensile-library-unreadable" in ids(line.format(d="AMD\\ROCm\\5.5\\bin"))
    assert "rocblas.tensile-library-unreadable" not in ids(line.format(d="x " * 200))


# L4: ggml's "no ROCm devices found" came after CUDA_CHECK(cudaDeviceSynchronize()); dkms's
# "can't be generated" lines mean openssl failed (793fdab5 dkms.in L1249-1256)
def test_ggml_no_rocm_devices_found_line_is_not_an_entry() -> None:
    line = "ggml_init_cublas: no ROCm devices found, ROCm will be disabled"
    assert "hip.no-rocm-capable-device" not in ids(line)


def test_dkms_key_cannot_be_generated_names_openssl() -> None:
    line = (
        "Key file /var/lib/dkms/mok.key not found and can't be generated, modules won't be signed"
    )
    found = [m for m in match(line) if m.id == "dkms.modules-wont-be-signed"]
    assert found and "openssl" in found[0].cause and "1.1.1" in found[0].cause
