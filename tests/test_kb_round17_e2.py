"""Round 17 (engineer 2): Lemonade's refused ROCm backend, Ollama's hipBLASLt lines, HIP headers
older than the code, hostcall without PCIe atomics. The texts are CONSTRUCTED, not captured
outputs: each fills a message's format string (named in the comment, from the program's source)
with typical values, or is a healthy/unrelated line of the same program that must not match."""

from __future__ import annotations

import pytest

from rocmprov.kb import match
from tests.kbcases import assert_silent

LEADS = [
    # lemonade src/cpp/server/server.cpp ("Cannot install <recipe>:<backend> on this system:
    # <message>") with system_info.cpp's "Unsupported GPU: <family>"
    ("Error: Cannot install sd-cpp:rocm on this system: Unsupported GPU: gfx1103\n",
     "llm.lemonade-rocm-backend-unsupported-gpu"),
    # the same state in the `lemonade backends` table
    ("llamacpp            rocm        unsupported     Unsupported GPU: gfx1036        -\n",
     "llm.lemonade-rocm-backend-unsupported-gpu"),
    # runtime_config.cpp: the allowed list has no rocm (LEMONADE_LLAMACPP_BACKEND=rocm)
    ("2026-06-01 10:00:00.000 [Error] (Server) Failed to load model: 'llamacpp.backend' must be "
     "one of: auto, vulkan, cpu\n", "llm.lemonade-rocm-backend-unsupported-gpu"),
    # system_info.cpp get_unsupported_backend_error
    ("Failed to load model: No compatible device detected for llamacpp (rocm backend). Requires: "
     "Radeon RX 7000 series (RDNA3), Radeon RX 9000 series (RDNA4).\n",
     "llm.lemonade-rocm-backend-unsupported-gpu"),
    # hipBLASLt's loader (rocblaslt error: Cannot read <path>: <strerror>) in a container Ollama
    ('time=2026-05-01T10:00:00.000Z level=INFO source=server.go:1 msg=x\nrocblaslt error: Cannot '
     'read "/usr/lib/ollama/rocm/hipblaslt/library/TensileLibrary_lazy_gfx1200.dat": No such '
     'file or directory\n', "rocblas.hipblaslt-no-library-for-arch"),
    # clang's diagnostic for a two-argument call against HIP < 6.1 headers, koboldcpp's file
    ("ggml/src/ggml-cuda/ggml-cuda.cu:3301:28: error: no matching function for call to "
     "'hipStreamWaitEvent'\n", "compiler.hip-headers-older-than-code"),
    # clr rocvirtual.cpp LogError under a CI runner's prefix (AMD_LOG_LEVEL=3, Windows pid/tid)
    ("ERROR    test_rocm_sanity:test_rocm_sanity.py:44 :1:rocvirtual.cpp           :3869: "
     "2568711021 us: [pid:7068 tid: 0xbc741] Pcie atomics not enabled, hostcall not supported\n"
     "hipErrorIllegalState\n", "hip.hostcall-needs-pcie-atomics"),
]  # fmt: skip

SILENT = [
    # rocm is offered: the value was a typo, not an unsupported GPU
    ("Failed to load model: 'llamacpp.backend' must be one of: auto, rocm, vulkan, cpu\n",
     "llm.lemonade-rocm-backend-unsupported-gpu"),
    ("'sd-cpp.backend' must be one of: auto, rocm-stable, cpu\n",
     "llm.lemonade-rocm-backend-unsupported-gpu"),
    # another backend refused (an NVIDIA card on the vulkan/cuda recipes)
    ("Error: Cannot install llamacpp:cuda on this system: Unsupported GPU: sm_50 (compute "
     "capability 5.0)\n", "llm.lemonade-rocm-backend-unsupported-gpu"),
    # a healthy `lemonade backends` row and an NPU-only requirement
    ("llamacpp            rocm        installed       b1260                          -\n",
     "llm.lemonade-rocm-backend-unsupported-gpu"),
    ("flm                 npu         unsupported     Requires AMD XDNA 2 AMD NPU    -\n",
     "llm.lemonade-rocm-backend-unsupported-gpu"),
    # the Ollama condition needs Ollama's path: PyTorch's own hipBLASLt keeps the PyTorch fix
    # (checked by the test below: the entry leads, its fix is not the Ollama one)
    ("rocblaslt error: Cannot read /opt/venv/lib/python3.12/site-packages/torch/lib/hipblaslt/"
     "library/TensileLibrary_lazy_gfx1201.dat: No such file or directory\n", "ollama"),
    # CUDA's cudaStreamWaitEvent under gcc (whisper.cpp on MinGW), and the working 3-arg call
    ("ggml-cuda.cu:3330:59: error: too few arguments to function 'cudaError_t "
     "cudaStreamWaitEvent(cudaStream_t, cudaEvent_t, unsigned int)'\n",
     "compiler.hip-headers-older-than-code"),
    ("ggml-cuda.cu:120:5: note: candidate function not viable: requires 3 arguments, but 2 were "
     "provided (hipEventRecord)\n", "compiler.hip-headers-older-than-code"),
    # amdgpu's boot line alone (GPUs from gfx9 on run without atomics), and the other hostcall
    # error of the same function (atomics present, buffer creation failed)
    ("[    5.101] amdgpu 0000:03:00.0: amdgpu: PCIE atomic ops is not supported\n",
     "hip.hostcall-needs-pcie-atomics"),
    (":1:rocvirtual.cpp           :3230: 99 us: [pid:1 tid: 0x1] Kernel expects a hostcall "
     "buffer, but none found\n", "hip.hostcall-needs-pcie-atomics"),
]  # fmt: skip


@pytest.mark.parametrize("text, wolf", SILENT)
def test_the_entry_stays_silent_where_its_cause_is_wrong(text: str, wolf: str) -> None:
    if wolf == "ollama":
        found = match(text)
        assert found and found[0].id == "rocblas.hipblaslt-no-library-for-arch"
        assert not found[0].fix.startswith("In Ollama"), found[0].fix
        return
    assert_silent(text, wolf)
