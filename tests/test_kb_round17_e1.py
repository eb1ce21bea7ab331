"""Round 17 (engineer 1): frameworks and LLM apps. The texts are CONSTRUCTED, not captured
outputs: each fills a message's format string (named in the comment, from the program's source)
with typical values, or puts a real message next to the context that decides the cause."""

from __future__ import annotations

from rocmprov.kb import match

LEADS = [
    # rocBLAS library/src/tensile_host.cpp: "\nrocBLAS error: Cannot read " << tensileLibraryPath
    # << ": " << strerror(errno) << " for GPU arch : " << processor, once the lazy, per-arch and
    # plain TensileLibrary files are all absent: errno is whatever the last probe left
    ("rocBLAS error: Cannot read /opt/rocm-6.4.1/lib/rocblas/library/TensileLibrary.dat: "
     "Permission denied for GPU arch : gfx1151\n List of available TensileLibrary Files : \n",
     "rocblas.no-tensile-for-arch"),
    # the generic follow-up line does not take the lead from the line that names the target
    ("rocBLAS error: Cannot read C:\\Program Files\\AMD\\ROCm\\6.2\\bin\\/rocblas/library/"
     "TensileLibrary.dat: No such file or directory for GPU arch : gfx1103\n"
     "rocBLAS error: Could not initialize Tensile library\n", "rocblas.no-tensile-for-arch"),
    # koboldcpp-rocm's .exe bundle (PyInstaller _MEI folder) names the target too: rocBLAS's cause
    ("[12:01:33] rocBLAS error: Cannot read C:\\Users\\Jo Ann\\AppData\\Local\\Temp\\_MEI40212\\"
     "/library/TensileLibrary.dat: No such file or directory for GPU arch : gfx1101\n",
     "rocblas.no-tensile-for-arch"),
    # ggml ggml-cuda.cu ggml_cuda_error(): GGML_LOG_ERROR(GGML_CUDA_NAME " error: %s\n", msg);
    # "  current device: %d, in function %s at %s:%d\n"; "  %s\n" (stmt); GGML_ABORT
    ("CUDA error: invalid device function\n  current device: 0, in function "
     "ggml_backend_cuda_graph_compute at /home/u/llama.cpp/ggml/src/ggml-cuda/ggml-cuda.cu:2798\n"
     "  err\n", "hip.invalid-device-function"),
    # any kernel launcher, a Windows path with a space (koboldcpp), a ROCm build's name
    ("ROCm error: invalid device function\n  current device: 1, in function launch_fattn at "
     "C:/Users/Jo Ann/koboldcpp/ggml/src/ggml-cuda/template-instances/../fattn-common.cuh:870\n"
     "  hipGetLastError()\n", "hip.invalid-device-function"),
    # Ollama's vendored ggml (ml/backend/ggml/ggml/src/ggml-cuda), mmq launcher
    ("CUDA error: invalid device function\n  current device: 0, in function mul_mat_q at "
     "/go/src/github.com/ollama/ollama/ml/backend/ggml/ggml/src/ggml-cuda/mmq.cuh:2690\n"
     "  hipGetLastError()\n", "hip.invalid-device-function"),
    # Dec 2023 ggml: fprintf(stderr, "CUDA error: %s: %s\n", stmt, msg); "  in function %s at %s:%d"
    # (whisper.cpp of that time)
    ("CUDA error: cudaGetLastError(): invalid device function\n  in function "
     "ggml_cuda_op_mul_mat at /tmp/whisper.cpp/ggml-cuda.cu:8502\n"
     "GGML_ASSERT: /tmp/whisper.cpp/ggml-cuda.cu:224: !\"CUDA error\"\n",
     "hip.invalid-device-function"),
    # mid-2023: "\nCUDA error %d at %s:%d: %s\n", a path with a space
    ("CUDA error 98 at D:\\my builds\\stable-diffusion.cpp\\ggml\\src\\ggml-cuda.cu:6946: "
     "invalid device function\n", "hip.invalid-device-function"),
    # a backtrace through ggml's HIP library a few lines below the error
    ("CUDA error: invalid device function\n  current device: 0\n  err\n"
     "/usr/local/lib/ollama/rocm/libggml-hip.so(+0x1234)[0x7f00]\n",
     "hip.invalid-device-function"),
    # bitsandbytes cextension.py 0.46: raise RuntimeError(f"Configured CUDA binary not found at
    # {cuda_binary_path}") for every backend, logged as "bitsandbytes library load error: {e}"
    ("bitsandbytes library load error: Configured CUDA binary not found at /opt/venv/lib/"
     "python3.12/site-packages/bitsandbytes/libbitsandbytes_rocm63.so\n",
     "framework.bitsandbytes-rocm-library-version-not-found"),
    ("bitsandbytes library load error: Configured CUDA binary not found at /usr/lib/python3/"
     "site-packages/bitsandbytes/libbitsandbytes_cuda128.so\n",
     "framework.bitsandbytes-native-library-not-found"),
    # 0.43-0.45: logger.warning("Could not find the bitsandbytes CUDA binary at %r", path),
    # on Windows
    ("Could not find the bitsandbytes CUDA binary at WindowsPath('C:/venv/Lib/site-packages/"
     "bitsandbytes/libbitsandbytes_cuda121.dll')\n",
     "framework.bitsandbytes-native-library-not-found"),
    # MIOpen src/include/miopen/sqlite_db.hpp: MIOPEN_LOG_W("Missing system database file: " <<
    # filename_ << " Performance may degrade. ..."), once per process, beside a real failure: the
    # failure leads, the harmless note stays below it (src/hip/hipoc_program / hiprtc log line)
    ("MIOpen(HIP): Warning [SQLiteBase] Missing system database file: gfx1030_40.kdb Performance "
     "may degrade. Please follow instructions to install: https://github.com/ROCm/"
     "MIOpen#installing-miopen-kernels-package\nMIOpen(HIP): Error [Compile] "
     "'hiprtcCompileProgram(prog.get(), c_options.size(), c_options.data())' "
     "MIOpenDropoutHIP.cpp: HIPRTC_ERROR_COMPILATION (6)\n", "miopen.hiprtc-compile-failed"),
    # torch c10/cuda/CUDAFunctions.cpp: TORCH_CHECK(count, "No CUDA GPUs are available") (the
    # ROCm build is hipified to "No HIP GPUs"): the CUDA wheel, with an AMD GPU named nearby
    ("Total VRAM 16368 MB, Device: AMD Radeon RX 6800 XT\nTraceback (most recent call last):\n"
     "    torch._C._cuda_init()\nRuntimeError: No CUDA GPUs are available\n",
     "apt.cuda-torch-on-amd"),
    ("RuntimeError: No CUDA GPUs are available\n\nI have an RX 7900 XTX and installed ROCm 6.2\n",
     "apt.cuda-torch-on-amd"),
    # CTranslate2 src/cuda/utils.h CUDA_CHECK: "CUDA failed with error " + cudaGetErrorString():
    # the CUDA runtime's no-device string from the CUDA wheel on an AMD box (faster-whisper)
    ("Detected GPU: AMD Radeon RX 7900 XTX (gfx1100), ROCm 6.2\nLoading faster-whisper model "
     "large-v3 on cuda\nRuntimeError: CUDA failed with error no CUDA-capable device is detected\n",
     "framework.ctranslate2-no-gpu-build"),
]  # fmt: skip

