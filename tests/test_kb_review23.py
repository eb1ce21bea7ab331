"""Review of session 23's table entries and matcher changes: each test is a defect found by a
hostile read, failing before its fix."""

from __future__ import annotations

from rocmprov.kb import match
from rocmprov.kb.lineends import normalise
from rocmprov.kb.window import SPAN


def _ids(text: str) -> list[str]:
    return [m.id for m in match(text)]


def test_rpm_dependency_entry_does_not_take_rocky_or_rocksdb_for_rocm() -> None:
    """apt.rpm-rocm-dependency-unresolvable's package names began with a bare `roc`, so a
    libsolv failure of Rocky Linux's own packages or of EPEL's rocksdb was shown as a ROCm
    repository that does not fit the OS. rock-dkms (AMD's old driver package) and the roc*
    libraries still count."""
    entry = "apt.rpm-rocm-dependency-unresolvable"
    for healthy in (
        " - nothing provides libgflags.so.2.2()(64bit) needed by rocksdb-6.22.1-2.el9.x86_64\n",
        " - nothing provides rocky-release needed by rocky-logos-9.2-1.el9.noarch\n",
        " - package rocky-release-9.3-1.2.el9.noarch requires rocky-repos(x86-64), but none of"
        " the providers can be installed\n",
        "Error: Package: rocksdb-5.7.3-1.el7.x86_64 (epel)\n           Requires: libgflags.so.2\n",
        " - nothing provides libQt5Core.so.5 needed by rocs-23.08.5-1.fc39.x86_64\n",
    ):
        assert entry not in _ids(healthy), healthy
    for rocm in (
        " - nothing provides libstdc++-devel needed by rocblas-devel-4.0.0.60000-91.el8.x86_64\n",
        " - nothing provides dkms needed by rock-dkms-1:3.9-29.el7.noarch\n",
        " - nothing provides perl(URI::Encode) needed by rocprofiler-2.0.60000-91.el8.x86_64\n",
        " - nothing provides libdrm_amdgpu needed by rocminfo-1.0.0.60000-91.el8.x86_64\n",
        " - nothing provides libfmt.so.9 needed by rocsolver-3.24.0.60000-91.el8.x86_64\n",
    ):
        assert entry in _ids(rocm), rocm


def test_near_and_unless_read_the_lines_around_an_enormous_line() -> None:
    """context_ok read an enormous line only SPAN either way of the match (right), but then no
    line around it (the start it widened from was inside the line): a `near` on the line before
    a match that sat more than SPAN into a long line of \\r progress output was no longer seen,
    where the code before 614744d found it (it read from the text's start)."""
    progress = "".join(f"\rProgress: [{i % 100:3d}%] [" + "#" * 40 + "]" for i in range(300))
    entry = "dkms.initramfs-boot-full"  # update-initramfs failed, near 'No space left on device'
    enormous = progress.replace("\r", " ")  # one line: a lone \r stays inside its line
    before = (
        "cp: error writing '/boot/initrd.img-6.8.0-40-generic.new': No space left on device\n"
        + enormous + "update-initramfs: failed for /boot/initrd.img-6.8.0-40-generic with 1.\n"
    )
    after = (
        "update-initramfs: failed for /boot/initrd.img-6.8.0-40-generic with 1." + enormous
        + "\ncp: error writing '/boot/x': No space left on device\n"
    )
    old_after = (  # the input before r26-g7: the bar's \r after the message, answered as then
        "update-initramfs: failed for /boot/initrd.img-6.8.0-40-generic with 1." + progress
        + "\ncp: error writing '/boot/x': No space left on device\n"
    )
    assert max(map(len, normalise(before).split("\n"))) > 2 * SPAN  # the enormous-line path
    assert entry in _ids(before)
    assert entry in _ids(after)
    assert entry in _ids(old_after)
    far = "No space left on device\n" + "ok\n" * 10 + enormous + before.split("\n", 1)[1]
    assert entry not in _ids(far)  # only `around` lines either way


def test_onnxruntime_cuda_provider_entry_needs_an_amd_host_in_the_log() -> None:
    """framework.onnxruntime-cuda-provider-on-amd (priority 72) fired on ONNX Runtime's
    missing-cuBLAS line alone, unless NVIDIA was named within 15 lines. That line is far more
    often an NVIDIA host's CUDA/cuDNN version mismatch (PaddleNLP#8195: onnxruntime-gpu for CUDA
    11 under CUDA 12; no line there names NVIDIA), which the entry then called an AMD host
    that should install onnxruntime-rocm. As apt.cuda-torch-on-amd, it now needs the log to
    show the AMD side (ROCm, a gfx target, a Radeon)."""
    entry = "framework.onnxruntime-cuda-provider-on-amd"
    nvidia = (  # PaddlePaddle/PaddleNLP#8195
        "[2024-03-27 06:33:22,299] [    INFO] - >>> [InferBackend] Use GPU to inference ...\n"
        "2024-03-27 06:33:23.219728338 [E:onnxruntime:Default, provider_bridge_ort.cc:1548 "
        "TryGetProviderInfo_CUDA] /onnxruntime_src/onnxruntime/core/session/provider_bridge_ort"
        ".cc:1209 onnxruntime::Provider& onnxruntime::ProviderLibrary::Get() [ONNXRuntimeError] "
        ": 1 : FAIL : Failed to load library libonnxruntime_providers_cuda.so with error: "
        "libcublasLt.so.11: cannot open shared object file: No such file or directory\n\n"
        "2024-03-27 06:33:23.219759101 [W:onnxruntime:Default, onnxruntime_pybind_state.cc:861 "
        "CreateExecutionProviderInstance] Failed to create CUDAExecutionProvider. Please "
        "reference https://onnxruntime.ai/docs/execution-providers/CUDA-ExecutionProvider.html"
        "#requirementsto ensure all dependencies are met.\n"
    )
    assert entry not in _ids(nvidia)
    amd = "### Sysinfo\n\nUbuntu 24.04 + ROCm 6.4 + rx 7800 xt\n\n### Relevant console log\n\n"
    assert entry in _ids(amd + nvidia)
    assert entry in _ids("Device: cuda:0 AMD Radeon RX 7800 XT : native\n" + nvidia)
    assert entry not in _ids("CPU: AMD Ryzen 9 7950X 16-Core Processor\n" + nvidia)


