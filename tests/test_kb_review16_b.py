"""Round 16, hostile review B: counter-examples to engineer 1's changes that failed before the
review's fixes. Every text here is CONSTRUCTED (not a captured output): each fills a program's
format string, named in its comment, with typical values."""

from __future__ import annotations

from rocmprov.kb import match

# Texts on which an entry must stay silent: before the review each one named it.
SILENT = [
    # upstream libomptarget (offload/src/omptarget.cpp handleTargetOutcome): the line is printed
    # whenever no plugin is active, which includes an AMDGPU plugin that could not open the GPU
    # (no /dev/kfd in a container, HSA missing) while the image IS built for this GPU (gfx90a on
    # an MI250X). The text is the same for both causes, so it cannot name "no code for this GPU".
    ("omptarget error: Consult https://openmp.llvm.org/design/Runtimes.html for debugging "
     "options.\nomptarget error: No images found compatible with the installed hardware. Found "
     "1 image(s): (gfx90a)\nomptarget fatal error 1: failure of target construct while "
     "offloading is mandatory\n", "hip.no-binary-for-gpu"),
    # the same on an NVIDIA machine from a build for both vendors whose CUDA plugin failed
    ("omptarget error: No images found compatible with the installed hardware. Found 2 "
     "image(s): (gfx90a,sm_80)\n", "hip.no-binary-for-gpu"),
    # hipconfig --full on a healthy Windows HIP SDK in its default folder (HIPCC hipBin_amd.h
    # printFull: "HIP_CLANG_PATH     :" + path, then printCompilerInfo's unquoted system()
    # calls and its "llc-version :" heading). hipcc quotes clang++ when it compiles
    # ("\"" + hipClangPath + "/clang++"), so only hipconfig's version printout fails: nothing is
    # missing and hipcc works.
    ("==hip-clang\nHSA_PATH           :C:\\Program Files\\AMD\\ROCm\\6.1\\\n"
     "HIP_CLANG_PATH     :C:\\Program Files\\AMD\\ROCm\\6.1\\bin\n'C:\\Program' is not "
     "recognized as an internal or external command,\noperable program or batch file.\n"
     "llc-version :\n'C:\\Program' is not recognized as an internal or external command,\n"
     "operable program or batch file.\nhip-clang-cxxflags :\n", "compiler.hipcc-clang-missing"),
    # GNU ld's overflow wording (binutils "relocation truncated to fit: %s against ..."): a
    # CUDA build (nvcc + g++ link, NVIDIA fat binary) ...
    ("/usr/bin/ld: caffe2/CMakeFiles/torch_cuda.dir/foo.cu.o:(.text+0x1ab): relocation "
     "truncated to fit: R_X86_64_PC32 against symbol `__cudart_i2opi_f' defined in "
     ".nv.constant0 section\ncollect2: error: ld returned 1 exit status\n",
     "compiler.hip-binary-over-2gb-relocation"),
    # ... and a CPU-only Fortran program with a static array over 2 GiB
    ("big.f90:(.text+0x1a): relocation truncated to fit: R_X86_64_PC32 against `.bss'\n"
     "big.f90:(.text+0x35): relocation truncated to fit: R_X86_64_32S against `.bss'\n"
     "collect2: error: ld returned 1 exit status\n", "compiler.hip-binary-over-2gb-relocation"),
]  # fmt: skip


def test_hcc_no_device_code_captures_the_agent() -> None:
    # ROCm/HIP src/program_state.inl (2019-2020): "No device code available for function: " +
    # name(function_address) + ", for agent: " + name(agent). Before the fix the kernel name's
    # \S+ swallowed the comma, so the optional agent group never matched and {gfx} stayed empty.
    text = (
        "terminate called after throwing an instance of 'std::runtime_error'\n  what():  No "
        "device code available for function: _Z6vecAddPfS_S_i, for agent: gfx1030\n"
    )
    found = match(text)
    assert found and found[0].id == "hip.invalid-device-function"
    assert found[0].captures.get("gfx") == "gfx1030", found[0].captures


def test_lld_overflow_still_leads() -> None:
    # lld's "relocation %s out of range: %lld is not in [%lld, %lld]" (the entry's own wording)
    text = (
        "ld.lld: error: lib/libfoo.so.o:(.rodata+0x4): relocation R_X86_64_PC32 out of "
        "range: 3221225472 is not in [-2147483648, 2147483647]\n"
    )
    found = match(text)
    assert found and found[0].id == "compiler.hip-binary-over-2gb-relocation"
