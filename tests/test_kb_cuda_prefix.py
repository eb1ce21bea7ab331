"""A HIP status message after CUDA's prefix ("CUDA error: invalid device function") is HIP's
code only on an AMD machine: ggml and hipified programs print CUDA's prefix on ROCm builds,
but beside an NVIDIA card the line is CUDA's own status. The texts are CONSTRUCTED from ggml's
format strings (ggml/src/ggml-cuda/ggml-cuda.cu: ggml_cuda_init's "  Device %d: %s, compute
capability %d.%d, VMM: %s" and ggml_cuda_error's "CUDA error: %s" / "  current device: %d, in
function %s at %s:%d") and nvidia-smi's table header."""

from __future__ import annotations

import pytest

from rocmprov.kb import match

ERROR = (
    "CUDA error: invalid device function\n"
    "  current device: 0, in function ggml_cuda_compute_forward at "
    "/src/ggml/src/ggml-cuda/ggml-cuda.cu:2300\n  err\n"
)
NVIDIA = [
    "ggml_cuda_init: found 1 CUDA devices:\n"
    "  Device 0: NVIDIA GeForce RTX 3090, compute capability 8.6, VMM: yes\n",
    "| NVIDIA-SMI 550.54.14   Driver Version: 550.54.14   CUDA Version: 12.4 |\n",
    "  Device 0: Tesla V100-SXM2-16GB, compute capability 7.0, VMM: yes\n",
]
AMD = [
    "ggml_cuda_init: found 1 ROCm devices:\n"
    "  Device 0: AMD Radeon RX 6700 XT, compute capability 10.3, VMM: no\n",
    # a Vega card reports compute capability 9.0 on ROCm: no NVIDIA evidence
    "  Device 0: AMD Radeon VII, compute capability 9.0, VMM: no\n",
    "",
]


@pytest.mark.parametrize("machine", NVIDIA)
def test_cuda_prefixed_hip_message_on_an_nvidia_machine_is_no_hip_cause(machine: str) -> None:
    found = [m.id for m in match(machine + ERROR)]
    assert "hip.invalid-device-function" not in found, found
    assert "code.hip.hipErrorInvalidDeviceFunction" not in found, found


@pytest.mark.parametrize("machine", AMD)
def test_cuda_prefixed_hip_message_on_an_amd_machine_is_still_a_hip_cause(machine: str) -> None:
    found = [m.id for m in match(machine + ERROR)]
    assert found and found[0] == "hip.invalid-device-function", found


def test_hip_prefix_is_hips_even_beside_an_nvidia_word() -> None:
    text = NVIDIA[0] + "HIP error: invalid device function\n"
    assert "hip.invalid-device-function" in [m.id for m in match(text)]
