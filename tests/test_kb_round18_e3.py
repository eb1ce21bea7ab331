"""Round 18 (engineer 3): NVIDIA vetoes of CUDA-worded errors (CTranslate2's CUDA wrapper, ggml's
"CUDA error: invalid device function") and container/orchestration entries. Every text below
is CONSTRUCTED (not a captured output) from the programs' format strings: the leads vary the
reported wording (prefixes, distances, wrapping) to show robustness; the counter-examples are
the same messages on an NVIDIA machine, or healthy/unrelated lines, that must not fire."""

from __future__ import annotations

from rocmprov.kb import match

_FILL = "llama_model_loader: - kv   3:                       general.name str = m\n"
_CT2 = ("RuntimeError: CUDA failed with error CUDA driver version is insufficient for CUDA "
        "runtime version\n")
_NODEV = ("  File \"/app/transcribe.py\", line 12, in <module>\nRuntimeError: CUDA failed with "
          "error no CUDA-capable device is detected\n")
_GGML = ("CUDA error: invalid device function\n  current device: 0, in function "
         "ggml_cuda_compute_forward at /src/llama.cpp/ggml/src/ggml-cuda/ggml-cuda.cu:2301\n"
         "  err\n")

LEADS = [
    # constructed: CTranslate2's wrapper alone (src/cuda/utils.h: "CUDA failed with error " +
    # cudaGetErrorString), as on an AMD host with the CUDA wheel
    (_CT2, "framework.ctranslate2-no-gpu-build"),
    # constructed: the same, wrapped by a web UI's log at "insufficient"
    ("2026-12-01 10:00:01 ERROR: CUDA failed with error CUDA driver version is insufficient\n"
     "for CUDA runtime version\n", "framework.ctranslate2-no-gpu-build"),
    # constructed: an ROCm hint 20 lines above the no-device line
    ("torch 2.5.1+rocm6.2 on ROCm 6.2\n" + "INFO loading\n" * 20 + _NODEV,
     "framework.ctranslate2-no-gpu-build"),
    # constructed: the GPU named just above
    ("GPU: AMD Radeon RX 7900 XTX\n" + _NODEV, "framework.ctranslate2-no-gpu-build"),
    # constructed: the GPU named below the traceback
    (_NODEV + "\nMy card is a Radeon RX 6800 on ROCm 6.1\n", "framework.ctranslate2-no-gpu-build"),
    # constructed: an old HIP build of llama.cpp (named "CUDA", AMD device line with HIP's
    # "compute capability" of gfx1031) far above the error
    ("ggml_init_cublas: found 1 CUDA devices:\n  Device 0: AMD Radeon RX 6700 XT, compute "
     "capability 10.3, VMM: no\n" + _FILL * 25 + _GGML, "hip.invalid-device-function"),
    # constructed: the Ollama HIP library in the backtrace
    ("CUDA error: invalid device function\n  current device: 0\n  err\n"
     "/usr/lib/ollama/rocm/libggml-hip.so(+0x5678)[0x7f01]\n", "hip.invalid-device-function"),
    # constructed: mid-2023 ggml's CUDA_CHECK with a log prefix
    ("[1701] CUDA error 98 at /build/llama.cpp/ggml-cuda.cu:6246: invalid device function\n",
     "hip.invalid-device-function"),
    # constructed: the ROCm name is never vetoed, whatever the text says about NVIDIA
    ("(I replaced my GeForce GTX 1060 with this card)\nROCm error: invalid device function\n"
     "  current device: 0, in function ggml_cuda_compute_forward at ggml-cuda.cu:2301\n",
     "hip.invalid-device-function"),
]  # fmt: skip

SILENT = [
    # constructed: the CTranslate2 wrapper on an NVIDIA machine (nvidia-smi shown above)
    ("$ nvidia-smi\n| NVIDIA-SMI 470.82.01  Driver Version: 470.82.01  CUDA Version: 11.4 |\n"
     "Traceback (most recent call last):\n" + _CT2, "framework.ctranslate2-no-gpu-build"),
    # constructed: the NVIDIA card named below
    (_CT2 + "System: Ubuntu 22.04, GeForce RTX 2080 Ti, driver 470\n",
     "framework.ctranslate2-no-gpu-build"),
    # constructed: a ROCm hint far above, an NVIDIA card right below the no-device line
    ("uninstalled ROCm last week\n" + "INFO loading\n" * 20 + _NODEV + "GPU: RTX 3090\n",
     "framework.ctranslate2-no-gpu-build"),
    # constructed: an NVIDIA driver tool before the ROCm hint, within 15 lines of the message
    ("nvidia-smi shows no devices\nnot using ROCm\n" + _NODEV,
     "framework.ctranslate2-no-gpu-build"),
    # constructed: a CUDA build of llama.cpp on an old NVIDIA card (ggml's device listing)
    ("ggml_cuda_init: found 1 CUDA devices:\n  Device 0: NVIDIA GeForce GTX 1070, compute "
     "capability 6.1, VMM: yes\n" + _FILL * 30 + _GGML, "hip.invalid-device-function"),
    # constructed: whisper.cpp's Dec-2023 wording on a Tesla
    ("whisper_backend_init: using CUDA backend\nDevice 0: Tesla K80, compute capability 3.7\n"
     "CUDA error: cudaGetLastError(): invalid device function\n  in function "
     "ggml_cuda_op_mul_mat at /tmp/whisper.cpp/ggml-cuda.cu:8502\n",
     "hip.invalid-device-function"),
    # constructed: a CUDA program's own runtime error string on an NVIDIA card (not HIP's
    # status code line): the hip entry's CUDA wording stays out
    ("GPU 0: NVIDIA GeForce GTX 1080\nthrust::system_error: parallel_for failed: "
     "cudaErrorInvalidDeviceFunction: invalid device function\n", "hip.invalid-device-function"),
]  # fmt: skip

