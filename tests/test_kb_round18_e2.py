"""Round 18 (engineer 2): ML frameworks beyond PyTorch (MIGraphX, JAX, TensorFlow, Triton,
ONNX Runtime). The texts are CONSTRUCTED, not captured outputs: each fills a message's format
string (named in the comment, from the program's source) with typical values, or is a
healthy/unrelated line of the same program that must not match."""

from __future__ import annotations

LEADS = [
    # MIGraphX register_target.cpp + dynamic_loader.cpp, the versioned name, from Python
    ("RuntimeError: /src/AMDMIGraphX/src/dynamic_loader.cpp:48: check_load_error: Dynamic "
     "loading or symbol lookup failed with libmigraphx_cpu.so.2012000: cannot open shared "
     "object file: No such file or directory\n", "framework.migraphx-cpu-target-not-built"),
    # MIGraphX src/targets/gpu/CMakeLists.txt FATAL_ERROR, unwrapped (a CI log)
    ("CMake Error at src/targets/gpu/CMakeLists.txt:31 (message): HIP package is broken and has "
     "no GPU_TARGETS. Please pass GPU_TARGETS to cmake.\n",
     "compiler.hip-cmake-gpu-detection-failed"),
    # jax/_src/lib/__init__.py check_jaxlib_version, local-version suffixes
    ("RuntimeError: jaxlib version 0.6.0.dev20250601 is newer than and incompatible with jax "
     "version 0.5.3. Please update your jax and/or jaxlib packages.\n",
     "framework.jax-jaxlib-version-mismatch"),
    # jaxlib/plugin_support.py check_plugin_version, the warnings module's wrapped line
    ("/venv/lib/python3.12/site-packages/jaxlib/plugin_support.py:71: RuntimeWarning: JAX plugin "
     "jax_rocm60_plugin version 0.4.31 is installed,\nbut it is not compatible with the "
     "installed jaxlib version 0.4.35, so it will not be used.\n",
     "framework.jax-jaxlib-version-mismatch"),
    # XLA gpu_backend_lib.cc LinkWithBitcodeVector: the LOG(ERROR) line (TF log prefix) and
    # the status raised to Python, with an absolute ROCm 6 path
    ("2026-01-01 10:00:00.000000: E external/xla/xla/service/gpu/llvm_gpu_backend/"
     "gpu_backend_lib.cc:312] bitcode module is required by this HLO module but was not found "
     "at /opt/rocm-6.2.0/amdgcn/bitcode/ocml.bc\n", "framework.xla-rocm-device-bitcode-not-found"),
    ("jaxlib.xla_extension.XlaRuntimeError: INTERNAL: bitcode module not found at "
     "/usr/lib/clang/17/amdgcn/bitcode/oclc_isa_version_1100.bc\n",
     "framework.xla-rocm-device-bitcode-not-found"),
    # DeepSpeed op_builder/builder.py validate_torch_op_version, the ROCm branch, wrapped
    ("RuntimeError: HIP version mismatch! DeepSpeed ops were compiled and installed\nwith a "
     "different version than what is being used at runtime. Please re-install DeepSpeed or "
     "switch torch versions. Install HIP version=6.1, Runtime HIP version=6.2\n",
     "framework.torch-extension-built-for-other-torch"),
    # XLA stream_executor (TensorFlow log prefix), the plain status from a jitted function
    ("jaxlib.xla_extension.XlaRuntimeError: INTERNAL: Failed call to hipGetFuncBySymbol: "
     "hipError_t(98)\n", "hip.invalid-device-function"),
    # MIGraphX compile_ops.cpp (2023) under migraphx-driver
    ("terminate called after throwing an instance of 'migraphx::version_1::exception'\n  what():  "
     "/src/AMDMIGraphX/src/targets/gpu/compile_ops.cpp:180: benchmark: No configs to tune\n",
     "framework.migraphx-hiprtc-no-configs-to-tune"),
    # pip's resolver, unpinned, pip >= 25's wording
    ("ERROR: Could not find a final version that satisfies the requirement tensorflow-rocm "
     "(from versions: none)\n", "framework.tf-rocm-no-wheel-for-python"),
    # the requirement came from a file (pip's "(from -r <file> (line N))")
    ("ERROR: Could not find a version that satisfies the requirement tensorflow-rocm==2.14.0.600 "
     "(from -r requirements.txt (line 3)) (from versions: none)\n",
     "framework.tf-rocm-no-wheel-for-python"),
    # triton/backends/amd/compiler.py make_ttgir, the assertion as Python raises it
    ("  File \"/venv/lib/python3.10/site-packages/triton/backends/amd/compiler.py\", line 219, in "
     "make_ttgir\nAssertionError: Triton AMD backend pipeliner has been updated. We used to "
     "trigger software pipelining with num_stages == 0. Now it will not happen anymore; please "
     "update to use num_stages == 2 for equivalent behavior in the past.\n",
     "framework.triton-amd-num-stages-zero"),
    # DeepSpeed 0.15.0 setup.py through pip (site-packages layout, another line number)
    ('  File "/tmp/pip-install-abc/deepspeed_0123/op_builder/gds.py", line 46, in is_compatible\n'
     '    CUDA_LIB64 = os.path.join(CUDA_HOME, "lib64")\n'
     '                 ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n'
     '  File "<frozen posixpath>", line 76, in join\n'
     "TypeError: expected str, bytes or os.PathLike object, not NoneType\n",
     "framework.deepspeed-0-15-0-gds-builder-rocm"),
]  # fmt: skip

