"""Review E of session 28's table (issue 28): each test is a finding of a hostile read of the
entries added in that session, failing on the table before its fix (main fc0a8c0).

The texts marked "constructed" are the reviewer's counter-examples, put together from the
programs' format strings to test a rule, not real output of a report; real texts come from
the fixtures."""

from __future__ import annotations

from pathlib import Path

from rocmprov.kb import Entry, load_table
from tests.kb_helpers import ids as _ids
from tests.kb_helpers import known as _known

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"


def _entry(entry_id: str) -> Entry:
    return next(e for e in load_table().entries if e.id == entry_id)


def _fixture(path: str) -> str:
    return (FIXTURES / path).read_text(encoding="utf-8").split("\n---\n", 1)[1]


def _first_id(text: str) -> str | None:
    found = _known(text)
    return found[0].id if found else None


# ---------------------------------------------------------------- F1: hipcc dead code


def test_hipcc_no_gpu_target_is_sourced_from_the_last_hipcc_that_could_print_it() -> None:
    """F1: the cited HIPCC 59bc417 lines are dead code (the flag is always cleared above
    them since ROCm/HIP 025f99aff, 2020-01): the entry is the old Perl hipcc's, cited at
    2eb7ae4f0 bin/hipcc#L771, and says later releases print nothing."""
    entry = _entry("compiler.hipcc-no-gpu-target")
    assert not any("59bc41700ba939e29e613a8e16b8d34b12654fa0" in s for s in entry.sources)
    last = "2eb7ae4f0cd3633e71cb1fb99da043888e8e9c8c/bin/hipcc#L771"
    assert any(last in s for s in entry.sources)
    assert "ROCm 3.1" in entry.title
    assert "never print this line" in entry.cause


def test_no_fixture_holds_the_offload_arch_form_no_released_hipcc_prints() -> None:
    """F1: "... using --offload-arch=<target>." only exists in dead code; the fixtures that
    held it (two new ones, and the older hipBin popen wording) no longer do."""
    holders = [
        p.name
        for folder in ("kb", "kb-wordings")
        for p in (FIXTURES / folder).glob("*.txt")
        if "No valid AMD GPU target" in (text := p.read_text(encoding="utf-8"))
        and "--offload-arch" in text
    ]
    assert holders == []
    popen = _fixture("kb-wordings/compiler.hipcc-no-agent-enumerator.src-hipbin-popen.txt")
    assert _first_id(popen) == "compiler.hipcc-no-agent-enumerator"


# ---------------------------------------------------------------- F2: bitsandbytes, no GPU

_BNB_HEADER = (  # constructed: bitsandbytes 95f9af3 diagnostics/main.py
    "=================== bitsandbytes v0.50.0 ===================\n"
    "Platform: {platform}\n"
    "Python: 3.11.9\n"
    "PyTorch: {torch}\n"
    "  CUDA: N/A\n"
    "  HIP: N/A\n"
    "  XPU: N/A\n"
    "============================================================\n"
    "No CUDA, ROCm, or XPU detected; CPU library loaded successfully.\n"
)


def test_bitsandbytes_cpu_line_needs_an_amd_gpu_in_sight() -> None:
    """F2: bitsandbytes prints it on every host without a usable GPU (a Mac, a CPU-only
    laptop); only beside an AMD GPU or a ROCm setup is it the CUDA/CPU wheel on an AMD host."""
    mac = _BNB_HEADER.format(platform="macOS-15.6-arm64-arm-64bit", torch="2.8.0")
    linux = _BNB_HEADER.format(platform="Linux-6.8.0-79-generic-x86_64-with-glibc2.39",
                               torch="2.8.0+cpu")
    assert "apt.cuda-torch-on-amd" not in _ids(mac)
    assert "apt.cuda-torch-on-amd" not in _ids(linux)
    amd = "$ rocminfo | grep gfx\n  Name:                    gfx1100\n" + linux  # constructed
    assert _first_id(amd) == "apt.cuda-torch-on-amd"


# ---------------------------------------------------------------- F3: Ollama's AMD probe

