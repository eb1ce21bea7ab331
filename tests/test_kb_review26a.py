"""Review A of session 26's table (issue 28: `rocmprov explain`): each test is a finding of a
hostile read of round 26's first branches, failing on the table before its fix.

The log texts below are synthetic reproducers, constructed to test each rule (the reviewer's
counter-examples, shortened); they are not fixtures and quote no report."""

from __future__ import annotations

from pathlib import Path

from rocmprov.kb.table import load_table
from tests.kb_helpers import first as _first
from tests.kb_helpers import ids as _ids

ROOT = Path(__file__).resolve().parent
WORDINGS = ROOT / "fixtures" / "kb-wordings"


def _entry(entry_id: str):
    return next(e for e in load_table().entries if e.id == entry_id)


def _sources(entry_id: str) -> str:
    return "\n".join(_entry(entry_id).sources)


def _text(entry_id: str) -> str:
    e = _entry(entry_id)
    return " ".join(
        [e.cause, e.fix] + [" ".join([c.when, c.fix or ""]) for c in getattr(e, "conditions", [])]
    )


# constructed to test the rule: CUDA's own error string in NVIDIA-only logs
CUDA_ONLY = [
    "THCudaCheck FAIL file=/pytorch/aten/src/THC/THCGeneral.cpp line=383 error=209 :"
    " no kernel image is available for execution on the device\n",
    "cupy_backends.cuda.api.runtime.CUDARuntimeError: cudaErrorNoKernelImageForDevice:"
    " no kernel image is available for execution on the device\n",
    "GPUassert: no kernel image is available for execution on the device kernel.cu 42\n",
    "RuntimeError: CUDA Error: no kernel image is available for execution on the device\n",
    "Cuda error: no kernel image is available for execution on the device\n",
    "error in modulated_deformable_im2col_cuda: no kernel image is available for execution on"
    " the device\n",
]


def test_no_binary_for_gpu_takes_no_bare_cuda_string() -> None:
    """1: the bare "no kernel image is available..." is CUDA's string; its only source stated
    another cause. The entry keeps its HIP-prefixed form."""
    for text in CUDA_ONLY:
        assert "hip.no-binary-for-gpu" not in _ids(text), text
    assert "sleepingrobots" not in _sources("hip.no-binary-for-gpu")
    assert not (WORDINGS / "hip.no-binary-for-gpu.no-kernel-image-bare.txt").exists()
    hip = "RuntimeError: HIP error: no kernel image is available for execution on the device\n"
    assert _first(hip).id == "hip.no-binary-for-gpu"


def test_dpkg_not_configured_yet_after_a_blank_line_or_on_one_line() -> None:
    """5: "is not configured yet" after a blank line, or on the same (collapsed) line, is the
    consequence of another package's failed configure, not a missing dependency."""
    # constructed to test the rule
    blank = (
        "dpkg: dependency problems prevent configuration of rocm-dkms:\n"
        " rocm-dkms depends on rock-dkms; however:\n"
        "\n"
        "  Package rock-dkms is not configured yet.\n"
    )
    one_line = (
        "dpkg: dependency problems prevent configuration of rocm-dkms: rocm-dkms depends on"
        " rock-dkms; however: Package rock-dkms is not configured yet. dpkg: error processing"
        " package rocm-dkms (--configure): dependency problems - leaving unconfigured\n"
    )
    for text in (blank, one_line):
        assert "apt.dpkg-i-rocm-deb-missing-dependency" not in _ids(text), text
    missing = (
        "dpkg: dependency problems prevent configuration of rocm-dev:\n"
        " rocm-dev depends on hip-base (= 6.2.41133.60200-66~22.04); however:\n"
        "  Package hip-base is not installed.\n"
    )
    assert _first(missing).id == "apt.dpkg-i-rocm-deb-missing-dependency"


def test_rocblas_tail_form_is_not_a_permission_error() -> None:
    """6: "Permission denied for GPU arch : gfxN" alone is an unreadable file, not a build
    without the arch."""
    # constructed to test the rule
    assert "rocblas.no-tensile-for-arch" not in _ids("Permission denied for GPU arch : gfx1030\n")
    assert "rocblas.igpu-gfx1036-picked" not in _ids("Permission denied for GPU arch : gfx1036\n")
    seek = "Illegal seek for GPU arch : gfx1035\n"
    assert _first(seek).id == "rocblas.no-tensile-for-arch"


