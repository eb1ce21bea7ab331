"""Round 18 (engineer 6): LLM serving on ROCm 7.x: llama.cpp's rocWMMA flash-attention build,
IREE's FP8 family check (FNUZ on gfx942, OCP FP8 on gfx950/gfx12) and Triton's out-of-LDS error
under vLLM's AITER unified attention on RDNA4. Every text below is CONSTRUCTED (not a captured
output): the leads vary the reported wording (other paths, versions, line numbers, prefixes) of
the programs' own format strings; the counter-examples are the same words in other programs or
healthy output, which must not fire the new patterns."""

from __future__ import annotations

from rocmprov.kb import match

ROCWMMA = "llm.llamacpp-rocwmma-fattn-no-matching-mma"
IREE_FP8 = "compiler.iree-fp8-family-not-on-target"
TRITON_LDS = "framework.triton-out-of-shared-memory"
CK_MOE = "llm.aiter-ck-moe-gemm-shape-not-supported"

LEADS = [
    # constructed: a ninja build of another tree, another line, CDNA target
    ("FAILED: ggml/src/ggml-hip/CMakeFiles/ggml-hip.dir/__/ggml-cuda/fattn-wmma-f16.cu.o\n"
     "/src/llama.cpp/ggml/src/ggml-cuda/fattn-wmma-f16.cu:186:21: error: no matching function "
     "for call to 'mma_sync'\n1 error generated when compiling for gfx942.\n", ROCWMMA),
    # constructed: rocWMMA's own header under a versioned ROCm prefix (llama.cpp or any user)
    ("In file included from /opt/rocm-7.0.1/include/rocwmma/rocwmma.hpp:29:\n"
     "/opt/rocm-7.0.1/include/rocwmma/internal/convert.hpp:50:59: error: no matching function "
     "for call to 'get'\n", ROCWMMA),
    # constructed from IREE's format string (ConvertToROCDL.cpp), the OCP-on-gfx942 direction
    ("model.mlir:12:5: error: 'arith.extf' op F8E5M2 and F8E4M3FN types are not supported on "
     "gfx942 (MI-300) or older chipsets; try F8E5M2FNUZ or F8E4M3FNUZ instead, or use "
     "--iree-llvmgpu-enable-small-float-emulation to enable software emulation.\n", IREE_FP8),
    # constructed: the FNUZ-on-gfx950 direction with the newer emulation hint
    ("<unknown>:0: error: 'arith.truncf' op F8E5M2FNUZ and F8E4M3FNUZ types are not supported on "
     "non-gfx942 (MI-300) chipsets; try F8E5M2 or F8E4M3FN instead, or use "
     "--iree-llvmgpu-enable-small-float-emulation to enable software emulation.\n", IREE_FP8),
    # constructed: vLLM's worker prefix in front of the same message
    ("(Worker_TP3 pid=812) ERROR 11-02 10:01:07 [multiproc_executor.py:790] RuntimeError: "
     "wrong! device_gemm with the specified compilation parameters does not support this GEMM "
     "problem\n", CK_MOE),
]  # fmt: skip

SILENT = [
    # constructed: mma_sync in the user's own kernel (CUDA or rocWMMA), not llama.cpp's
    ("my_gemm.cu:40:9: error: no matching function for call to 'mma_sync'\n", ROCWMMA),
    # constructed: std::get in the C++ library, same diagnostic words
    ("/usr/include/c++/13/tuple:1810:5: error: no matching function for call to 'get'\n",
     ROCWMMA),
    # constructed: llama.cpp's healthy build line of the same file
    ("[ 40%] Building HIP object ggml/src/ggml-hip/CMakeFiles/ggml-hip.dir/__/ggml-cuda/"
     "fattn-wmma-f16.cu.o\n", ROCWMMA),
    # constructed: an MLIR dump naming the FNUZ types is not the error
    ("%8 = arith.extf %in1 : f8E5M2FNUZ to f32\n%9 = arith.extf %in2 : f8E4M3FNUZ to f32\n",
     IREE_FP8),
    # constructed from CK's own format string for another device op: not a GEMM shape
    ("wrong! DeviceSoftmaxImpl<F16,F32,F16,3,1,256> with the specified compilation parameters "
     "does not support this Softmax problem.\n", CK_MOE),
]  # fmt: skip



LDS_LINE = (
    "triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 65792, "
    "Hardware limit: 65536. Reducing block sizes or `num_stages` may help.\n"
)


def _condition(text: str, entry: str) -> str:
    found = {m.id: m for m in match(text)}
    assert entry in found, list(found)
    return found[entry].condition


def test_rdna4_lds_overflow_gets_the_vllm_aiter_fix() -> None:
    # constructed: the error under an RDNA4 image name, as the toolbox reports show it
    text = "Image: kyuz0/vllm-therock-gfx1201:pinned-20260731\n" + LDS_LINE
    assert "RDNA4" in _condition(text, TRITON_LDS)


def test_lds_overflow_on_mi300_keeps_the_generic_fix() -> None:
    # constructed: the same error on gfx942 is not the RDNA4 AITER case
    text = "GPU: AMD Instinct MI300X (gfx942:sramecc+:xnack-)\n" + LDS_LINE
    assert _condition(text, TRITON_LDS) == ""


def test_rocwmma_conditions_follow_the_target() -> None:
    cdna = (
        "/src/llama.cpp/ggml/src/ggml-cuda/fattn-wmma-f16.cu:186:21: error: no matching "
        "function for call to 'mma_sync'\n1 error generated when compiling for gfx90a.\n"
    )
    assert "CDNA" in _condition(cdna, ROCWMMA)
    rdna3 = cdna.replace("gfx90a", "gfx1100")
    assert _condition(rdna3, ROCWMMA) == ""