_OLLAMA_0129_CPU = (  # constructed: ollama 6c5ccb11 gpu.go, cpu_common.go, amd_windows.go
    'time=2024-03-20T10:12:31.512+01:00 level=INFO source=gpu.go:77 msg="Detecting GPU type"\n'
    'time=2024-03-20T10:12:31.512+01:00 level=INFO source=gpu.go:191 msg="Searching for GPU'
    ' management library nvml.dll"\n'
    'time=2024-03-20T10:12:31.529+01:00 level=INFO source=gpu.go:237 msg="Discovered GPU'
    ' libraries: []"\n'
    'time=2024-03-20T10:12:31.529+01:00 level=INFO source=cpu_common.go:11 msg="CPU has AVX2"\n'
    "time=2024-03-20T10:12:31.553+01:00 level=DEBUG source=amd_windows.go:28"
    ' msg="unable to load amdhip64.dll: The specified module could not be found."\n'
)


def test_ollama_amd_probe_on_a_cpu_only_windows_host_gets_no_cause() -> None:
    """F3: Ollama probes AMD on every Windows host without NVIDIA's library (0.1.29) or on all
    (0.3.x), so "unable to load amdhip64(_6).dll" alone is no AMD host's problem."""
    assert _known(_OLLAMA_0129_CPU) == []
    real = _fixture("kb-wordings/hip.windows-hip6-dll-missing.ollama-unable-to-load.txt")
    alone = real.split("\n\n", 1)[1]  # the log line without the reporter's "AMD GPU"
    assert _known(alone) == []
    assert _first_id(real) == "hip.windows-hip6-dll-missing"
    with_gpu = "GPU: AMD Radeon RX 6600\n" + _OLLAMA_0129_CPU  # constructed
    assert _first_id(with_gpu) == "hip.windows-hip6-dll-missing"


# ---------------------------------------------------------------- F4: amd_hsmp line


def test_unreachable_amd_hsmp_line_is_not_the_amdgpu_entrys() -> None:
    """F4: at amdsmi 0ceca28 the CLI cannot print it (the CPU init's status is never 32/34),
    and an EPYC host without GPUs is not told to load amdgpu."""
    text = "ERROR:root:Driver not loaded (amd_hsmp not found in modules)\n"  # constructed
    assert "amdsmi.driver-not-initialized" not in _ids(text)
    assert "amd_hsmp not found" not in _entry("amdsmi.driver-not-initialized").cause


# ---------------------------------------------------------------- F5: dkms 3.0.11 wording


def test_dkms_3011_typo_wording_and_secure_boot_are_covered() -> None:
    """F5: v3.0.11 printed "The kernel is be built without ..." (fixed in 029104f); the cause
    says a missing config means headers without their .config, and Secure Boot's refusal."""
    text = _fixture("kb-wordings/dkms.kernel-config-no-module-signing.src-dkms-3011-be-built.txt")
    assert _ids(text)[:1] == ["dkms.kernel-config-no-module-signing"]
    entry = _entry("dkms.kernel-config-no-module-signing")
    assert "Secure Boot" in entry.cause and "Secure Boot" in entry.fix
    assert "cannot be found" in entry.cause


# ---------------------------------------------------------------- F6: nits


def test_miopen_timeout_fixture_has_the_default_builds_line() -> None:
    """F6a: MIOPEN_ENABLE_SQLITE_BACKOFF is On by default, so the throw is at #L266."""
    assert "sqlite_db.cpp:266:" in _fixture("kb/miopen.sqlite-busy-timeout.txt")
    sources = _entry("miopen.sqlite-busy-timeout").sources
    assert any(s.endswith("sqlite_db.cpp#L266") for s in sources)


def test_dkms_300_modules_conf_warnings_are_harmless_noise() -> None:
    """F6d: dkms 3.0.0/3.0.1 warn the same way for the four MODULES_CONF* options."""
    for option in ("MODULES_CONF", "MODULES_CONF_OBSOLETES", "MODULES_CONF_ALIAS_TYPE",
                   "MODULES_CONF_OBSOLETE_ONLY"):
        text = f"Warning: {option} has been deprecated.\n"  # constructed: f52f945 #L453-456
        assert _ids(text)[:1] == ["dkms.remake-initrd-deprecated"], option