SILENT = [
    # no AMD evidence, or an NVIDIA box
    ("RuntimeError: CUDA failed with error no CUDA-capable device is detected\n",
     "framework.ctranslate2-no-gpu-build"),
    ("GPU: NVIDIA GeForce RTX 4090\nRuntimeError: CUDA failed with error no CUDA-capable device "
     "is detected\n", "framework.ctranslate2-no-gpu-build"),
    # the same line with no AMD evidence, on an NVIDIA box, or under ZLUDA (its own entries)
    ("RuntimeError: No CUDA GPUs are available\n", "apt.cuda-torch-on-amd"),
    ("GPU 0: NVIDIA GeForce RTX 3090 (UUID: GPU-1)\nRuntimeError: No CUDA GPUs are available\n",
     "apt.cuda-torch-on-amd"),
    ("Using ZLUDA with AMD Radeon RX 6800\nRuntimeError: No CUDA GPUs are available\n",
     "apt.cuda-torch-on-amd"),
]  # fmt: skip

# PyTorch's own message (c10/cuda/CUDAException) with no ggml in sight, and a torch failure whose
# log mentions ggml only far away: these once had to keep llm.ggml-invalid-device-function out;
# since round 19 that entry is part of hip.invalid-device-function, which must answer them
# without its llama.cpp (ggml op) fix
TORCH_NOT_GGML = [
    "RuntimeError: HIP error: invalid device function\nHIP kernel errors might be "
    "asynchronously reported at some other API call, so the stacktrace below might be "
    "incorrect.\n",
    "RuntimeError: CUDA error: invalid device function\nCompile with `TORCH_USE_CUDA_DSA` to "
    "enable device-side assertions.\n\n\n\n\n\n\n\n\nloading libggml.so for the tokenizer\n",
]  # fmt: skip


def test_a_torch_invalid_device_function_gets_no_llama_cpp_fix() -> None:
    for text in TORCH_NOT_GGML:
        top = match(text)[0]
        assert top.id == "hip.invalid-device-function", text
        assert "ggml" not in top.condition and "op" not in top.captures, text



def test_the_koboldcpp_bundle_gets_its_own_fix() -> None:
    text = ("rocBLAS error: Cannot Read C:\\Temp\\_MEI1234\\/library/TensileLibrary.dat No such "
            "file or directory for GPU arch : gfx1032\n")  # fmt: skip
    top = match(text)[0]
    assert top.id == "rocblas.no-tensile-for-arch" and "koboldcpp-rocm" in top.fix
