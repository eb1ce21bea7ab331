"""Review C of session 25's table (issue 28): each test is a defect found by a hostile read,
failing on the table before its fix (0bccd28)."""

from __future__ import annotations

from rocmprov.kb.table import load_table
from tests.kb_helpers import ids as _ids
from tests.kb_helpers import known as _known


def _entry_ids() -> set[str]:
    return {e.id for e in load_table().entries}


def test_rdci_no_gpus_needs_rdc_context_and_takes_the_old_wording() -> None:
    """1: "No GPUs found on the system" is printed by many non-AMD programs; rdci's needs
    rdci/rdcd/RDC near it, and the older rdci's "No GPUs find on the system" counts."""
    llvm = (
        "CMake Error at /src/llvm-project/libc/cmake/modules/prepare_libc_gpu_build.cmake:71"
        " (message):\n"
        "  No GPUs found on the system when using 'native'\n"
    )
    assert "amdsmi.rdci-no-gpus-found" not in _ids(llvm)
    assert "amdsmi.rdci-no-gpus-found" not in _ids(
        "2026-11-02 10:14:07,331 WARNING gpu_monitor: No GPUs found on the system.\n"
    )
    for word in ("found", "find"):
        text = f"$ rdci discovery -l\nNo GPUs {word} on the system\n"
        assert _known(text)[0].id == "amdsmi.rdci-no-gpus-found", word


def test_ras_near_threshold_needs_a_threshold_and_records() -> None:
    """2: with amdgpu.bad_page_threshold=0 every healthy boot logs records:0 of threshold:0."""
    zero = "amdgpu 0000:05:00.0: amdgpu: RAS records:0 exceeds 90% of threshold:0\n"
    assert "kernel.ras-bad-pages-near-threshold" not in _ids(zero)
    real = "amdgpu 0000:05:00.0: amdgpu: RAS records:462 exceeds 90% of threshold:512\n"
    assert _known(real)[0].id == "kernel.ras-bad-pages-near-threshold"


def test_cupy_peer_access_warning_is_noise_and_the_refusal_a_cause() -> None:
    """3: the PerformanceWarning "Peer access has been activated automatically" is a run that
    works; only the refusal (no peer access) is a root cause."""
    warning = (
        "/opt/conda/lib/python3.10/site-packages/cupy/_core/_kernel.py:1234: PerformanceWarning:"
        " The device where the array resides (0) is different from the current device (1)."
        " Peer access has been activated automatically.\n[ 2  4  6  8 10]\n"
    )
    assert _known(warning) == []
    assert "noise.cupy-peer-access-activated-automatically" in _ids(warning)
    refusal = (
        "ValueError: The device where the array resides (0) is different from the current"
        " device (1). Peer access is unavailable between these devices.\n"
    )
    assert _known(refusal)[0].id == "framework.cupy-array-on-other-device"


def test_scorep_libpapi_entry_is_removed() -> None:
    """4: its fixture was a doc's table row and the message is any PAPI tool's."""
    assert "rocm.scorep-libpapi-missing-on-node" not in _entry_ids()
    tau = (
        "./a.out: error while loading shared libraries: libpapi.so.7.0: cannot open shared"
        " object file: No such file or directory\n"
    )
    assert "rocm.scorep-libpapi-missing-on-node" not in _ids(tau)


def test_astunparse_py38_needs_omniperf_context() -> None:
    """5: astunparse 1.6.3's error on Python 3.8 comes from any program that uses it."""
    chatglm = (
        '  File "/opt/conda/lib/python3.8/site-packages/astunparse/unparser.py", line 551,'
        " in _Constant\n"
        '    if t.kind == "u":\n'
        "AttributeError: 'Constant' object has no attribute 'kind'\n"
    )
    assert "rocm.rocprof-compute-astunparse-py38" not in _ids(chatglm)
    omniperf = (
        "$ omniperf analyze -p workloads/vcopy/MI200\n"
        '  File "/usr/lib/python3.8/site-packages/astunparse/unparser.py", line 36, in __init__\n'
        "AttributeError: 'Constant' object has no attribute 'kind'\n"
    )
    assert _known(omniperf)[0].id == "rocm.rocprof-compute-astunparse-py38"


