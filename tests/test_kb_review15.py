"""Round 15's hostile read (reviewer a): texts on which a widened entry cried wolf.

The texts are CONSTRUCTED, not captured outputs: each fills a message's format string (named
beside it) with a context that makes the entry's cause wrong. They test that a pattern keeps
its context; they say nothing about hardware.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from rocmprov.kb import match

CASES = [
    # constructed from gcc's '"%s" redefined' warning and old HIP's hip_common.h, which defines
    # __HIP_PLATFORM_HCC__ itself: an AMD build whose CMake passes -D__HIP_PLATFORM_HCC__ by hand
    # gets this harmless warning; it is not the NVIDIA flavour of HIP
    ("In file included from /opt/rocm-4.0.0/hip/include/hip/hip_runtime.h:54,\n"
     "                 from main.cpp:1:\n"
     '/opt/rocm-4.0.0/hip/include/hip/hip_common.h:32: warning: "__HIP_PLATFORM_HCC__" '
     "redefined\n"
     "   32 | #define __HIP_PLATFORM_HCC__\n"
     "<command-line>: note: this is the location of the previous definition\n",
     "compiler.hipcc-nvidia-platform-unset"),
    # constructed from whisper.cpp's "use gpu    = %d" and "whisper_backend_init_gpu: no GPU
    # found" and ggml-cuda.cu's "ggml_cuda_init: failed to initialize ROCm: %s": the HIP backend
    # is in the binary and was loaded, it found no device, so "no GPU backend in the binary"
    # is the wrong cause
    ("whisper_init_with_params_no_state: use gpu    = 1\n"
     "whisper_init_with_params_no_state: flash attn = 1\n"
     "ggml_cuda_init: failed to initialize ROCm: no ROCm-capable device is detected\n"
     "whisper_backend_init_gpu: no GPU found\n",
     "llm.llamacpp-no-usable-gpu-backend"),
    # constructed from whisper.cpp's whisper_backend_init_gpu (src/whisper.cpp@233fe1f): a GPU
    # exists and was found, only the -dev index asked for does not; the backend is there
    ("whisper_init_with_params_no_state: use gpu    = 1\n"
     "whisper_backend_init_gpu: device 0: CPU (type: 0)\n"
     "whisper_backend_init_gpu: device 1: ROCm0 (type: 1)\n"
     "whisper_backend_init_gpu: found GPU device 1: ROCm0 (type: 1, cnt: 0)\n"
     "whisper_backend_init_gpu: no GPU found\n",
     "llm.llamacpp-no-usable-gpu-backend"),
]


def test_whisper_without_a_gpu_backend_still_reaches_the_entry() -> None:
    # constructed from whisper.cpp's format strings: no ggml_cuda_init line at all
    text = (
        "whisper_init_with_params_no_state: use gpu    = 1\n"
        "whisper_init_with_params_no_state: flash attn = 1\n"
        "whisper_backend_init_gpu: no GPU found\n"
    )
    assert match(text)[0].id == "llm.llamacpp-no-usable-gpu-backend"


def test_a_dgpu_index_condition_does_not_claim_the_index_is_empty() -> None:
    # gfx110X-dgpu was a real TheRock index name in 2025 (TheRock PR 817), so the condition may
    # not say that the index holds no wheels at all
    data = yaml.safe_load(Path("rocmprov/data/kb/packages.yaml").read_text())
    (entry,) = [e for e in data["entries"] if e["id"] == "apt.pip-rocm-index-no-wheel-for-platform"]
    for cond in entry.get("conditions", []):
        assert "holds no rocm or torch wheels at all" not in cond["when"]
