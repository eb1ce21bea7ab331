"""Round 16 (engineer 1): compiler, toolchain and package messages whose only user reports are
held out or missing. The texts are CONSTRUCTED, not captured outputs: each fills a message's
format string (named in the comment, from the program's source) with typical values."""

from __future__ import annotations

LEADS = [
    # HCC-era HIP program_state (ROCm/HIP src/program_state.inl, 2019-2020): hip_throw of a
    # std::runtime_error, as libstdc++ prints it
    ("terminate called after throwing an instance of 'std::runtime_error'\n  what():  No device "
     "code available for function: _ZN7rocprim6detail19block_reduce_kernelIfEEvT_, for agent: "
     "gfx803\nAborted (core dumped)\n", "hip.invalid-device-function"),
    # the same before 2019 (no agent)
    ("  what():  No device code available for function: _ZN10tensorflow7functor4FillEv\n",
     "hip.invalid-device-function"),
    # ROCm's hsa plugin of libomptarget (plugins/hsa/src/rtl.cpp), ATMI era and later
    ("Possible gpu arch mismatch: gfx1011, please check compiler: -march=<gpu> flag\n"
     "Libomptarget fatal error 1: failure of target construct while offloading is mandatory\n",
     "hip.no-binary-for-gpu"),
    ("Possible gpu arch mismatch: device:gfx906, image:gfx90a please check compiler flag: "
     "-march=<gpu>\nLibomptarget fatal error 1: failure of target construct while offloading "
     "is mandatory\n", "hip.no-binary-for-gpu"),
    # the old /opt/rocm/hip/bin (ROCm 6.0 removed it): bash, dash, Python, CMake's check
    ("bash: /opt/rocm-6.1.0/hip/bin/hipcc: No such file or directory\n",
     "compiler.hipcc-old-hip-bin-path"),
    ("/bin/sh: 1: /opt/rocm/hip/bin/hipconfig: not found\n", "compiler.hipcc-old-hip-bin-path"),
    ("FileNotFoundError: [Errno 2] No such file or directory: '/opt/rocm/hip/bin/hipcc'\n",
     "compiler.hipcc-old-hip-bin-path"),
    ("CMake Error at CMakeLists.txt:47 (project):\n  The CMAKE_CXX_COMPILER:\n\n    "
     "/opt/rocm/hip/bin/hipcc\n\n  is not a full path to an existing compiler tool.\n",
     "compiler.hipcc-old-hip-bin-path"),
]  # fmt: skip

SILENT = [
    # the ATMI-era line names device and image even when they are the same target
    ("Possible gpu arch mismatch: device:gfx90a, image:gfx90a please check compiler flag: "
     "-march=<gpu>\n", "hip.no-binary-for-gpu"),
    # no image at all (an Intel build), or only NVIDIA images
    ("omptarget error: No images found compatible with the installed hardware. Found 0 "
     "image(s): ()\n", "hip.no-binary-for-gpu"),
    ("omptarget error: No images found compatible with the installed hardware. Found 1 "
     "image(s): (sm_80)\n", "hip.no-binary-for-gpu"),
    # the old path exists (ROCm 5.x) and the compiler behind it fails: another cause
    ("-- Check for working CXX compiler: /opt/rocm/hip/bin/hipcc - broken\n",
     "compiler.hipcc-old-hip-bin-path"),
    # an empty ROCM_PATH, not the old layout
    ("bash: /hip/bin/hipcc: No such file or directory\n", "compiler.hipcc-old-hip-bin-path"),
    # the same cmd.exe line from any other Windows program (a CLI in Program Files)
    ("C:\\Users\\me> heroku config:set A=1\n'C:\\Program' is not recognized as an internal "
     "or external command,\noperable program or batch file.\n", "compiler.hipcc-clang-missing"),
    # the FNUZ names exist since ROCm 6.2: their absence is another story (no hip_fp8.h)
    ("main.cu:40:22: error: unknown type name '__hip_fp8_e4m3_fnuz'\n",
     "compiler.hip-fp8-ocp-types-missing"),
]  # fmt: skip
