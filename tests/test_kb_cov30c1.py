"""Coverage C1 of session 30 (issue 28: `rocmprov explain`): CMake 3.21.3+ refuses the hipcc
wrapper as the HIP language's compiler (compiler.cmake-hip-compiler-is-hipcc).

The texts are CMake 3.25's own rendering of the message (its fixtures), healthy CMake lines
of a HIP configure and one near miss written for the test; they quote no report."""

from __future__ import annotations

from tests.kb_helpers import first as _first

HIPCC = "compiler.cmake-hip-compiler-is-hipcc"


def test_both_spellings_rank_the_entry_first_and_name_the_setting() -> None:
    for var in ("CMAKE_HIP_COMPILER", "The HIPCXX environment variable"):
        text = (
            "CMake Error at /usr/share/cmake-3.28/Modules/CMakeDetermineHIPCompiler.cmake:50 "
            "(message):\n"
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
        # a near miss written for the test (not CMake output): another variable, same words
        "-- HIP compiler: /opt/rocm/bin/hipcc (CMAKE_CXX_COMPILER is set to the hipcc wrapper)\n"
    )
    found = _first(healthy)
    assert found is None or found.id != HIPCC


def test_a_clang_under_a_hipcc_named_directory_is_told_why() -> None:
    # review 30a: CMake's check is `MATCHES "hipcc"` on the whole path (CMake 3.25.1 here refuses
    # -DCMAKE_HIP_COMPILER=/home/me/hipcc-work/llvm/bin/clang++ with this very message)
    text = (
        "CMake Error at /usr/share/cmake-3.25/Modules/CMakeDetermineHIPCompiler.cmake:50 "
        "(message):\n"
        "  CMAKE_HIP_COMPILER is set to the hipcc wrapper:\n\n"
        "   /home/me/hipcc-work/llvm/bin/clang++\n\n"
        "  This is not supported.  Use Clang directly, or let CMake pick a default.\n"
    )
    found = _first(text)
    assert found is not None and found.id == HIPCC
    assert 'contains "hipcc"' in found.cause and "without \"hipcc\"" in found.fix
