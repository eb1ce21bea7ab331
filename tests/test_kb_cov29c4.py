"""Coverage C4 of session 29 (issue 28: `rocmprov explain`): the conditions and context rules
added for recurring build causes (hipcc and omp.h, the Cray accel module with HIP, LTO and the
HIP fat-binary handle, Kokkos without a GPU architecture).

The short texts below are cut from the entries' fixtures or are plain counter-examples (a CPU
clang build, another undefined symbol); they quote no report beyond those lines."""

from __future__ import annotations

from pathlib import Path

from tests.kb_helpers import first as _first

FIXTURES = Path(__file__).parent / "fixtures"

OMP = "compiler.hip-omp-header-not-found"
HIP_OMP_TARGETS = "compiler.openmp-offload-options-in-hip-compile"
RDC = "compiler.gpu-rdc-link"
KOKKOS = "compiler.kokkos-hip-no-gpu-arch"

OMP_ERROR = (
    "test.cpp:2:10: fatal error: 'omp.h' file not found\n"
    "#include <omp.h>\n"
    "         ^~~~~~~\n"
)


def test_omp_header_needs_a_hip_build_nearby() -> None:
    cpu = "clang++ -fopenmp test.cpp\n" + OMP_ERROR + "1 error generated.\n"
    found = _first(cpu)
    assert found is None or found.id != OMP
    hip = "hipcc -fopenmp test.cpp\n" + OMP_ERROR
    assert (m := _first(hip)) is not None and m.id == OMP


def test_omp_header_with_the_gfx_line_below_it() -> None:
    text = OMP_ERROR + "1 error generated when compiling for gfx906.\n"
    assert (m := _first(text)) is not None and m.id == OMP


def test_openmp_targets_entry_only_for_hip_language_mode() -> None:
    hip = "clang-15: error: unsupported option '-fopenmp-targets=' for language mode 'HIP'\n"
    assert (m := _first(hip)) is not None and m.id == HIP_OMP_TARGETS
    other = "clang-15: error: unsupported option '-fopenmp-targets=' for language mode 'OpenCL'\n"
    found = _first(other)
    assert found is None or found.id != HIP_OMP_TARGETS


def _undefined(symbol: str) -> str:
    return (
        f"ld.lld: error: undefined hidden symbol: {symbol}\n"
        ">>> referenced by ld-temp.o\n"
        ">>>               lto.tmp:(__hip_module_ctor.1796)\n"
    )


def test_lto_fix_only_for_the_gpubin_handle() -> None:
    handle = _first(_undefined("__hip_gpubin_handle_f20551e8c5453d2a"))
    assert handle is not None and handle.id == RDC
    assert "LTO" in handle.fix and handle.condition
    device = _first(_undefined("deviceFunction()"))
    assert device is not None and device.id == RDC
    assert not device.condition and "-fgpu-rdc" in device.fix


def test_gpubin_handle_without_lto_keeps_the_gpu_rdc_fix() -> None:
    text = (
        "ld.lld: error: undefined hidden symbol: __hip_gpubin_handle_b33c4363e66c5890\n"
        ">>> referenced by main.cu.o:(__hip_module_ctor)\n"
    )
    found = _first(text)
    assert found is not None and found.id == RDC
    assert not found.condition and "-fgpu-rdc" in found.fix


def test_kokkos_enumerator_condition_only_without_the_enumerator() -> None:
    wrapped = (
        "CMake Error at cmake/kokkos_arch.cmake:1336 (message):\n"
        "  HIP enabled but no AMD GPU architecture could be automatically detected.\n"
        "  Please manually specify one AMD GPU architecture via -DKokkos_ARCH_{..}=ON'.\n"
    )
    detected = _first(wrapped)
    assert detected is not None and detected.id == KOKKOS and not detected.condition
    missing = (
        "CMake Error at cmake/kokkos_arch.cmake:1328 (message):\n"
        "  Autodetection of AMD GPU architecture not possible as\n"
        "  rocm_agent_enumerator could not be found.\n"
    )
    found = _first(missing)
    assert found is not None and found.id == KOKKOS and found.condition


# Review of C4 (session 29): NVIDIA and system-clang counter-examples for omp.h, gfx90a/gfx90c,
# the HIP/OpenMP-offload cause without Cray evidence, the LTO fix the sources show, CMake's
# real wrapping in the Kokkos fixtures, and the fixture lines pasted whole.