def test_rocwmma_static_assert_needs_llama_cpp_nearby() -> None:
    """7: rocWMMA's own samples stop at the same assertion; only a llama.cpp build is told the
    GGML_HIP_ROCWMMA_FATTN cause."""
    # constructed to test the rule
    sample = (
        "[ 50%] Building HIP object samples/CMakeFiles/simple_hgemm.dir/simple_hgemm.cpp.o\n"
        "In file included from /opt/rocm/include/rocwmma/rocwmma.hpp:32:\n"
        "/opt/rocm/include/rocwmma/internal/config.hpp:76:1: error: static assertion failed due"
        " to requirement '0': Unsupported architecture\n"
        '   76 | static_assert(0, "Unsupported architecture");\n'
    )
    assert "llm.llamacpp-rocwmma-fattn-no-matching-mma" not in _ids(sample)
    llama = (
        "[ 12%] Building HIP object ggml/src/ggml-hip/CMakeFiles/ggml-hip.dir/__/ggml-cuda/"
        "fattn-wmma-f16.cu.o\n"
        "In file included from /opt/rocm/include/rocwmma/rocwmma.hpp:32:\n"
        "/opt/rocm/include/rocwmma/internal/config.hpp:76:1: error: static assertion failed due"
        " to requirement '0': Unsupported architecture\n"
        '   76 | static_assert(0, "Unsupported architecture");\n'
    )
    assert _first(llama).id == "llm.llamacpp-rocwmma-fattn-no-matching-mma"


def test_kfd_open_invalid_argument_is_back_to_its_reviewed_cause() -> None:
    """8: the added "user space too old" cause came from a fork's decision record whose sibling
    record blames another cause for the same line."""
    assert "vmafx" not in _sources("kfd.open-invalid-argument")
    text = _text("kfd.open-invalid-argument")
    assert "7.2.3" not in text and "Two\n" not in text and "Two causes" not in text


def test_miopen_workspace_warning_makes_no_slowdown_claim() -> None:
    """9: the 3.5x slowdown and "PyTorch offers no workspace" claims came from one person's
    research repository."""
    assert "Peterc3-dev" not in _sources("miopen.is-enough-workspace-warning")
    text = _text("miopen.is-enough-workspace-warning")
    assert "3.5 times" not in text and "without offering workspace" not in text
    assert _entry("miopen.is-enough-workspace-warning").harmless


def test_rewrite_page_prose_is_no_fixture_and_no_wording() -> None:
    """10: a rewrite page's prose is not program output; the underscore-less HIP_PLATFORM
    form exists only in such a rewrite (hipBLASLt#1697 shows the underscores)."""
    assert not (
        WORDINGS / "compiler.hip-platform-macro-undefined.markdown-underscores-lost.txt"
    ).exists()
    assert not (WORDINGS / "hip.event-sync-after-stream-destroyed.gitcode-rewrite.txt").exists()
    # constructed to test the rule
    bare = "Must define exactly one of HIP_PLATFORM_AMD or HIP_PLATFORM_NVIDIA\n"
    assert "compiler.hip-platform-macro-undefined" not in _ids(bare)
    real = "#error Must define exactly one of __HIP_PLATFORM_AMD__ or __HIP_PLATFORM_NVIDIA__\n"
    assert "compiler.hip-platform-macro-undefined" in _ids(real)
    for entry_id in (
        "compiler.hip-platform-macro-undefined",
        "hip.event-sync-after-stream-destroyed",
    ):
        sources = _sources(entry_id)
        assert "gitcode" not in sources and "youkuaiyun" not in sources and "csdn" not in sources


RDNA4_FAULT = (
    "Memory access fault by GPU node-1 (Agent handle: 0x55d1) on address 0x7f1200000000."
    " Reason: Page not present or supervisor privilege.\n"
)


