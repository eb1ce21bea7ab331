"""Coverage round r29-c3 (LLM servers and ML frameworks on AMD GPUs), session 29.
Texts are the entries' real fixtures; where a line is added or removed to test a context rule
it is marked as constructed: it tests the rule, it is not captured program output."""

from __future__ import annotations

from pathlib import Path

from rocmprov.kb import Match, load_table, match

FIXTURES = Path(__file__).parent / "fixtures"


def _body(path: Path) -> str:
    return path.read_text(encoding="utf-8").split("\n---\n", 1)[1]


def _real(text: str) -> list[Match]:
    return [m for m in match(text) if not m.harmless]


BNB = "framework.bitsandbytes-cpu-only-build"
BNB_OLD = FIXTURES / "kb-wordings" / f"{BNB}.cuda-setup-loading-cpu-binary.txt"
LOADING = (
    "CUDA SETUP: Loading binary "
    "/root/anaconda3/lib/python3.9/site-packages/bitsandbytes/libbitsandbytes_cpu.so..."
)


def test_old_bitsandbytes_cpu_binary_line_needs_rocm_in_the_lines_around() -> None:
    """bitsandbytes#47: the 0.3x "Loading binary ...libbitsandbytes_cpu.so" line is the AMD
    cause only where ROCm shows nearby (there, /opt/rocm/lib in its own library search); the
    line alone (a CPU-only host) gets no cause."""
    assert _real(_body(BNB_OLD))[0].id == BNB
    assert not any(m.id == BNB for m in _real(LOADING))


def test_old_bitsandbytes_cpu_binary_line_on_an_nvidia_machine_is_not_an_amd_cause() -> None:
    """The same paste with an NVIDIA driver line above it (constructed) is a CUDA setup
    problem, not a missing ROCm backend."""
    nvidia = "NVIDIA-SMI 535.104.05    Driver Version: 535.104.05    CUDA Version: 12.2\n"
    assert not any(m.id == BNB for m in _real(nvidia + _body(BNB_OLD)))


CKA = "compiler.ck-tile-atomic-add-not-implemented"


def test_ck_tile_atomic_assertion_names_the_target_it_was_compiled_for() -> None:
    """flash-attention#1215: the assertion with its "compiling for gfx1100" line names gfx1100;
    the assertion line alone (the next line cut off, constructed) still gets the entry."""
    body = _body(FIXTURES / "kb" / f"{CKA}.txt")
    first = _real(body)[0]
    assert first.id == CKA and "gfx1100" in first.cause
    alone = _real(body.splitlines()[0])[0]
    assert alone.id == CKA and "gfx1100" not in alone.cause


def test_ck_buffer_resource_constant_fix_names_the_flash_attention_triton_backend() -> None:
    """ROCm/flash-attention#111 (maintainer): CK backend for MI cards only, use Triton."""
    line = "error: use of undeclared identifier 'CK_TILE_BUFFER_RESOURCE_3RD_DWORD'"
    first = _real(line)[0]
    assert first.id == "compiler.ck-gpu-target-unsupported"
    assert "FLASH_ATTENTION_TRITON_AMD_ENABLE" in first.fix


SDW = "llm.sdwebui-torch-cannot-use-gpu"
INVOKE = FIXTURES / "kb-wordings" / f"{SDW}.invokeai-torch-device-cpu.txt"


def test_invokeai_on_the_cpu_in_a_rocm_container_blames_torch_not_bitsandbytes() -> None:
    """InvokeAI#7006: main-rocm container, bitsandbytes' CPU-build warning and "Using torch
    device: CPU": torch (a CUDA wheel in the image) is the cause; bitsandbytes' line is a
    consequence and does not answer."""
    found = _real(_body(INVOKE))
    assert found[0].id == SDW
    assert not any(m.id == BNB for m in found)


def test_invokeai_cpu_lines_without_amd_context_get_no_gpu_cause() -> None:
    """The same two log lines without the container command (constructed: the report's lines
    with its first line removed) are what a CPU-only host prints: neither entry answers."""
    lines = _body(INVOKE).splitlines()[1:]
    found = {m.id for m in _real("\n".join(lines))}
    assert SDW not in found and BNB not in found


def test_invokeai_cpu_line_on_an_nvidia_machine_is_not_an_amd_cause() -> None:
    """With an NVIDIA driver line (constructed) the torch-on-CPU line is not the ROCm cause."""
    nvidia = "NVIDIA-SMI 535.104.05    Driver Version: 535.104.05    CUDA Version: 12.2\n"
    assert not any(m.id == SDW for m in _real(nvidia + _body(INVOKE)))


STOUL = FIXTURES / "kb" / "miopen.stoul-exception.txt"