def test_omp_header_not_for_nvidia_or_system_clang_builds() -> None:
    cuda = (
        "/usr/bin/clang++ -O3 -fopenmp -x cuda --offload-arch=sm_80 -c saxpy.cu -o saxpy.cu.o\n"
        + OMP_ERROR.replace("test.cpp", "saxpy.cu")
        + "1 error generated when compiling for sm_80.\n"
    )
    nvptx = "$ clang -fopenmp --offload-arch=sm_90 vecadd.c -o vecadd\n" + OMP_ERROR
    system = (
        "/usr/bin/clang++ -DUSE_ROCM -I/opt/rocm/include -O3 -fopenmp -c cpu_ops.cpp\n"
        + OMP_ERROR
        + "1 error generated.\n"
        + "export HIP_PATH=/opt/rocm ROCM_PATH=/opt/rocm\n"
    )
    for text in (cuda, nvptx, system):
        found = _first(text)
        assert found is None or found.id != OMP, text


def test_omp_header_with_rocm_clang_or_gfx90a() -> None:
    for gfx in ("gfx90a", "gfx90c", "gfx1100"):
        text = OMP_ERROR + f"1 error generated when compiling for {gfx}.\n"
        assert (m := _first(text)) is not None and m.id == OMP, gfx
    rocm_clang = "/opt/rocm-6.2.0/llvm/bin/clang++ -x hip -fopenmp -c a.cpp\n" + OMP_ERROR
    assert (m := _first(rocm_clang)) is not None and m.id == OMP
    offload = "clang++ -x hip --offload-arch=gfx942 -c a.cpp\n" + OMP_ERROR
    assert (m := _first(offload)) is not None and m.id == OMP


HIP_TARGETS_ERROR = (
    "clang++: error: unsupported option '-fopenmp-targets=' for language mode 'HIP'\n"
)


def test_openmp_targets_in_hip_without_cray_is_the_generic_cause() -> None:
    text = (
        "$ /opt/rocm/llvm/bin/clang++ -x hip --offload-arch=gfx90a -fopenmp "
        "-fopenmp-targets=amdgcn-amd-amdhsa -c kernels.cpp\n" + HIP_TARGETS_ERROR
    )
    found = _first(text)
    assert found is not None and found.id == HIP_OMP_TARGETS
    assert not found.condition and "craype" not in found.fix and "-fopenmp-targets" in found.fix
    assert "Cray" not in found.cause


def test_cray_evidence_gives_the_accel_module_condition() -> None:
    above = (
        "cd build && /opt/cray/pe/craype/2.7.19/bin/CC -x hip --offload-arch=gfx90a -fopenmp "
        "-c a.cpp\n" + HIP_TARGETS_ERROR
    )
    below = HIP_TARGETS_ERROR + (
        "clang-15: warning: Cray currently only supports -fopenmp-targets=nvptx64, but it is "
        "set to  [-Winvalid-command-line-argument]\n"
    )
    for text in (above, below):
        found = _first(text)
        assert found is not None and found.id == HIP_OMP_TARGETS
        assert found.condition.startswith("a Cray compiler wrapper") and "module" in found.fix


def test_cray_warning_alone_is_no_root_cause() -> None:
    text = (
        "clang-15: warning: Cray currently only supports -fopenmp-targets=nvptx64, but it is "
        "set to  [-Winvalid-command-line-argument]\n"
    )
    found = _first(text)
    assert found is None or "-fopenmp-targets" not in found.title


def test_lto_fix_leads_with_what_the_sources_show() -> None:
    found = _first(_undefined("__hip_gpubin_handle_f20551e8c5453d2a"))
    assert found is not None and found.id == RDC and found.condition
    first = found.fix.split(". ")[0]
    assert "HIP_RESOLVE_DEVICE_SYMBOLS" in first and "6.1" in first
    assert "Turn LTO/IPO off" not in found.fix and "ROCm 6.2 / clang 18" in found.fix


def test_kokkos_fixtures_are_wrapped_as_cmake_prints_them() -> None:
    paths = [FIXTURES / "kb" / f"{KOKKOS}.txt", *(FIXTURES / "kb-wordings").glob(f"{KOKKOS}.*.txt")]
    assert len(paths) == 3
    for path in paths:
        body = path.read_text().split("---\n", 1)[1].splitlines()
        assert body[0].startswith("CMake Error at "), path.name
        assert len(body) >= 3
        assert all(line.startswith("  ") and len(line) <= 80 for line in body[1:]), path.name


def test_report_fixtures_keep_the_compile_lines_whole() -> None:
    kokkos = (FIXTURES / "kb" / f"{HIP_OMP_TARGETS}.txt").read_text()
    assert " && /opt/cray/pe/craype/2.7.19/bin/CC " in kokkos
    assert "-MF CMakeFiles/kokkoscore" in kokkos
    cp2k = (FIXTURES / "kb" / f"{OMP}.txt").read_text()
    assert "-D__LIBXSMM   -D__MKL -D__FFTW3" in cp2k
    assert "-D__DBCSR_ACC -I/opt/rocm//include" in cp2k
