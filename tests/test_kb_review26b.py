"""Review B of session 26's table (issue 28): each test is a defect a hostile read of branches
r26-g6 and r26-g8 found, failing on the table before its fix (main 3639700).

The texts marked "constructed" are the reviewer's counter-examples, written to test a rule,
not real output of a report; real texts come from the fixtures."""

from __future__ import annotations

from pathlib import Path

from rocmprov.kb.matcher import analyse
from rocmprov.kb.table import Table, load_table
from tests.growth import cpu_ratio
from tests.kb_helpers import ids as _ids
from tests.kb_helpers import known as _known

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"
MIB = 1024 * 1024


def _fixture(path: str) -> str:
    return (FIXTURES / path).read_text(encoding="utf-8").split("\n---\n", 1)[1]


def _first_id(text: str) -> str | None:
    found = _known(text)
    return found[0].id if found else None


# ---------------------------------------------------------------- 1: nvcc not found, cost


def test_nvcc_not_found_lines_cost_about_what_the_rest_of_the_table_does() -> None:
    """Item 1: the pattern began with `\\w{1,60}` and read 15 lines ahead from every hit:
    0.5 MiB of "pkg was requested, but nvcc was not found" lines took 11 s (0.18 s without
    the entry). It now starts at a word boundary and reads 5 lines ahead: the text costs
    a few times what it costs the table without the entry (it cost 60 times that)."""
    table = load_table()
    entry = "framework.cuda-only-setup-nvcc-on-rocm-torch"
    without = Table(tuple(e for e in table.entries if e.id != entry))
    assert len(without) == len(table) - 1
    text = "pkg was requested, but nvcc was not found\n" * (MIB // 16 // 42)  # constructed
    analyse(text, table=table), analyse(text, table=without)  # compiled: not timed
    ratio = cpu_ratio(lambda: analyse(text, table=table), lambda: analyse(text, table=without))
    assert ratio < 15, ratio  # about 5 (11 s against 0.18 s before)


def test_nvcc_fixture_is_still_answered_first_with_the_shorter_window() -> None:
    text = _fixture("kb/framework.cuda-only-setup-nvcc-on-rocm-torch.txt")
    found = _known(text)
    assert found[0].id == "framework.cuda-only-setup-nvcc-on-rocm-torch"
    assert found[0].captures["pkg"] == "flash_attn"


# ---------------------------------------------------------------- 2: Kokkos false alarm


def test_kokkos_upper_case_build_on_another_gpu_is_a_real_mismatch() -> None:
    """Item 2: the false-alarm condition took any upper-case build name: gfx90A kernels on a
    gfx942 were told "nothing to fix"."""
    text = (  # constructed
        "Kokkos::HIP::initialize WARNING: running kernels compiled for gfx90A on"
        " gfx942:sramecc+:xnack- device.\n"
    )
    found = _known(text)
    assert found[0].id == "hip.kokkos-arch-mismatch"
    assert found[0].condition == ""
    assert "false alarm" not in found[0].fix and "Rebuild Kokkos" in found[0].fix


def test_kokkos_upper_case_build_on_the_same_gpu_is_still_the_false_alarm() -> None:
    found = _known(_fixture("kb/hip.kokkos-arch-mismatch.txt"))
    assert found[0].id == "hip.kokkos-arch-mismatch"
    assert "upper case" in found[0].condition and "false alarm" in found[0].fix


# ---------------------------------------------------------------- 3: GLIBCXX at link time


def test_glibcxx_undefined_reference_without_rocm_is_not_a_rocm_cause() -> None:
    """Item 3: the bare `undefined reference to ...@GLIBCXX_` pattern answered any C++ link
    against an older libstdc++ (a plain CMake app, conda's compiler_compat ld)."""
    plain = (  # constructed
        "[100%] Linking CXX executable myapp\n"
        "/usr/bin/ld: CMakeFiles/myapp.dir/main.cpp.o: in function `main':\n"
        "main.cpp:(.text+0x1a2): undefined reference to `std::__cxx11::basic_string<char,"
        " std::char_traits<char>, std::allocator<char> >::_M_replace_cold(char*, unsigned long,"
        " char const*, unsigned long, unsigned long)@GLIBCXX_3.4.32'\n"
        "collect2: error: ld returned 1 exit status\n"
    )
    conda = (  # constructed
        "/home/u/miniconda3/envs/py39/compiler_compat/ld: /usr/lib/x86_64-linux-gnu/"
        "libicuuc.so.70: undefined reference to `std::__throw_bad_array_new_length()"
        "@GLIBCXX_3.4.29'\n"
        "collect2: error: ld returned 1 exit status\n"
    )
    for text in (plain, conda):
        assert "rocm.libstdcxx-older-than-required" not in _ids(text)


def test_glibcxx_undefined_reference_in_a_rocm_build_still_answers() -> None:
    text = (  # constructed: the Spack text with a hipcc link line above it
        "/opt/rocm/bin/hipcc -o app main.o kernels.o\n"
        "undefined reference to `std::__throw_out_of_range_fmt(char const*, ...)"
        "@@GLIBCXX_3.4.20'\n"
    )
    found = _known(text)
    assert found[0].id == "rocm.libstdcxx-older-than-required"
    assert any("Spack" in note for note in found[0].notes)
    # the ROCm library's own undefined reference needs no context (legacy-rocm-build#2084)
    wording = "kb-wordings/rocm.libstdcxx-older-than-required.link-time-undefined-reference.txt"
    real = _fixture(wording)
    assert _first_id(real) == "rocm.libstdcxx-older-than-required"


# ---------------------------------------------------------------- 4: TensorFlow's cudart probe


def test_tensorflow_cudart_probe_is_not_a_cuda_only_package() -> None:
    """Item 4: TensorFlow logs the missing libcudart and then says to ignore it without a GPU
    (cudart_stub.cc); that is no CUDA-only package on an AMD machine."""
    text = (  # constructed
        "2023-05-02 10:11:12.345678: W tensorflow/compiler/xla/stream_executor/platform/default/"
        "dso_loader.cc:64] Could not load dynamic library 'libcudart.so.11.0'; dlerror:"
        " libcudart.so.11.0: cannot open shared object file: No such file or directory\n"
        "2023-05-02 10:11:12.345712: I tensorflow/compiler/xla/stream_executor/cuda/"
        "cudart_stub.cc:29] Ignore above cudart dlerror if you do not have a GPU set up on your"
        " machine.\n"
    )
    assert "framework.cuda-only-package-on-amd" not in _ids(text)
    # the entry's own reports still answer
    assert _first_id(_fixture("kb/framework.cuda-only-package-on-amd.txt")) == (
        "framework.cuda-only-package-on-amd"
    )


# ---------------------------------------------------------------- 5: hashcat HIPRTC


def test_hashcat_hiprtc_cause_names_the_sdk_version_and_the_fix_updating_hashcat() -> None:
    """Item 5: the same line comes with a HIP SDK of another version than hashcat looks for
    (hashcat#3920), not only with a beta driver."""
    found = _known(_fixture("kb/hip.hashcat-hiprtc-function-missing.txt"))
    assert found[0].id == "hip.hashcat-hiprtc-function-missing"
    assert "HIP SDK of" in found[0].cause and "beta" in found[0].cause
    assert "Update hashcat" in found[0].fix and "--backend-ignore-hip" in found[0].fix
    assert "https://github.com/hashcat/hashcat/issues/3920" in found[0].sources


# ---------------------------------------------------------------- 6: offload triple


def test_a_correct_amdgcn_triple_is_told_clang_lacks_the_amdgpu_target() -> None:
    """Item 6: with the triple spelled right, the fix said to spell it right."""
    text = (  # constructed
        "clang++: error: unable to create target: 'No available targets are compatible with"
        ' triple "amdgcn-amd-amdhsa"\'\n1 error generated.\n'
    )
    found = _known(text)
    assert found[0].id == "compiler.offload-triple-not-available"
    assert "spelled right" in found[0].condition
    assert "without LLVM's AMDGPU backend" in found[0].fix
    misspelled = _known(_fixture("kb/compiler.offload-triple-not-available.txt"))
    assert misspelled[0].condition == "" and "Spell the triple" in misspelled[0].fix


# ---------------------------------------------------------------- 7: too broad


def test_ptx_asm_in_a_hip_cpp_file_is_not_told_triton() -> None:
    """Item 7: a HIP C++ file with PTX inline asm fails the same way; no Triton there."""
    text = (  # constructed
        "/home/u/kernels/fastmath.hip:41:5: error: couldn't allocate output register for"
        " constraint 'f'\n"
        '    asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));\n'
        "    ^\n"
        "1 error generated when compiling for gfx942.\n"
    )
    assert "framework.triton-ptx-inline-asm-on-amd" not in _ids(text)
    for path in (
        "kb/framework.triton-ptx-inline-asm-on-amd.txt",
        "kb-wordings/framework.triton-ptx-inline-asm-on-amd.sglang-layernorm-f.txt",
    ):
        assert _first_id(_fixture(path)) == "framework.triton-ptx-inline-asm-on-amd"


def test_a_non_hip_build_missing_clang_builtins_is_not_told_hip_cmake() -> None:
    text = (  # constructed
        "ninja: error: '/usr/lib/llvm-18/lib/clang/18/lib/linux/libclang_rt.builtins-x86_64.a',"
        " needed by 'bin/app', missing and no known rule to make it\n"
    )
    assert "compiler.hip-cmake-clangrt-builtins-not-found" not in _ids(text)
    wording = "kb-wordings/compiler.hip-cmake-clangrt-builtins-not-found.onemath-icpx-ninja.txt"
    assert _first_id(_fixture(wording)) == "compiler.hip-cmake-clangrt-builtins-not-found"


def test_unsupported_arch_from_another_tool_is_not_told_tinygrad() -> None:
    # constructed
    text = "rocprof-compute analyze -p workloads/x/MI300\nERROR: Unsupported arch: gfx1201\n"
    assert "framework.tinygrad-amd-backend-unsupported-arch" not in _ids(text)
    fixture = _fixture("kb/framework.tinygrad-amd-backend-unsupported-arch.txt")
    assert _first_id(fixture) == "framework.tinygrad-amd-backend-unsupported-arch"


# ---------------------------------------------------------------- 8: RAJA's Find module


def test_raja_find_module_case_names_no_upper_case_config_file() -> None:
    """Item 8: with "Could NOT find ROCPRIM" the cause named ROCPRIM-config.cmake under
    /opt/rocm/lib/cmake/ROCPRIM; rocPRIM's package is `rocprim`."""
    wording = "kb-wordings/compiler.cmake-hip-package-not-found.raja-findrocprim.txt"
    found = _known(_fixture(wording))
    assert found[0].id == "compiler.cmake-hip-package-not-found"
    for text in (found[0].cause, found[0].fix):
        assert "ROCPRIM-config.cmake" not in text and "/opt/rocm/lib/cmake/ROCPRIM" not in text
    assert "rocprim" in found[0].cause
