"""Session 30 coverage (C2: what AMD ships now, the 2026 ROCm 7.11-10.x releases, TheRock wheels
and their known issues): each new entry answers its report, and a near miss of the same program
does not get it. Near misses are written for the tests in the programs' real formats as the
entries' cited sources show them; they are not captures of real machines."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.kb_helpers import first as _first
from tests.kb_helpers import ids as _ids

_FIXTURES = Path(__file__).parent / "fixtures" / "kb"

_NEW = (
    "compiler.hipify-clang-cuda12-gpu-arch",
    "compiler.rocm-sdk-exe-stub-no-path-component",
    "compiler.mlir-rocdl-bitcode-path-missing",
    "framework.jax-rocm-plugin-major-unknown",
)


def _fixture_text(entry_id: str) -> str:
    raw = (_FIXTURES / f"{entry_id}.txt").read_text(encoding="utf-8")
    return raw.split("\n---\n", 1)[1]


@pytest.mark.parametrize("entry_id", _NEW)
def test_each_new_entry_ranks_first_on_its_own_report(entry_id: str) -> None:
    found = _first(_fixture_text(entry_id))
    assert found is not None and found.id == entry_id


def test_hipify_nvlink_line_alone_names_the_tool() -> None:
    found = _first("error: must pass in an explicit nvptx64 gpu architecture to 'nvlink'\n")
    assert found is not None and found.id == "compiler.hipify-clang-cuda12-gpu-arch"
    assert "nvlink" in found.cause
    assert "--cuda-gpu-arch=sm_70" in found.fix


def test_hipify_without_cuda_is_still_the_missing_cuda_cause() -> None:
    text = (
        "error: cannot find CUDA installation; provide its path via '--cuda-path', or pass "
        "'-nocudainc' to build without CUDA includes\n"
    )
    found = _first(text)
    assert found is not None and found.id == "compiler.hipify-clang-needs-cuda"


def test_stub_message_names_the_program_it_was_run_as() -> None:
    found = _first("could not find path component of main program: 'ld.lld'\n")
    assert found is not None and found.id == "compiler.rocm-sdk-exe-stub-no-path-component"
    assert "`ld.lld`" in found.cause


def test_stub_that_cannot_exec_amdllvm_is_the_missing_amdllvm_cause() -> None:
    text = (
        "could not exec /venv/lib/python3.12/site-packages/_rocm_sdk_devel/bin/amdllvm: "
        "No such file or directory\n"
    )
    assert "compiler.rocm-sdk-exe-stub-no-path-component" not in _ids(text)
    found = _first(text)
    assert found is not None and found.id == "compiler.rocm-sdk-amdllvm-missing-in-bin"


def test_mlir_bitcode_message_with_its_full_tail_and_another_prefix() -> None:
    text = (
        "remark: ROCm amdgcn bitcode path: /opt/rocm-7.2.0/amdgcn/bitcode does not exist or "
        "is not a directory.\n"
    )
    found = _first(text)
    assert found is not None and found.id == "compiler.mlir-rocdl-bitcode-path-missing"
    assert "/opt/rocm-7.2.0/amdgcn/bitcode" in found.cause


def test_mlir_missing_single_bitcode_library_remark_is_not_the_toolkit_layout() -> None:
    # the same serializer's remark for one missing .bc file under a bitcode folder that exists
    text = (
        "remark: Bitcode library path: /opt/rocm/amdgcn/bitcode/ocml.bc does not exist or is "
        "not a file.\n"
    )
    assert "compiler.mlir-rocdl-bitcode-path-missing" not in _ids(text)


def test_jax_rocm7_shim_missing_extension_is_not_the_rocm10_name_cause() -> None:
    # ROCm 7 plugin wheels that fail to find their extension (TheRock#5369's wording) have
    # other causes: the name lookup knows jax_rocm7_plugin
    text = (
        "INFO     jax_plugins.xla_rocm7:__init__.py:98 No ROCm wheel installation found\n"
        "WARNING  jax_plugins.xla_rocm7:__init__.py:243 rocm_plugin_extension not found\n"
    )
    assert "framework.jax-rocm-plugin-major-unknown" not in _ids(text)


def test_jax_rocm10_shim_warning_alone_is_the_name_cause() -> None:
    text = "WARNING  jax_plugins.xla_rocm10:__init__.py:243 rocm_plugin_extension not found\n"
    found = _first(text)
    assert found is not None and found.id == "framework.jax-rocm-plugin-major-unknown"


def test_user_ffi_target_registered_only_for_cuda_is_not_the_plugin_name_cause() -> None:
    # a target the user registered for CUDA only, run on ROCm: not one of jaxlib's hip* handlers
    text = (
        "jax.errors.JaxRuntimeError: NOT_FOUND: No FFI handler registered for my_rms_norm on a "
        "platform ROCM (canonical rocm)\n"
    )
    assert "framework.jax-rocm-plugin-major-unknown" not in _ids(text)


# --- review 30a: facts the sources do not back, and over-attribution


def test_hipify_cause_is_the_nvptx64_driver_not_a_plain_cuda_build() -> None:
    # clang's NVPTX tools take the arch of a CUDA offload action; the message is only for the
    # nvptx64 target driven directly without one (clang Cuda.cpp), not for `clang++ -x cuda`
    found = _first("error: must pass in an explicit nvptx64 gpu architecture to 'ptxas'\n")
    assert found is not None and found.id == "compiler.hipify-clang-cuda12-gpu-arch"
    assert "-x cuda" not in found.cause
    assert "nvptx64 target" in found.cause


def test_mlir_fix_names_no_flydsl_setting_that_never_shipped() -> None:
    # FlyDSL#568 (FLYDSL_ROCM_TOOLKIT_PATH, auto-discovery) was closed unmerged
    found = _first("ROCm amdgcn bitcode path: /opt/rocm/amdgcn/bitcode does not exist\n")
    assert found is not None and found.id == "compiler.mlir-rocdl-bitcode-path-missing"
    assert "FLYDSL_ROCM_TOOLKIT_PATH" not in found.fix
    assert "ROCM_PATH" in found.fix and "remark" in found.cause


def test_stub_fix_covers_a_program_that_passes_a_bare_argv0() -> None:
    # MLIR's ROCDL serializer runs ld.lld with argv[0] "ld.lld" (TheRock#5422): an absolute
    # path alone does not help there
    found = _first("could not find path component of main program: 'ld.lld'\n")
    assert found is not None and found.id == "compiler.rocm-sdk-exe-stub-no-path-component"
    assert "argv[0]" in found.cause and "wrapper script" in found.fix
    assert "late June" not in found.cause + found.fix


def test_ffi_handler_line_from_a_source_build_is_not_told_it_is_only_the_rocm10_name() -> None:
    # openxla/xla#35191: the same line from a from-source jax build whose libraries were not
    # linked; the answer must say the line only shows the extension was not loaded
    text = (
        "jax.errors.JaxRuntimeError: NOT_FOUND: No FFI handler registered for "
        "hipsolver_potrf_ffi on a platform ROCM (canonical rocm)\n"
    )
    found = _first(text)
    assert found is not None and found.id == "framework.jax-rocm-plugin-major-unknown"
    assert "from-source" in found.cause and "pip list" in found.fix
