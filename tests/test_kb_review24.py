"""Review of session 24's table entries: each test is a defect a hostile read found, failing
before its fix. The inputs are written for the test (short, in the programs' real formats as
the entries' cited sources show them); they are not captures of real machines. Until this
file, the fixture tests checked only which entry answers first, never which of its conditions
gives the fix, so a condition placed first could take over its siblings' cases unnoticed: the
condition tests below pin that too."""

from __future__ import annotations

from pathlib import Path

from tests.kb_helpers import first as _first

WORDINGS = Path(__file__).resolve().parent / "fixtures" / "kb-wordings"

_HIP = ":1:hip_code_object.cpp      :{line} : 1885938{n:03d} us: "



def _hip_log(device: str, bundles: list[str]) -> str:
    lines = [
        "hipErrorNoBinaryForGpu: Unable to find code object for all current devices!",
        "  Devices:",
        f"    amdgcn-amd-amdhsa--{device} - [Not Found]",
        "  Bundled Code Objects:",
        "    host-x86_64-unknown-linux - [Unsupported]",
    ]
    lines += [f"    hipv4-amdgcn-amd-amdhsa--{b} - [code object v4 is amdgcn-amd-amdhsa--{b}]"
              for b in bundles]  # fmt: skip
    return "".join(_HIP.format(line=460 + i, n=i) + text + "\n" for i, text in enumerate(lines))


def test_a_consumer_card_missing_from_a_wheel_with_xnack_bundles_gets_its_own_advice() -> None:
    """The XNACK-mode condition came first and fired on any bundle list with an :xnack-
    suffix, so a gfx1031 card missing from a PyTorch wheel (which lists gfx90a:xnack+ and
    :xnack- objects) was told to set HSA_XNACK instead of HSA_OVERRIDE_GFX_VERSION=10.3.0."""
    wheel = ["gfx1030", "gfx900:xnack-", "gfx906:xnack-", "gfx908:xnack-", "gfx90a:xnack+"]
    wheel.append("gfx90a:xnack-")
    found = _first(_hip_log("gfx1031", wheel))
    assert found is not None and found.id == "hip.no-binary-for-gpu"
    assert found.condition.startswith("RDNA2 consumer GPU"), found.condition
    assert "HSA_OVERRIDE_GFX_VERSION=10.3.0" in found.fix
    # an Instinct GPU whose only code object is for the other XNACK mode keeps the XNACK answer
    mi250 = _first(_hip_log("gfx90a:sramecc+:xnack-", ["gfx90a:xnack+"]))
    assert mi250 is not None and mi250.id == "hip.no-binary-for-gpu"
    assert mi250.condition.startswith("the binary's code objects are built for one XNACK mode")
    assert "HSA_XNACK" in mi250.fix


def test_the_olcf_xnack_wording_still_gets_the_xnack_condition() -> None:
    text = (WORDINGS / "hip.no-binary-for-gpu.hip-log-bundle-xnack-mode.txt").read_text()
    found = _first(text.split("---\n", 1)[1])
    assert found is not None and found.condition.startswith("the binary's code objects")


def test_a_ggml_op_on_rdna4_is_told_to_rebuild_ggml_not_to_reinstall_torch() -> None:
    """The RDNA4 condition (PyTorch wheels) was placed before the ggml-op condition, so a
    llama.cpp log on gfx1201 was told to install torch from a ROCm 7 index."""
    log = (
        "ggml_cuda_init: found 1 ROCm devices:\n"
        "  Device 0: AMD Radeon RX 9070 XT, gfx1201 (0x1201), VMM: no, Wave Size: 32\n"
        "ggml_cuda_compute_forward: MUL_MAT failed\n"
        "ROCm error: invalid device function\n"
    )
    found = _first(log)
    assert found is not None and found.id == "hip.invalid-device-function"
    assert found.condition.startswith("llama.cpp, Ollama or another ggml program"), found.condition
    assert "torch" not in found.fix
    torch_log = "RuntimeError: HIP error: invalid device function\nDevice: gfx1201\n"
    on_torch = _first(torch_log)
    assert on_torch is not None and on_torch.id == "hip.invalid-device-function"


def test_ollamas_debug_line_on_an_nvidia_windows_host_is_not_an_amd_driver_problem() -> None:
    """Ollama logs "unable to load amdhip64_6.dll" at DEBUG on every Windows host without
    AMD's driver; with an NVIDIA card found it is only the AMD probe failing."""
    line = (
        'time=2024-09-02T10:11:02.410+02:00 level=DEBUG source=amd_windows.go:33 msg="unable to'
        " load amdhip64_6.dll, please make sure to upgrade to the latest amd driver: The"
        ' specified module could not be found."\n'
    )
    nvidia = (
        'time=2024-09-02T10:11:02.201+02:00 level=DEBUG source=gpu.go:291 msg="detected GPUs"'
        " count=1 library=C:\\Windows\\system32\\nvcuda.dll\n"
        + line
        + 'time=2024-09-02T10:11:02.411+02:00 level=INFO source=types.go:107 msg="inference'
        ' compute" id=GPU-0 library=cuda variant=v12 compute=8.6 name="NVIDIA GeForce RTX 3060"\n'
    )
    assert _first(nvidia) is None
    # review 28E F3: Ollama probes AMD on Intel and CPU-only hosts too, so the line alone is
    # no cause either; only with an AMD GPU named near it
    assert _first(line) is None
    amd = _first("GPU: AMD Radeon RX 6600\n" + line)  # constructed
    assert amd is not None and amd.id == "hip.windows-hip6-dll-missing"


def test_invalid_device_id_is_a_symptom_with_the_common_causes_first() -> None:
    """The bare torch assertion was answered as one rare cause (a second libamd_smi); most
    often the index is simply beyond the GPUs the process sees."""
    found = _first("    torch._C._cuda_setDevice(device)\nAssertionError: Invalid device id\n")
    assert found is not None and found.id == "pytorch.amdsmi-duplicate-lib-device-count-zero"
    assert found.kind == "symptom"
    assert "HIP_VISIBLE_DEVICES" in found.cause and "libamd_smi" in found.cause
    assert found.cause.index("HIP_VISIBLE_DEVICES") < found.cause.index("libamd_smi")


def test_a_fat_binary_crash_outside_rocm_6_0_is_not_the_three_architectures_bug() -> None:
    """`devices=std::vector of length N` counts every visible GPU, not architectures: an
    8-GPU MI300X node's crash in this function said nothing about ROCm 6.0's bug."""
    frame = (
        "#0  hip::FatBinaryInfo::ExtractFatBinaryUsingCOMGR (this=0x55555b582d50,"
        " devices=std::vector of length 8, capacity 8 = {{...}}) at {path}\n"
    )
    other = frame.format(path="/src/clr/hipamd/src/hip_fatbin.cpp:301")
    found = _first(other)
    assert found is None or found.id != "hip.fatbin-three-gpu-archs-segfault"
    debug = "/usr/src/debug/hip-runtime-amd"
    rocm60 = frame.format(path=f"{debug}/clr-rocm-6.0.2/hipamd/src/hip_fatbin.cpp:231")
    found = _first(rocm60)
    assert found is not None and found.id == "hip.fatbin-three-gpu-archs-segfault"


def test_rccls_ipc_handle_line_gets_no_cause_an_unmerged_pr_proposed() -> None:
    """The entry rested on a contributor's PR that was closed without merging: its cause was
    not established and its fix pointed at an RCCL that may not exist."""
    found = _first("NCCL WARN hipIpcGetMemHandle failed : invalid argument\n")
    assert found is None or found.id != "rccl.ipc-handle-unavailable-in-container"
