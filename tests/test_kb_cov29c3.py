"""Coverage round r29-c3 (LLM servers and ML frameworks on AMD GPUs), session 29.
Texts are the entries' real fixtures; where a line is added or removed to test a context rule
it is marked as constructed: it tests the rule, it is not captured program output."""

from __future__ import annotations

from pathlib import Path

from rocmprov.kb import Match, match

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
