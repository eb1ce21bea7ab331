"""Review B of session 25's table (issue 28): each test is a defect found by a hostile read,
failing on the table before its fix (1488db1)."""

from __future__ import annotations

from pathlib import Path

from rocmprov.kb.matcher import analyse
from rocmprov.kb.table import Table, load_table
from tests.growth import cpu_ratio
from tests.kb_helpers import first
from tests.kb_helpers import ids as _ids
from tests.kb_helpers import known as _known

ROOT = Path(__file__).resolve().parent.parent
MIB = 1024 * 1024




def _first(text: str) -> str | None:
    found = first(text)
    return found.id if found else None




def _cost_beside(text: str, table: Table, without: Table) -> float:
    """CPU time of analysing `text` with `table` over that with `without` (compiled first)."""
    analyse(text, table=table), analyse(text, table=without)
    return cpu_ratio(lambda: analyse(text, table=table), lambda: analyse(text, table=without))


def test_rpm_disk_space_patterns_are_linear_on_a_long_line() -> None:
    """Item 1: the rpm patterns began with a bounded repeat `[\\w.+~-]{1,200}` and were looked
    for at "needs ": a 4 MiB line of package-like words took 12-19 s. They now start with the
    literal and are looked for at "B on the /" / "more space on the ". Such a line costs about
    what it costs the table without the entry (it cost many times that: the rest of the table
    reads such a line in well under a second)."""
    table = load_table()
    without = Table(tuple(e for e in table.entries if e.id != "apt.dpkg-no-space-left"))
    assert len(without) == len(table) - 1
    for unit in (
        "a" * 190 + " needs 12MB on the /x ",
        "a" * 190 + " needs 3KB more space on the /y ",
    ):
        text = (unit * (MIB // 8 // len(unit) + 1))[: MIB // 8]
        ratio = _cost_beside(text, table, without)
        assert ratio < 3.0, (unit[-30:], ratio)  # about 1-1.5


def test_rpm_transaction_check_is_not_told_dpkg_steps() -> None:
    """Item 2: rpm's check before the transaction (a full /boot on a kernel update, or a
    read-only file system, rpm#2782) installed nothing: no "half installed", no dpkg steps."""
    boot = (
        "Transaction check error:\n"
        "  installing package kernel-core-5.14.0-427.13.1.el9_4.x86_64 needs 32MB more space"
        " on the /boot filesystem\n"
    )
    found = _known(boot)
    assert found[0].id == "apt.dpkg-no-space-left"
    assert "dnf remove --oldinstallonly" in found[0].fix and "dpkg" not in found[0].fix
    assert found[0].condition.startswith("rpm's transaction check")
    opt = (
        "installing package rocm-llvm-17.0.0-1.el9.x86_64 needs 1234MB more space"
        " on the /opt filesystem"
    )
    found = _known(opt)
    assert found[0].id == "apt.dpkg-no-space-left" and "dpkg" not in found[0].fix
    assert "read-only" in found[0].condition and "remount" in found[0].fix


def test_multi_line_patterns_accept_crlf_line_ends() -> None:
    """Item 3: four multi-line patterns wanted `\\n` right after text, so a log with Windows
    line ends (\\r\\n) got no answer or another one (tests/test_kb_crlf.py checks every fixture)."""
    texts = {
        "framework.spawn-main-module-unguarded": (
            "RuntimeError:\n        An attempt has been made to start a new process before the\n"
            "        current process has finished its bootstrapping phase.\n"
        ),
        "llm.vllm-model-architecture-unresolved": (
            '  File "/opt/vllm/vllm/config.py", line 120, in _verify\n'
            "    for arch in architectures:\n"
            "TypeError: 'NoneType' object is not iterable\n"
        ),
        "hip.windows-app-control-policy-blocked": (
            "OSError: [WinError 4551] An Application Control policy has\n"
            "blocked this file: 'C:\\\\venv\\\\Lib\\\\site-packages"
            "\\\\_rocm_sdk_core\\\\bin\\\\amdhip64_7.dll'\n"
        ),
    }
    for entry, text in texts.items():
        assert _first(text) == entry, (entry, _ids(text))
        assert _first(text.replace("\n", "\r\n")) == entry, (
            entry,
            _ids(text.replace("\n", "\r\n")),
        )


def test_ollama_discovery_timeout_needs_a_rocm_library_path() -> None:
    """Item 4: the CUDA or Vulkan probe timing out is not the ROCm 7 driver's hang."""
    entry = "llm.ollama-gpu-discovery-timeout-old-driver"
    line = (
        'time=2025-10-20T10:00:31.000Z level=INFO source=runner.go:462 msg="failure during GPU'
        ' discovery" OLLAMA_LIBRARY_PATH="[/usr/local/lib/ollama /usr/local/lib/ollama/{lib}]"'
        ' extra_envs=map[] error="failed to finish discovery before timeout"\n'
    )
    assert entry not in _ids(line.format(lib="cuda_v13"))
    assert entry not in _ids(line.format(lib="vulkan"))
    assert _first(line.format(lib="rocm")) == entry


def test_ryzen_ai_npu_entries_are_gone() -> None:
    """Item 5: the NPU is not a GPU, and "No NPU device found." is also Intel's and Ascend's."""
    from rocmprov.kb import load_table

    ids = load_table().by_id
    for gone in (
        "llm.flm-no-npu-device",
        "llm.flm-memlock-limit-too-low",
        "llm.flm-npu-firmware-too-old",
        "llm.npu-driver-too-old",
    ):
        assert gone not in ids
    assert "llm.lemonade-gfx1151-kernel-missing-cwsr-fix" in ids


def test_newer_glibc_needs_rocm_nearby() -> None:
    """Item 6: any program's missing GLIBC_x version (node) is not a ROCm build's."""
    entry = "rocm.binary-built-for-newer-glibc"
    assert entry not in _ids(
        "/usr/bin/node: /lib/x86_64-linux-gnu/libc.so.6: version `GLIBC_2.34' not found"
        " (required by /usr/bin/node)\n"
    )
    assert (
        _first(
            "ImportError: /lib64/libc.so.6: version `GLIBC_2.32' not found (required by"
            " /opt/venv/lib/python3.10/site-packages/_rocm_sdk_core/lib/libamdhip64.so.7)\n"
        )
        == entry
    )


def test_mistyped_preload_library_is_answered_by_the_preload_entry() -> None:
    """Item 7: a name in ROCM_SDK_PRELOAD_LIBRARIES that rocm_sdk does not know raises
    "Unknown rocm library" chained under the preload RuntimeError (rocm_sdk/__init__.py)."""
    text = (
        "ModuleNotFoundError: Unknown rocm library 'rocblass'\n\n"
        "The above exception was the direct cause of the following exception:\n\n"
        "Traceback (most recent call last):\n"
        '  File "<string>", line 1, in <module>\n'
        "RuntimeError: Could not preload libraries from environment variable"
        " ROCM_SDK_PRELOAD_LIBRARIES='hipblaslt,rocblass'. Check this environment variable"
        " and unset it if not correct/needed.\n"
    )
    assert _first(text) == "pytorch.rocm-sdk-preload-env-invalid", _ids(text)
    alone = "ModuleNotFoundError: Unknown rocm library 'hipsparselt'\n"
    assert _first(alone) == "pytorch.rocm-sdk-version-mismatch"


def test_ctypes_dll_not_found_only_for_rocm_or_torch_dlls() -> None:
    """Item 8: `Could not find module '...llama.dll'` is not a ROCm or torch DLL."""
    entry = "pytorch.windows-dll-load-failed"
    line = (
        "FileNotFoundError: Could not find module '{dll}' (or one of its dependencies)."
        " Try using the full path with constructor syntax.\n"
    )
    other = "C:\\Users\\me\\venv\\Lib\\site-packages\\llama_cpp\\lib\\llama.dll"
    assert entry not in _ids(line.format(dll=other))
    torch_dll = "C:\\Users\\me\\venv\\Lib\\site-packages\\torch\\lib\\c10_hip.dll"
    assert _first(line.format(dll=torch_dll)) == entry


def test_directive_requires_gfx_is_not_read_as_a_therock_build() -> None:
    """Item 9: `error: directive requires gfx90a+` is LLVM's generic assembler error; the
    TheRock entry's only fixture was the heading of a build note, no pasted log: dropped."""
    from rocmprov.kb import load_table

    assert "compiler.therock-target-unsupported-by-library" not in load_table().by_id
    text = "kernel.s:5:3: error: directive requires gfx90a+\n"
    assert "compiler.therock-target-unsupported-by-library" not in _ids(text)


def test_loader_error_alone_is_not_the_patchelf_phdr_cause() -> None:
    """Item 10: the loader-line pattern fired only on its prose fixture; a real loader line
    (a library path) near a word like "patchelf" is not evidence of the corrupted PHDR."""
    entry = "pytorch.rocm-wheel-patchelf-corrupted-phdr"
    text = (
        "patchelf --set-rpath '$ORIGIN' libfoo.so\n"
        "OSError: /mnt/usb/venv/lib/libfoo.so: failed to map segment from shared object\n"
    )
    assert entry not in _ids(text)
    assert _first("readelf: Error: the PHDR segment is not covered by a LOAD segment\n") == entry
