"""Coverage C1 of session 30 (issue 28: `rocmprov explain`): CMake 3.21.3+ refuses the hipcc
wrapper as the HIP language's compiler (compiler.cmake-hip-compiler-is-hipcc).

The texts are CMake 3.25's own rendering of the message (its fixtures) and healthy CMake lines
of a HIP configure; they quote no report."""

from __future__ import annotations

from tests.kb_helpers import first as _first

HIPCC = "compiler.cmake-hip-compiler-is-hipcc"


def test_both_spellings_rank_the_entry_first_and_name_the_setting() -> None:
    for var in ("CMAKE_HIP_COMPILER", "The HIPCXX environment variable"):
        text = (
            "CMake Error at /usr/share/cmake-3.28/Modules/CMakeDetermineHIPCompiler.cmake:50 (message):\n"
            f"  {var} is set to the hipcc wrapper:\n\n   /opt/rocm-6.2.0/bin/hipcc\n\n"
            "  This is not supported.  Use Clang directly, or let CMake pick a default.\n"
        )
        found = _first(text)
        assert found is not None and found.id == HIPCC, var
        assert var in found.cause


def test_a_healthy_hip_configure_and_hipcc_as_cxx_compiler_are_not_it() -> None:
    healthy = (
        "-- The HIP compiler identification is Clang 19.0.0\n"
        "-- Detecting HIP compiler ABI info - done\n"
        "-- Check for working HIP compiler: /opt/rocm/llvm/bin/clang++ - skipped\n"
        "-- Check for working CXX compiler: /opt/rocm/bin/hipcc - skipped\n"
        "-- HIP compiler: /opt/rocm/bin/hipcc (CMAKE_CXX_COMPILER is set to the hipcc wrapper)\n"
    )
    found = _first(healthy)
    assert found is None or found.id != HIPCC
