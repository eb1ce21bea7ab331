"""Round 18 hostile review (reviewer C) of engineers 5 and 6's entries: counter-examples that
failed before the fixes. Every text is CONSTRUCTED (not captured output), from the programs'
format strings as noted per case."""

from __future__ import annotations

CK_MOE = "llm.aiter-ck-moe-gemm-shape-not-supported"

SILENT = [
    # constructed from composable_kernel's examples (example/01_gemm and others:
    # `throw std::runtime_error("wrong! device_gemm with the specified compilation parameters
    # does not support this GEMM problem")` after IsSupportedArgument): a CK example run with a
    # shape no instance covers; no AITER, no MoE, no tensor-parallel size to change
    ("./bin/example_gemm_xdl_fp16 1 2 1 3840 4096 4095\n"
     "a_m_k: dim 2, lengths {3840, 4095}, strides {4095, 1}\n"
     "terminate called after throwing an instance of 'std::runtime_error'\n"
     "  what():  wrong! device_gemm with the specified compilation parameters does not support "
     "this GEMM problem\nAborted (core dumped)\n", CK_MOE),
]  # fmt: skip

LEADS = [
    # constructed from AITER's CK 2-stage MoE throw (csrc/ck_gemm_moe_2stages_codegen/
    # gemm_moe_ck2stages_common.cuh) as Python shows it at the end of a vLLM traceback
    ("  File \"/usr/local/lib/python3.12/dist-packages/aiter/fused_moe.py\", line 912, in "
     "ck_moe_stage1\n    aiter.ck_moe_stage1_fwd(\n"
     "RuntimeError: wrong! device_gemm with the specified compilation parameters does not "
     "support this GEMM problem\n", CK_MOE),
]  # fmt: skip