def test_this_sessions_line_breaks_take_a_carriage_return() -> None:
    """The new yum 'Package: ... / Requires:' and ROCr 'inactivated due to async error:'
    patterns, and the CMake 'include could not find requested file:' ones this session
    rewrote, ended their first line with `[ \\t]*\\n` or a bare `\\n`: a log saved with CRLF line
    ends (a Windows terminal, a CMake run of the HIP SDK) gave nothing, or only the bare status
    code, where the rule of test_kb_hygiene.py's line-span test is `[ \\t\\r]*`."""
    from pathlib import Path

    root = Path(__file__).resolve().parent / "fixtures"
    cases = {
        "kb/rocr.queue-invalid-allocation.txt": "rocr.queue-invalid-allocation",
        "kb-wordings/apt.rpm-rocm-dependency-unresolvable.libdrm-amdgpu.txt":
            "apt.rpm-rocm-dependency-unresolvable",
        "kb-wordings/compiler.cmake-findhip-module-missing.legion-findhip-include.txt":
            "compiler.cmake-findhip-module-missing",
        "kb-wordings/compiler.hip-cmake-target-nonexistent-include.hip-compat-targets-missing"
        ".txt": "compiler.hip-cmake-target-nonexistent-include",
    }  # fmt: skip
    for name, entry in cases.items():
        body = (root / name).read_text(encoding="utf-8").partition("\n---\n")[2]
        assert entry in _ids(body), name
        assert entry in _ids(body.replace("\n", "\r\n")), name
    cmake = (
        "CMake Error at /opt/rocm/lib/cmake/hip/hip-config.cmake:148 (include):\n"
        "  include could not find requested file:\n\n"
        "    /opt/rocm/lib/cmake/hip/hip-targets.cmake\n"
    )
    assert "compiler.cmake-hip-package-not-found" in _ids(cmake.replace("\n", "\r\n"))


def test_rocthrusts_own_cuda_backend_is_not_called_nvidia_thrust() -> None:
    """compiler.cuda-only-header-in-hip-source's thrust/system/cuda pattern (its condition:
    "the compiler found NVIDIA's Thrust before ROCm's") also took rocThrust's own
    thrust/system/cuda/ headers under /opt/rocm (shipped in 5.2: rocThrust#244's include
    chain), which a host-compiled file reaches when rocThrust falls back to its CUDA backend:
    there it told the user to remove NVIDIA's Thrust that is not installed."""
    rocthrust = (
        "In file included from /opt/rocm-5.2.0/include/thrust/system/cuda/detail/"
        "execution_policy.h:35:\n"
        "/opt/rocm-5.2.0/include/thrust/system/cuda/detail/guarded_cuda_runtime_api.h:38:10: "
        "fatal error: 'cuda_runtime_api.h' file not found\n"
        "#include <cuda_runtime_api.h>\n"
    )
    ids = _ids(rocthrust)
    assert ids[0] == "compiler.rocthrust-cuda-backend-outside-hip"
    assert "compiler.cuda-only-header-in-hip-source" not in ids
    nvidia_thrust = rocthrust.replace("/opt/rocm-5.2.0/include/", "/usr/include/")
    assert "compiler.cuda-only-header-in-hip-source" in _ids(nvidia_thrust)


def test_ollamas_linux_empty_supported_list_is_not_the_windows_entry() -> None:
    """llm.ollama-windows-gpu-not-supported's new pattern (the empty list pasted alone) took
    Ollama's Linux line too: amd_linux.go logs the same 'amdgpu is not supported (supported
    types:[...])' message (ollama's amd_linux.go, e.g. ollama#8473's log), and an empty list
    there was answered with the Windows HIP SDK's rocBLAS and a Windows-only override note."""
    entry = "llm.ollama-windows-gpu-not-supported"
    linux = (
        'time=2025-02-01T10:00:00.000Z level=WARN source=amd_linux.go:378 msg="amdgpu is not '
        'supported (supported types:[])" gpu_type=gfx1030 gpu=0 library=/usr/lib/ollama/rocm\n'
    )
    assert entry not in _ids(linux)
    assert entry not in _ids(linux.replace("source=amd_linux.go:378 ", ""))  # its library path
    windows = linux.replace("amd_linux.go:378", "amd_windows.go:138").replace(
        "library=/usr/lib/ollama/rocm", r"library=C:\Users\u\AppData\Local\Programs\Ollama\lib"
    )
    assert entry in _ids(windows)
    assert entry in _ids('msg="amdgpu is not supported (supported types:[])"\n')
