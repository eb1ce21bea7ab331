"""Round 16, hostile review A: counter-examples that the round's changes got wrong before this
review's fixes (each failed on kb16e2 at b69a646), and the fixed cases.

Every text here is constructed, not taken from a report:
- rocminfo's failure lines from rocminfo.cc's format ("hsa api call failure at: %s:%d",
  "Call returned %s"), with sentences a user might write next to them;
- amd-ctk 1.0-1.2's stdout from ROCm/container-toolkit v1.2.0 cmd/amd-ctk/cdi/generate/generate.go
  ("Failed to generate CDI spec, Error: %v") around the bare os.Stat error;
- jax's "Backend '%s' failed to initialize: %s. Available backends are %s" (xla_bridge.py
  get_backend) filled with errors of other causes;
- Ollama's slog lines from discover/amd.go#L470, runner.go#L405 and types.go#L50 (fb30760).
"""

from __future__ import annotations

import pytest

from rocmprov.kb import match

ROCMINFO_FAILED = (
    "hsa api call failure at: /src/rocminfo/rocminfo.cc:1306\n"
    "Call returned HSA_STATUS_ERROR_OUT_OF_RESOURCES: The runtime failed to allocate the "
    "necessary resources.\n"
)


def ids(text: str) -> list[str]:
    return [m.id for m in match(text)]


# --- kfd.permission-denied: "works with sudo" evidence ------------------------------------------


@pytest.mark.parametrize(
    "said",
    [
        # sudo/root in a sentence about something else: no evidence that the program needs root
        "I installed ROCm 6.2 with sudo amdgpu-install and it succeeded.",
        "Installation using sudo worked fine, no errors.",
        "docker only works with sudo on this box, so I run: sudo docker run --device=/dev/kfd",
        "Adding myself to the render group with sudo usermod worked, but nothing changed.",
        "The build works for root as well as for my user; only the test fails.",
        "hipcc compiles fine, and rocm-smi works with sudo; groups: render video",
        # a question is no statement
        "Is it expected that it works with sudo?",
    ],
)
def test_sudo_in_an_unrelated_sentence_is_no_permission_evidence(said: str) -> None:
    # each of these made kfd.permission-denied lead over rocr.out-of-resources before the fix
    for text in (ROCMINFO_FAILED + said + "\n", said + "\n" + ROCMINFO_FAILED):
        assert "kfd.permission-denied" not in ids(text), said


@pytest.mark.parametrize(
    "said",
    [
        "rocminfo works with sudo.",
        "With sudo it works fine.",
        "It runs fine as root, but not as my user.",
        "rocminfo only works for root but not regular user.",
        "As root, it works.",
        "It works only with sudo.",
    ],
)
def test_the_program_working_as_root_is_still_evidence(said: str) -> None:
    for text in (ROCMINFO_FAILED + said + "\n", said + "\n" + ROCMINFO_FAILED):
        assert ids(text)[0] == "kfd.permission-denied", said


def test_sudo_rocminfo_output_after_another_programs_failure_is_no_evidence() -> None:
    # a PyTorch run fails (for any reason), then the report template's `sudo rocminfo` output
    text = (
        "$ python3 train.py\n"
        "terminate called after throwing an instance of 'std::runtime_error'\n"
        "  what():  HSA_STATUS_ERROR_OUT_OF_RESOURCES: The runtime failed to allocate the "
        "necessary resources.\n"
        "Aborted (core dumped)\n\nrocminfo output:\n$ sudo rocminfo\nROCk module is loaded\n"
        "=====================\nHSA System Attributes\n=====================\n"
        "Runtime Version:         1.1\n"
    )
    assert "kfd.permission-denied" not in ids(text)


def test_plain_rocminfo_failing_then_sudo_rocminfo_listing_agents_is_evidence() -> None:
    text = (
        "$ /opt/rocm/bin/rocminfo\nROCk module is loaded\n" + ROCMINFO_FAILED
        + "\nNow with sudo:\n$ sudo /opt/rocm/bin/rocminfo\nROCk module is loaded\n"
        "=====================\nHSA System Attributes\n=====================\n"
    )
    assert ids(text)[0] == "kfd.permission-denied"


# --- container.amd-ctk-no-amdgpu-driver: toolkit 1.0-1.2 -----------------------------------------


