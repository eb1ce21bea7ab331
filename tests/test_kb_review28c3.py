"""The hostile read of r28-c3 (GPU targets a library or tool does not list), session 28.
Texts are the entries' real fixtures; where a line is added to pick a condition (a device
name, another target in the same message) it is marked as constructed: it tests the rule,
it is not captured program output."""

from __future__ import annotations

from pathlib import Path

from rocmprov.kb import Entry, Match, load_table, match

FIXTURES = Path(__file__).parent / "fixtures"


def _body(path: Path) -> str:
    return path.read_text(encoding="utf-8").split("\n---\n", 1)[1]


def _first(text: str) -> Match:
    return next(m for m in match(text) if not m.harmless)


def _entry(entry_id: str) -> Entry:
    return {e.id: e for e in load_table().entries}[entry_id]


BN = "miopen.batchnorm-dpp-asm-target-not-listed"
STRIX = FIXTURES / "kb-wordings" / f"{BN}.gfx1151-strix-halo.txt"


def test_batchnorm_dpp_asm_on_strix_halo_is_not_called_rdna1() -> None:
    """F1: rocm-libraries#2169 (gfx1151) gets the "not listed by this MIOpen" cause with the
    list's history, not "RDNA1 is not supported"; the old id is gone."""
    ids = {e.id for e in load_table().entries}
    assert "miopen.batchnorm-dpp-asm-rdna1" not in ids
    found = _first(_body(STRIX))
    assert found.id == BN
    assert "gfx115x" in found.cause and "PR 1288" in found.cause
    assert "RDNA1 is not a target" not in found.cause and "gfx11," not in found.fix


def test_batchnorm_dpp_asm_conditions_follow_the_gpu_family() -> None:
    """F1: the device name MIOpen logs picks the condition (the added line is constructed)."""
    body = _body(STRIX)
    later = _first(f"MIOpen(HIP): Info [get_device_name] Raw device name: gfx1151\n{body}")
    assert later.id == BN and later.condition.startswith("the GPU is of an RDNA")
    assert "1288" in later.fix
    rdna1 = _first(f"MIOpen(HIP): Info [get_device_name] Raw device name: gfx1011\n{body}")
    assert rdna1.id == BN and rdna1.condition.startswith("the GPU is RDNA1")
    assert "MIOpen supports" in rdna1.fix


HSL = "rocblas.hipsparselt-no-library-for-arch"


def test_hipsparselt_missing_file_on_a_supported_gpu_is_an_install_problem() -> None:
    """F2: the entry's fixture with its target filled as gfx942 (constructed) gets the
    install condition; the fixture itself (gfx1200) does not, and the cause does not put the
    captured target into the "other GPU" sentence."""
    real = _body(FIXTURES / "kb" / f"{HSL}.txt")
    plain = _first(real)
    assert plain.id == HSL and plain.condition == ""
    assert "any other GPU (gfx1200" not in plain.cause and "gfx1250" in plain.cause
    mi300 = _first(real.replace("gfx1200", "gfx942"))
    assert mi300.id == HSL and "install" in mi300.condition
    assert "Reinstall" in mi300.fix and "TensileLibrary_lazy_gfx942.dat" in mi300.fix


WMMA = "compiler.rocwmma-unsupported-arch"


def test_rocwmma_assertion_names_the_target_of_the_failing_compile() -> None:
    """F3: TheRock#2127's lines answer with the target clang names (gfx906), not a gfx the
    text mentions elsewhere, and with a compile-time cause, not CMake's configure check."""
    body = _body(FIXTURES / "kb" / f"{WMMA}.txt")
    found = _first(f"gfx effected:\n- gfx1151\n- gfx101X\n{body}")  # the list above
    assert found.id == WMMA and found.captures.get("gfx") == "gfx906"
    assert "gfx906" in found.fix and "gfx1151" not in found.fix
    assert "CMake stops" not in found.cause
    assert "rocWMMA" not in _entry("compiler.library-gpu-target-unsupported").cause


def test_rocwmma_assertion_beside_llama_cpp_keeps_the_llama_cpp_entry() -> None:
    """F3: the two lines alone (rocm-libraries#4618) get the rocWMMA entry; with the file the
    same report names next (llama.cpp's flash-attention source) the llama.cpp entry answers,
    and a docker compose "ollama-1  | " prefix does not count as llama.cpp."""
    two = _body(FIXTURES / "kb-wordings" / f"{WMMA}.config-hpp-two-lines.txt")
    assert _first(two).id == WMMA
    named = f"{two}\nFailure occurs while compiling:\n\nggml/src/ggml-cuda/fattn-wmma-f16.cu\n"
    assert _first(named).id == "llm.llamacpp-rocwmma-fattn-no-matching-mma"
    compose = "".join(f"ollama-1  | {line}\n" for line in two.splitlines())
    assert _first(compose).id == WMMA


def test_hipcc_unknown_target_is_hipccs_own_list_not_the_support_matrix() -> None:
    """F4: the warning compares with hipcc's @knownTargets (removed in 2021)."""
    found = _first(_body(FIXTURES / "kb" / "compiler.hipcc-unknown-hip-target.txt"))
    assert found.id == "compiler.hipcc-unknown-hip-target"
    assert "@knownTargets" in found.cause and "October 2021" in found.cause
    assert "list of GPUs this ROCm" not in found.cause


def test_nits_rocblas_pattern_and_rccl_hypervisor_wording() -> None:
    """Nits: the lost-first-letter rocBLAS pattern is written `\\br?ocBLAS`; the rccl VM
    condition says PR 2112 checks for any hypervisor."""
    regexes = [p.regex for p in _entry("rocblas.tensile-library-unreadable").patterns]
    assert any(r.startswith("\\br?ocBLAS error: Cannot read") for r in regexes)
    notes = " ".join(c.when for c in _entry("rccl.missing-iommu-pt").conditions)
    assert "whichever hypervisor" in notes