# constructed: a Jetson (no NVIDIA in the name, a non-AMD compute capability). ggml's patterns
# stay out (their `unless`), and so does the status-code path: the line is also HIP's message
# for hipErrorInvalidDeviceFunction, a code hip.invalid-device-function owns, and the matcher's
# NVIDIA-machine check for such codes is the shared definition (rocmprov/kb/contexts.py) since
# round 19, which knows a "Device N: ..., compute capability" line that names no AMD part.
_JETSON = "  Device 0: Orin, compute capability 8.7, VMM: yes\n" + _FILL * 10 + _GGML


def test_a_jetson_ggml_cuda_error_is_no_hip_cause() -> None:
    assert "hip.invalid-device-function" not in [m.id for m in match(_JETSON)]


SLURM_LEADS = [
    # constructed from gres.c's fatal(): an AMD render node, slurmd's own log prefix
    ("[2026-12-01T10:00:21.004] fatal: can't stat gres.conf file /dev/dri/renderD135: No such "
     "file or directory\n", "container.slurm-gres-file-missing"),
    ("slurmd-gpu01: warning: The following autodetected GPUs are being ignored:\n"
     "slurmd-gpu01:     GRES[gpu] Type:amd_instinct_mi210 Count:1 Cores(64):0-31  "
     "Links:-1,15 Flags:HAS_FILE,HAS_TYPE,ENV_RSMI File:/dev/dri/renderD128 UniqueId:(null)\n",
     "container.slurm-gres-gpus-ignored"),
]  # fmt: skip

SLURM_SILENT = [
    # constructed: the device node appeared during the wait (healthy)
    ("error: Waiting for gres.conf file /dev/dri/renderD128\ngres.conf file /dev/dri/renderD128 "
     "now exists\n", "container.slurm-gres-file-missing"),
    # constructed: gres.conf itself missing is another message (no /dev node)
    ("fatal: can't stat gres.conf file /etc/slurm/gres.conf: Permission denied\n",
     "container.slurm-gres-file-missing"),
    # constructed: a healthy merge
    ("debug:  Including the following GPU matched between system and configuration:\n"
     "debug:      GRES[gpu] Type:mi300x Count:1 File:/dev/dri/renderD128\n",
     "container.slurm-gres-gpus-ignored"),
]  # fmt: skip



PODMAN_LEADS = [
    # constructed from cmd/podman/containers/create.go: keep-groups with the render group too
    ("$ podman run --rm --device /dev/kfd --device /dev/dri --group-add keep-groups "
     "--group-add render rocm/pytorch rocminfo\nError: the '--group-add keep-groups' option is "
     "not allowed with any other --group-add options\n", "container.podman-keep-groups-rejected"),
    # constructed: the same from podman-remote
    ("Error: the '--group-add keep-groups' option is not supported in remote mode\n",
     "container.podman-keep-groups-rejected"),
    # constructed: Podman 3.1 via a Quadlet-less systemd unit, journal prefix
    ("Dec 01 10:00:00 host podman[4242]: Error: error looking up supplemental groups for "
     "container 1f2e: Unable to find group keep-groups\n", "container.podman-keep-groups-rejected"),
]  # fmt: skip

PODMAN_SILENT = [
    # constructed: an ordinary missing group name (another cause: the name is not in the
    # image's /etc/group)
    ("Error: looking up supplemental groups for container 1f2e: Unable to find group render: "
     "no matching entries in group file\n", "container.podman-keep-groups-rejected"),
    # constructed: a healthy run that merely echoes the option
    ("+ podman run --group-add keep-groups --device /dev/kfd rocm/dev-ubuntu-24.04 rocminfo\n"
     "ROCk module is loaded\n", "container.podman-keep-groups-rejected"),
]  # fmt: skip



def test_round18_e3_podman_condition() -> None:
    from rocmprov.kb import match

    text = ("Error: the '--group-add keep-groups' option is not allowed with any other "
            "--group-add options\n")
    found = [m for m in match(text) if m.id == "container.podman-keep-groups-rejected"]
    assert found and found[0].condition == "combined with other --group-add options"


CTK_LEADS = [
    # constructed from internal/gpu-tracker's slog.Warn (later releases): an index past the last GPU
    ('time=2026-12-01T10:00:00.000Z level=WARN msg="Ignoring GPUs as they are invalid" '
     "gpus=[8]\n", "container.amd-visible-devices-invalid"),
    # constructed from the fmt.Printf form: a malformed range
    ("Ignoring [7-3] GPUs Ranges as they are invalid\n", "container.amd-visible-devices-invalid"),
]  # fmt: skip

CTK_SILENT = [
    # constructed: amd-ctk's healthy listing
    ("Found 2 AMD GPU devices\nGPU Id    UUID                     DRM Devices\n"
     "0         0xEF2C1799A1F3E2ED       /dev/dri/renderD128\n",
     "container.amd-visible-devices-invalid"),
    # constructed: another program's wording about GPUs it skips
    ("Ignoring 2 GPUs as they are busy\n", "container.amd-visible-devices-invalid"),
]  # fmt: skip