def test_rdna4_rocm70_condition_needs_hipblaslt_or_torch_and_follows_nil() -> None:
    """2: the hipBLASLt expert-scheduling story is told only with hipBLASLt or a torch
    +rocm7.0/7.1 wheel in the text, after the (nil) condition, without a "7.10 branch"
    claim rocm-libraries#3211 does not make."""
    # constructed to test the rule: a llama.cpp run and an own-HIP (nil) fault
    llamacpp = (
        "llama.cpp build with ROCm 7.1.0\nggml_cuda_init: found 1 ROCm devices:\n"
        "  Device 0: AMD Radeon RX 9070 XT, gfx1201 (0x1201), VMM: no, Wave Size: 32\n"
        + RDNA4_FAULT
    )
    own_nil = (
        "Device 0: AMD Radeon RX 9070 XT, gfx1201 (0x1201)\n"
        "$ hipcc --offload-arch=gfx1201 -o saxpy saxpy.cpp && ./saxpy\nROCm version: 7.0.2\n"
        "Memory access fault by GPU node-1 (Agent handle: 0x5a2b3c) on address (nil). Reason:"
        " Page not present or supervisor privilege.\nAborted (core dumped)\n"
    )
    m = _first(llamacpp)
    assert m.id == "hsa.memory-access-fault" and "RDNA4" not in m.condition
    m = _first(own_nil)
    assert m.id == "hsa.memory-access-fault" and m.condition.startswith("the fault address is null")
    torch = "torch 2.9.0+rocm7.0\nAMD Radeon RX 9070 XT gfx1201\n" + RDNA4_FAULT
    m = _first(torch)
    assert "RDNA4" in m.condition and "7.10" not in m.fix and "3211" in m.fix
    assert "Windows" in m.fix and "#3164" in m.fix
    blaslt = "ROCm 7.1.1, gfx1201\nrocblas -> libhipblaslt.so.1\n" + RDNA4_FAULT
    assert "RDNA4" in _first(blaslt).condition
    illegal = (
        "torch 2.9.0+rocm7.0\nAMD Radeon RX 9070 XT gfx1201\n"
        "RuntimeError: HIP error: an illegal memory access was encountered\n"
    )
    m = _first(illegal)
    assert m.id == "hip.illegal-address" and "RDNA4" in m.condition and "7.10" not in m.fix
    plain = (
        "ROCm 7.1.0\nAMD Radeon RX 9070 XT gfx1201\n"
        "HIP error: an illegal memory access was encountered\n"
    )
    assert "RDNA4" not in _first(plain).condition


def test_vllm_aiter_moe_not_available_is_not_told_the_unknown_gpu_cause() -> None:
    """3: vLLM raises "ROCm AITer MoE backend is not available for this configuration" for
    `--moe-backend aiter` whenever its AITER MoE is not enabled (VLLM_ROCM_USE_AITER /
    VLLM_ROCM_USE_AITER_MOE unset included), on a supported MI300X too: not AITER's unknown
    GPU. The wording is removed from llm.aiter-gpu-arch-unknown."""
    # constructed to test the rule: an MI300X (gfx942, in AITER's list) with the variable unset
    mi300 = (
        "INFO 01-05 10:00:00 [__init__.py:241] Automatically detected platform rocm.\n"
        "GPU: AMD Instinct MI300X (gfx942)\n"
        "$ vllm serve Qwen/Qwen3-30B-A3B --moe-backend aiter\n"
        "ValueError: ROCm AITer MoE backend is not available for this configuration\n"
    )
    assert "llm.aiter-gpu-arch-unknown" not in _ids(mi300)
    assert not (WORDINGS / "llm.aiter-gpu-arch-unknown.moe-backend-not-available.txt").exists()
    assert "--moe-backend aiter" not in _text("llm.aiter-gpu-arch-unknown")


def test_dkms_chroot_condition_is_not_wsl_and_reads_from_the_failing_line() -> None:
    """4: dkms prints the chroot notice in WSL2 too (no /lib/modules of Microsoft's kernel):
    there the answer is ROCm's WSL install, not the container-image story. The condition's
    pattern is no longer started at every notice: anchored on the failing line, it looks back
    (4 MiB of notices cost 5.2 s against 0.25 s)."""
    # constructed to test the rule
    build = (
        "Setting up amdgpu-dkms (1:6.8.5.60202-2041575.22.04) ...\n"
        "Loading new amdgpu-6.8.5-2041575.22.04 DKMS files...\n"
        "It is likely that {host} belongs to a chroot's host\n"
        "Building for 5.15.0-125-generic\n"
        "Building initial module for 5.15.0-125-generic\n"
        "Error! Bad return status for module build on kernel: 5.15.0-125-generic (x86_64)\n"
        "Consult /var/lib/dkms/amdgpu/6.8.5-2041575.22.04/build/make.log for more information.\n"
    )
    wsl = _first(build.format(host="5.15.167.4-microsoft-standard-WSL2"))
    assert wsl.id == "dkms.amdgpu-build-failed"
    assert wsl.condition.startswith("WSL2") and "--usecase=wsl,rocm --no-dkms" in wsl.fix
    assert "container" not in wsl.fix
    image = _first(build.format(host="6.1.12-artix1-1"))
    assert image.condition.startswith("dkms said the running kernel")
    assert "--usecase=wsl" not in image.fix
    entry = _entry("dkms.amdgpu-build-failed")
    chroot = [p for p in entry.patterns if "belongs to a chroot" in p.regex]
    assert len(chroot) == 2
    assert all("chroot" not in p.anchor and "module build on kernel" in p.anchor for p in chroot)