def test_compute_partition_choices_split_takes_the_quoted_argparse_form() -> None:
    """6: Python <= 3.11's argparse quotes each choice."""
    text = (
        "amd-smi set: error: argument -C/--compute-partition: invalid choice: 'DPX' (choose from"
        " 'S', 'P', 'X', ',', ' ', 'D', 'P', 'X', ',', ' ', 'Q', 'P', 'X', ',', ' ', 'C', 'P',"
        " 'X', ',', ' ', '0', ',', ' ', '1', ',', ' ', '2', ',', ' ', '3')\n"
    )
    assert _known(text)[0].id == "amdsmi.cli-compute-partition-choices-split"


def test_dme_fatal_cper_reads_as_a_real_error_first() -> None:
    """7: the line is logged for every fatal CPER record, a new real error first; the stale
    record is a condition."""
    text = (
        'msg="gpuid[0] is set to unhealthy for cper[GPU:\\"x\\" CPEREntry:{RecordId:\\"1:1\\"'
        ' Severity:CPER_SEVERITY_FATAL}]" func="gpuagent_health.go:197"\n'
    )
    m = _known(text)[0]
    assert m.id == "amdsmi.dme-stale-fatal-cper-unhealthy"
    assert "old fatal" not in m.title and "stale" not in m.title.lower()
    assert "RMA" in m.fix and "GPU_CPER_MAX_AGE" not in m.fix
    entry = next(e for e in load_table().entries if e.id == m.id)
    assert any("GPU_CPER_MAX_AGE" in (c.fix or "") for c in entry.conditions)


def test_asan_use_after_free_is_not_told_past_the_end() -> None:
    """8: only the buffer-overflow kinds are out-of-bounds accesses."""
    text = (
        "==4242==ERROR: AddressSanitizer: heap-use-after-free on address 0x602000000010"
        " at pc 0x7f00\n"
        "READ of size 400 at 0x602000000010 thread T0\n"
        "    #0 0x7f3a1b2c3d4e in __asan_memcpy\n"
        "    #1 0x7f3a1c2d3e4f in hipMemcpy /work/clr/hipamd/src/hip_memory.cpp:1200:3\n"
    )
    assert "rocm.asan-hip-out-of-bounds" not in _ids(text)
    overflow = text.replace("heap-use-after-free", "heap-buffer-overflow")
    assert _known(overflow)[0].id == "rocm.asan-hip-out-of-bounds"


def test_prime_condition_takes_a_pci_tag_and_no_power_control_advice() -> None:
    """9: DRI_PRIME takes a PCI tag too; the power/control advice had no source."""
    text = (
        "$ DRI_PRIME=pci-0000_03_00_0 rocminfo\n"
        "ROCk module is NOT loaded, possibly no GPU devices\n"
    )
    m = _known(text)[0]
    assert m.id == "rocr.rock-module-not-loaded"
    assert (m.condition or "").startswith("a hybrid-graphics (PRIME) laptop")
    assert "power/control" not in m.fix


def test_inotify_panic_claims_no_amd_plugin() -> None:
    """10: the fixture's stack is a non-AMD device plugin's."""
    entry = next(
        e for e in load_table().entries if e.id == "kubernetes.device-plugin-inotify-watcher-panic"
    )
    assert "AMD device plugin" not in entry.title
    assert "AMD's k8s-device-plugin" not in entry.cause


def test_rocpctl_exit_flag_is_dated_to_v1_5_1_beta() -> None:
    """11: --exit-on-rocpctl-error first appears in v1.5.1-beta (v1.4.1 only auto-disables)."""
    entry = next(
        e for e in load_table().entries if e.id == "kubernetes.metrics-exporter-rocpctl-crash"
    )
    assert "v1.5.1-beta" in entry.fix and "--exit-on-rocpctl-error" in entry.fix


def test_esmi_hsmp_noise_entry_is_removed() -> None:
    """12: "nothing to fix" hid E-SMI not knowing the CPU's HSMP protocol."""
    assert "noise.esmi-hsmp-message-not-supported" not in _entry_ids()


def test_babelstream_cuda_build_is_not_invalid_device_function() -> None:
    """13: BabelStream's CUDA build prints the same words."""
    text = (
        "$ ./cuda-stream --arraysize 33554432\nBabelStream\nVersion: 4.0\nImplementation: CUDA\n"
        "Running kernels 100 times\nPrecision: double\nError: invalid device function\n"
    )
    assert "hip.invalid-device-function" not in _ids(text)
    hip = text.replace("Implementation: CUDA", "Implementation: HIP")
    assert _known(hip)[0].id == "hip.invalid-device-function"
