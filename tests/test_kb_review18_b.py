"""Round 18 hostile review (b): counter-examples that failed before the review's fixes.
All texts are CONSTRUCTED (say where from in each comment), none is a captured report."""

from __future__ import annotations

from rocmprov.kb import match

CT2_INSUFFICIENT = ("RuntimeError: CUDA failed with error CUDA driver version is insufficient "
                    "for CUDA runtime version\n")  # fmt: skip
CT2_NO_DEVICE = "RuntimeError: CUDA failed with error no CUDA-capable device is detected\n"


def _steps(n: int) -> str:
    return "".join(f"[INFO] step {i} ok\n" for i in range(n))


LEADS = [
    # An AMD box whose script probes nvidia-smi first: the shell's "not found" (dash's and
    # bash's wording) or Python's FileNotFoundError shows there is NO NVIDIA driver; it vetoed
    # framework.ctranslate2-no-gpu-build before the fix. Constructed from CTranslate2's
    # "CUDA failed with error " + cudaGetErrorString and the shells' messages.
    ("Detected AMD Radeon RX 7900 XTX\n/bin/sh: 1: nvidia-smi: not found\n" + _steps(2)
     + CT2_INSUFFICIENT, "framework.ctranslate2-no-gpu-build"),
    ("Using ROCm 6.2 on gfx1100\nbash: nvidia-smi: command not found\n" + _steps(2)
     + CT2_NO_DEVICE, "framework.ctranslate2-no-gpu-build"),
    (CT2_NO_DEVICE + "FileNotFoundError: [Errno 2] No such file or directory: 'nvidia-smi'\n"
     + "Using ROCm 6.2 on gfx1100\n", "framework.ctranslate2-no-gpu-build"),
    # MIGraphX's "No configs to tune" on a release other than ROCm 5.5 (compile_ops.cpp of
    # ROCm 5.7-6.2): still this entry, whose text must no longer blame ROCm 5.5 alone
    ("RuntimeError: /src/AMDMIGraphX/src/targets/gpu/compile_ops.cpp:159: benchmark: No "
     "configs to tune\n", "framework.migraphx-hiprtc-no-configs-to-tune"),
]  # fmt: skip

SILENT = [
    # an NVIDIA driver tool next to the message still vetoes (the fix narrows, not removes)
    ("| NVIDIA-SMI 470.199.02   Driver Version: 470.199.02   CUDA Version: 11.4     |\n"
     + _steps(3) + CT2_INSUFFICIENT, "framework.ctranslate2-no-gpu-build"),
    ("Using ROCm 6.2 on gfx1100\n" + _steps(2) + CT2_NO_DEVICE
     + "sh: 1: nvidia-smi: Permission denied\n", "framework.ctranslate2-no-gpu-build"),
    # CUDA's own status on a data-centre NVIDIA card (`nvidia-smi -L`'s line, torch's
    # get_device_name): not HIP's code. Before the fix the CUDA-prefix filter knew only
    # GeForce/RTX/Quadro/Tesla/nvidia-smi tables. Constructed from PyTorch's
    # "CUDA error: %s" (c10/cuda/CUDAException) and nvidia-smi -L's format.
    ("GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-0a1b2c3d-0000-1111-2222-333344445555)\n"
     "RuntimeError: CUDA error: no kernel image is available for execution on the device\n",
     "hip.no-binary-for-gpu"),
    ("Using device NVIDIA A100-SXM4-80GB\nRuntimeError: CUDA error: invalid argument\n",
     "code.hip.hipErrorInvalidValue"),
    ("GPU 0: NVIDIA L40S (UUID: GPU-5c2b0a0e-1111-2222-3333-444455556666)\n"
     "RuntimeError: CUDA error: no kernel image is available for execution on the device\n",
     "hip.no-binary-for-gpu"),
]  # fmt: skip



def test_cuda_prefix_on_an_amd_machine_still_reads_hips_code() -> None:
    # the counterpart: an Instinct card named the same way keeps HIP's reading
    text = ("GPU 0: AMD Instinct MI250X\n"
            "RuntimeError: CUDA error: no kernel image is available for execution on the device\n")
    assert "hip.no-binary-for-gpu" in [m.id for m in match(text)]


def _cause_and_fix(entry: str, text: str) -> tuple[str, str]:
    found = {m.id: m for m in match(text)}
    assert entry in found, list(found)
    m = found[entry]
    return m.cause, m.fix


def test_no_configs_to_tune_is_not_blamed_on_rocm_5_5_alone() -> None:
    # before: "MIGraphX's maintainers traced it to hipRTC" for every occurrence, while the
    # message shipped in MIGraphX of ROCm 5.7 to 6.2 and was reported on ROCm 6.0.1 (issue 2765)
    cause, fix = _cause_and_fix("framework.migraphx-hiprtc-no-configs-to-tune",
                                "benchmark: No configs to tune\n")
    assert "MIGRAPHX_TRACE_BENCHMARKING" in fix
    assert "6.0.1" in cause


def test_jax_fix_names_the_extra_of_current_releases() -> None:
    # before: only `jax[rocm]`, an extra that jax 0.9.2 replaced by jax[rocm7-local]
    cause, fix = _cause_and_fix(
        "framework.jax-jaxlib-version-mismatch",
        "RuntimeError: jaxlib version 0.9.2 is newer than and incompatible with jax version "
        "0.9.1. Please update your jax and/or jaxlib packages.\n")
    assert "rocm7-local" in fix
    assert "0.9.1" in cause  # the ROCm plugins' skipped version check is dated


def test_deepspeed_mismatch_cause_names_no_absent_symbol() -> None:
    # before: "the ext shown in your log ... does not export the symbol shown in your log" for
    # DeepSpeed's check, which names neither (constructed from builder.py's format string)
    cause, _ = _cause_and_fix(
        "framework.torch-extension-built-for-other-torch",
        "RuntimeError: PyTorch version mismatch! DeepSpeed ops were compiled and installed with "
        "a different version than what is being used at runtime. Please re-install DeepSpeed or "
        "switch torch versions. Install torch version=2.4, Runtime torch version=2.5\n")
    assert "shown in your log" not in cause
    assert cause.startswith("DeepSpeed ops")


def test_tf_rocm_versions_none_mentions_an_unreachable_index() -> None:
    # constructed from pip's retry warning and resolver message (offline machine)
    text = ("WARNING: Retrying (Retry(total=4, connect=None, read=None, redirect=None, "
            "status=None)) after connection broken by 'NewConnectionError(\"Failed to establish "
            "a new "
            "connection: [Errno -3] Temporary failure in name resolution\")': "
            "/simple/tensorflow-rocm/\n"
            "ERROR: Could not find a version that satisfies the requirement tensorflow-rocm "
            "(from versions: none)\n")
    cause, fix = _cause_and_fix("framework.tf-rocm-no-wheel-for-python", text)
    assert "Retrying" in cause and "proxy" in fix