SILENT = [
    # the gpu/ref targets and the moved private libraries are other causes
    ("check_load_error: Dynamic loading or symbol lookup failed with libmigraphx_gpu.so: "
     "cannot open shared object file: No such file or directory\n",
     "framework.migraphx-cpu-target-not-built"),
    ("migraphx-driver: error while loading shared libraries: libmigraphx_cpu.so.2010000: "
     "cannot open shared object file: No such file or directory\n",
     "rocm.migraphx-private-lib-not-on-rpath"),
    # a healthy MIGraphX configure
    ("-- GPU_TARGETS: gfx942;gfx90a\n-- MIGraphX is using HSA runtime for chiplet query\n",
     "compiler.hip-cmake-gpu-detection-failed"),
    # matching versions reported by jax.print_environment_info()
    ("jax:    0.5.0\njaxlib: 0.5.0\nnumpy:  2.2.3\n", "framework.jax-jaxlib-version-mismatch"),
    # NVIDIA's libdevice (XLA's NVPTX path) and a bitcode file that is not a ROCm device library
    ("RuntimeError: Internal: libdevice not found at ./libdevice.10.bc\n",
     "framework.xla-rocm-device-bitcode-not-found"),
    ("INTERNAL: bitcode module not found at /tmp/kernels/custom_call_lib.bc\n",
     "framework.xla-rocm-device-bitcode-not-found"),
    # DeepSpeed's toolkit check (system CUDA vs torch's) is another cause
    ("deepspeed.ops.op_builder.builder.CUDAMismatchException: >- DeepSpeed Op Builder: Installed "
     "CUDA version 12.2 does not match the version torch was compiled with 11.7, unable to "
     "compile cuda/cpp extensions without a matching cuda version.\n",
     "framework.torch-extension-built-for-other-torch"),
    # another HIP error number from the same lookup (1: hipErrorInvalidValue) is not this cause
    ("INTERNAL: Failed call to hipGetFuncBySymbol: hipError_t(1)\n",
     "hip.invalid-device-function"),
    # MIGraphX's tuning trace of a healthy compile
    ("Benchmarking gpu::mlir_op: 12 configs\n", "framework.migraphx-hiprtc-no-configs-to-tune"),
    # versions exist, only the pinned one does not: another problem
    ("ERROR: Could not find a version that satisfies the requirement tensorflow-rocm==2.99.0 "
     "(from versions: 2.13.0.570, 2.14.0.600)\n", "framework.tf-rocm-no-wheel-for-python"),
    # plain tensorflow (CUDA/CPU) on an unsupported Python is not a ROCm matter
    ("ERROR: Could not find a version that satisfies the requirement tensorflow (from versions: "
     "none)\n", "framework.tf-rocm-no-wheel-for-python"),
    # an autotuner line that merely names num_stages
    ("Triton autotuning for function triton_mm_0 finished after 1.2s; best config selected: "
     "BLOCK_M: 64, BLOCK_N: 64, num_warps: 4, num_stages: 0\n",
     "framework.triton-amd-num-stages-zero"),
    # the same TypeError from another op builder, and ds_report's healthy GDS line
    ('  File "/src/DeepSpeed/op_builder/async_io.py", line 90, in is_compatible\n'
     "TypeError: expected str, bytes or os.PathLike object, not NoneType\n",
     "framework.deepspeed-0-15-0-gds-builder-rocm"),
    ("gds .................... [NO] ....... [NO]\n", "framework.deepspeed-0-15-0-gds-builder-rocm"),
]  # fmt: skip