def test_miopen_stoul_is_an_unknown_find_mode_value_not_a_gfx1151_defect() -> None:
    """ROCm/pytorch#2837's script set MIOPEN_FIND_MODE='NO_DB', which MIOpen's name list
    lacks, so stoul() threw (find_controls.cpp); the answer names the variable and the valid
    names and sends nobody to another PyTorch index."""
    found = _real(_body(STOUL))[0]
    assert found.id == "miopen.stoul-exception"
    assert "NO_DB" in found.cause and "MIOPEN_FIND_MODE" in found.title
    for name in ("NORMAL", "FAST", "HYBRID", "DYNAMIC_HYBRID", "TRUST_VERIFY"):
        assert name in found.cause
    assert "gfx1151" not in found.cause + found.fix + found.title
    assert "--index-url" not in found.fix


def _sources(entry_id: str) -> tuple[str, ...]:
    return next(e.sources for e in load_table().entries if e.id == entry_id)


def test_ck_buffer_resource_entry_keeps_its_own_sources() -> None:
    """615007f cited TheRock#4768, TheRock#1245 and ROCm/onnxruntime PR 174 for the
    CK_BUFFER_RESOURCE_3RD_DWORD entry; the atomic-add entry inserted after it must not take
    them over."""
    moved = (
        "https://github.com/ROCm/TheRock/issues/4768",
        "https://github.com/ROCm/TheRock/issues/1245",
        "https://github.com/ROCm/onnxruntime/pull/174",
    )
    own = _sources("compiler.ck-gpu-target-unsupported")
    other = _sources(CKA)
    assert all(url in own for url in moved)
    assert not any(url in other for url in moved)


def test_ck_fixes_name_flash_attention_main_rdna_support_and_keep_triton() -> None:
    """Dao-AILab/flash-attention 5301a359 (PR #2400) builds the CK backend for RDNA 3/4;
    releases up to 2.8.3.post1 allow gfx90a/gfx942/gfx950 only (setup.py)."""
    dword = _real("error: use of undeclared identifier 'CK_TILE_BUFFER_RESOURCE_3RD_DWORD'")[0]
    atomic = _real(_body(FIXTURES / "kb" / f"{CKA}.txt"))[0]
    for found in (dword, atomic):
        assert all(key in found.fix for key in ("5301a359", "gfx1100-1102", "gfx1200/1201"))
        assert "FLASH_ATTENTION_TRITON_AMD_ENABLE" in found.fix
        assert "Instinct (MI) GPUs only" not in found.fix
        assert any("5301a359" in url and "setup.py" in url for url in found.sources)


_ASSERT = _body(FIXTURES / "kb" / f"{CKA}.txt").splitlines()[0]


def test_ck_tile_atomic_assertion_never_names_an_instinct_target_from_the_next_line() -> None:
    """A parallel build may print another file's "compiling for gfx942." line under the
    assertion (constructed ordering of two real clang lines): the cause must not call gfx942
    the unsupported target, neither from the capture nor from the log's gfx fact."""
    for gfx in ("gfx942", "gfx90a", "gfx950"):
        found = _real(f"{_ASSERT}\n1 error generated when compiling for {gfx}.\n")[0]
        assert found.id == CKA
        assert f"({gfx}:" not in found.cause, found.cause


def test_ck_tile_atomic_max_assertion_is_not_told_the_gpu_is_unsupported() -> None:
    """atomic_max_g's assertion (generic_memory_space_atomic.hpp#L131-L135 at 8e22e1a) says
    the same words but has no bf16 clause; a max on fp16 fails on every target, so the
    atomic-add cause is not its answer (requirement rendered as clang prints it for
    _Float16, N=4; constructed from the source)."""
    line = (
        "generic_memory_space_atomic_hip.hpp:131:19: error: static assertion failed due to "
        "requirement '(std::is_same<_Float16, int>::value && (4 == 1)) || "
        "(std::is_same<_Float16, unsigned int>::value && (4 == 1)) || "
        "(std::is_same<_Float16, float>::value && (4 == 1 || 4 == 2)) || "
        "(std::is_same<_Float16, double>::value && (4 == 1))': wrong! not implemented"
    )
    assert not any(m.id == CKA for m in _real(line))


def test_invokeai_cpu_line_in_syslog_and_legacy_formats_gets_the_torch_cause() -> None:
    """InvokeAI's syslog ("InvokeAI [pid] <INFO> ") and legacy (">> ") console formats
    (logging.py#L273, #L281 at 8e71a8a) print the same start-up line."""
    for slug in ("syslog", "legacy"):
        path = FIXTURES / "kb-wordings" / f"{SDW}.invokeai-{slug}-format.txt"
        found = _real(_body(path))[0]
        assert found.id == SDW
        assert "device: cpu" in found.fix
    assert not _real(">> Using torch device: CPU\n")  # no ROCm context: no GPU cause