def test_amd_ctk_before_1_3_bare_stat_error_is_the_missing_driver() -> None:
    # 1.0-1.2 failed too (no spec "without GPUs"), printing the bare stat error
    text = (
        "$ sudo amd-ctk cdi generate --output=/etc/cdi/amd.json\n"
        "Failed to generate CDI spec, Error: stat /sys/module/amdgpu/drivers/: no such file or "
        "directory\n"
    )
    top = match(text)[0]
    assert top.id == "container.amd-ctk-no-amdgpu-driver"
    assert "without GPUs" not in top.cause


def test_amd_ctk_other_stat_errors_are_not_the_missing_driver() -> None:
    text = "Failed to generate CDI spec, Error: stat /etc/cdi: permission denied\n"
    assert "container.amd-ctk-no-amdgpu-driver" not in ids(text)


# --- framework.jax-rocm-backend-not-registered: stored errors of other causes --------------------


@pytest.mark.parametrize(
    ("error", "cause"),
    [
        ("INTERNAL: Failed call to hipInit: hipErrorNoDevice", "hip.no-rocm-capable-device"),
        ("INTERNAL: hipGetDeviceCount failed: HSA_STATUS_ERROR_OUT_OF_RESOURCES",
         "rocr.out-of-resources"),
        ("INTERNAL: Unable to load MIOpen: libMIOpen.so.1: cannot open shared object file: No "
         "such file or directory", "rocm.library-not-found"),
    ],
)  # fmt: skip
def test_jax_backend_failed_to_initialize_keeps_the_errors_own_cause(
    error: str, cause: str
) -> None:
    text = (f"RuntimeError: Backend 'rocm' failed to initialize: {error}. Available backends are "
            "['cpu']\n")  # fmt: skip
    found = ids(text)
    assert "framework.jax-rocm-backend-not-registered" not in found
    assert found[0] == cause


def test_jax_backend_failed_to_initialize_with_no_rocm_platform_is_still_not_registered() -> None:
    text = ("RuntimeError: Backend 'rocm' failed to initialize: NOT_FOUND: Could not find "
            'registered platform with name: "rocm". Available platform names are: CUDA Host. '
            "Available backends are ['cpu']\n")  # fmt: skip
    assert ids(text)[0] == "framework.jax-rocm-backend-not-registered"


def test_jax_out_of_memory_stored_error_is_not_a_missing_plugin() -> None:
    text = ("RuntimeError: Backend 'rocm' failed to initialize: RESOURCE_EXHAUSTED: Out of "
            "memory while trying to allocate 1073741824 bytes.. Available backends are "
            "['cpu']\n")  # fmt: skip
    assert "framework.jax-rocm-backend-not-registered" not in ids(text)


# --- Ollama: the dGPU dropped as unsupported must lead over the iGPU drop ------------------------

DROP_IGPU = (
    'time=2026-05-02T10:14:03.512Z level=INFO source=runner.go:405 msg="dropping integrated GPU; '
    'to enable, set OLLAMA_IGPU_ENABLE=1" id=1 library=ROCm compute=gfx1036 name=ROCm1 '
    'description="AMD Radeon Graphics" pci_id=0000:7a:00.0\n'
)
CPU_ONLY = (
    'time=2026-05-02T10:14:03.513Z level=INFO source=types.go:60 msg="inference compute" id=cpu '
    'library=cpu compute="" name=cpu description=cpu libdirs=ollama driver="" pci_id="" type="" '
    'total="30.6 GiB" available="27.9 GiB"\n'
)
DROP_DGPU = (
    'time=2026-05-02T10:14:03.500Z level=WARN source=amd.go:470 msg="dropping ROCm device — no '
    'rocblas support for gfx target" device=ROCm0 gfx_target=gfx1032 supported="map[gfx1030:true '
    'gfx1100:true]" hint="set HSA_OVERRIDE_GFX_VERSION to map to a supported target"\n'
)


def test_ollama_unsupported_dgpu_and_dropped_igpu_leads_with_the_dgpu() -> None:
    # a desktop Ryzen (gfx1036 iGPU) with an RX 6600 (gfx1032): before the fix the only match was
    # "set OLLAMA_IGPU_ENABLE=1", which would put the model on the 2-CU iGPU
    top = match(DROP_DGPU + DROP_IGPU + CPU_ONLY)[0]
    assert top.id == "rocm.ollama-gpu-not-supported"
    assert top.captures.get("gfx") == "gfx1032"
    assert "HSA_OVERRIDE_GFX_VERSION=10.3.0" in top.fix


def test_ollama_dropped_igpu_alone_with_cpu_stays_the_igpu_cause() -> None:
    assert ids(DROP_IGPU + CPU_ONLY)[0] == "llm.ollama-igpu-dropped-not-allowlisted"
