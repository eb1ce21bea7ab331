"""Round 15, engineer 2: wordings widened from the programs' own format strings.

The texts are CONSTRUCTED, not captured outputs: each fills a message's format string (named
beside it) with sample values, to check that the widened pattern reaches its entry first and
that the same words in a healthy or unrelated situation do not. They say nothing about hardware.
"""

from __future__ import annotations

FIRST = [
    # pip's legacy resolver: InstallRequirement.__str__ adds "(from -r <file> (line N))"
    ("ERROR: Could not find a version that satisfies the requirement torch==2.0.1+rocm5.4.2 "
     "(from -r requirements.txt (line 1)) (from versions: 2.0.0, 2.0.1, 2.1.0)\n",
     "apt.pip-rocm-index-no-wheel-for-platform"),
    # pip's closing line alone (resolvelib factory.py: "No matching distribution found for {req}")
    ("ERROR: No matching distribution found for torch==2.3.1+rocm6.0\n",
     "apt.pip-rocm-index-no-wheel-for-platform"),
    # uv's report (prioritized_distribution.rs), wrapped at the terminal width
    ("  \u00d7 No solution found when resolving dependencies:\n"
     "  ╰─▶ Because torch==2.3.1+rocm6.0 has no\n"
     "      wheels with a matching platform tag (e.g., `win_amd64`) and you require\n"
     "      torch==2.3.1+rocm6.0, we can conclude that your requirements are unsatisfiable.\n",
     "apt.pip-rocm-index-no-wheel-for-platform"),
    # uv report.rs: "there is no version of {package}{set}"
    ("  ╰─▶ Because there is no version of torch==2.4.1+rocm6.1 and you require "
     "torch==2.4.1+rocm6.1, we can conclude that your requirements are unsatisfiable.\n",
     "apt.pip-rocm-index-no-wheel-for-platform"),
    # a family index name TheRock never published, with a pinned build: the index is empty
    ("Looking in indexes: https://rocm.nightlies.amd.com/v2-staging/gfx120X-dgpu/\n"
     "ERROR: Could not find a version that satisfies the requirement "
     "rocm[libraries,devel]==7.9.0rc20251008 (from versions: none)\n"
     "ERROR: No matching distribution found for rocm[libraries,devel]==7.9.0rc20251008\n",
     "apt.pip-rocm-index-no-wheel-for-platform"),
    # rocm_sdk/_devel.py before TheRock 0de4d6b
    ("ERROR: ROCm SDK development package is not installed. This can typically be obtained by "
     "installing `rocm-sdk[devel]` from your package manager\n",
     "pytorch.rocm-sdk-devel-not-installed"),
    # whisper.cpp: whisper_init_with_params_no_state, then whisper_backend_init_gpu
    ("whisper_init_with_params_no_state: use gpu    = 1\n"
     "whisper_init_with_params_no_state: flash attn = 1\n"
     "whisper_backend_init_gpu: no GPU found\n", "llm.llamacpp-no-usable-gpu-backend"),
    # CMake's warning inside a Nix build log, each line prefixed with the package name
    ("whisper-cpp> CMake Warning:\nwhisper-cpp>   Manually-specified variables were not used by "
     "the project:\nwhisper-cpp>\nwhisper-cpp>     GGML_HIPBLAS\n",
     "llm.ggml-hip-build-option-renamed"),
    # AMDGPU.jl src/AMDGPU.jl __init__
    ("┌ Warning: HSA runtime is unavailable, compilation and runtime functionality will be "
     "disabled.\n└ @ AMDGPU ~/.julia/packages/AMDGPU/abcde/src/AMDGPU.jl:178\n",
     "rocm.library-not-found"),
]  # fmt: skip

WOLVES = [
    # a CUDA pin is not a ROCm wheel
    ("ERROR: No matching distribution found for torch==2.5.1+cu124\n",
     "apt.pip-rocm-index-no-wheel-for-platform"),
    ("  ╰─▶ Because torch==2.5.1+cu124 has no wheels with a matching platform tag (e.g., "
     "`macosx_14_0_arm64`) and you require torch==2.5.1+cu124, we can conclude that your "
     "requirements are unsatisfiable.\n", "apt.pip-rocm-index-no-wheel-for-platform"),
    # a dependency of a +rocm torch is another package's problem
    ("ERROR: No matching distribution found for pytorch-triton-rocm==2.2.0 "
     "(from torch==2.2.0+rocm5.7)\n", "apt.pip-rocm-index-no-wheel-for-platform"),
    # the GPU was switched off on purpose
    ("whisper_init_with_params_no_state: use gpu    = 0\n"
     "whisper_backend_init_gpu: no GPU found\n", "llm.llamacpp-no-usable-gpu-backend"),
    # the current switch name is not the renamed one
    ("CMake Warning:\n  Manually-specified variables were not used by the project:\n\n"
     "    GGML_HIP_UMA\n", "llm.ggml-hip-build-option-renamed"),
    # another CK failure is not a code object that failed to load
    ("RuntimeError: HIP Function Failed (/src/ck_tile/host/kernel_launch_hip.hpp,51) "
     "invalid device function\n", "pytorch.hip-shared-object-init-failed"),
]  # fmt: skip
