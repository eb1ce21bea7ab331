"""Coverage C4 of session 29 (issue 28: `rocmprov explain`): the conditions and context rules
added for recurring build causes (hipcc and omp.h, the Cray accel module with HIP, LTO and the
HIP fat-binary handle, Kokkos without a GPU architecture).

The short texts below are cut from the entries' fixtures or are plain counter-examples (a CPU
clang build, another undefined symbol); they quote no report beyond those lines."""

from __future__ import annotations

from tests.kb_helpers import first as _first

OMP = "compiler.hip-omp-header-not-found"
CRAY = "compiler.cray-accel-module-openmp-targets-hip"
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


def test_cray_accel_module_only_for_hip_language_mode() -> None:
    hip = "clang-15: error: unsupported option '-fopenmp-targets=' for language mode 'HIP'\n"
    assert (m := _first(hip)) is not None and m.id == CRAY
    other = "clang-15: error: unsupported option '-fopenmp-targets=' for language mode 'OpenCL'\n"
    found = _first(other)
    assert found is None or found.id != CRAY


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
