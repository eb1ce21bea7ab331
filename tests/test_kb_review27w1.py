"""The hostile read of r27-w1 (HIP runtime / ROCr wordings), session 27. The texts are built
from the cited source lines with ordinary values (constructed to test the rule, not captured
program output)."""

from __future__ import annotations

from rocmprov.kb import match

FALLBACK = "HSA copy failed with code 4097, falling to Blit copy"
FAULT = ("Memory access fault by GPU node-1 (Agent handle: 0x55d0c3a2f0) on address "
         "0x7f1c00000000. Reason: Write access to a read-only page.")  # fmt: skip


def _real(text: str) -> list[str]:
    return [m.id for m in match(text) if not m.harmless]


def test_a_copy_the_runtime_redid_with_a_blit_kernel_is_not_the_failure() -> None:
    """F1: ROCclr redoes a refused SDMA copy with a blit kernel (rocblit.cpp#L770, #L2283;
    the rectangular copy at #L509, #L1701): the lines are harmless, and a real fault after
    them stays first."""
    for line in (FALLBACK, "DMA buffer failed with code 4097"):
        found = match(line)
        assert _real(line) == [] and found[0].id == "noise.hip-sdma-copy-fell-back-to-blit"
    assert _real(f":1:rocblit.cpp :770: {FALLBACK}\n{FAULT}")[0] != "rocr.sdma-copy-failed"
    # the staged copy, which has no fallback, is still the failure
    assert _real("Hsa copy from host to device failed with code 4097")[0] == (
        "rocr.sdma-copy-failed"
    )


def test_status_names_with_another_cause_are_left_to_the_code_table() -> None:
    """F2: the AMD runtime never returns hipErrorPeerAccessUnsupported (AOTriton uses it for
    unsupported inputs); F3: HSA_STATUS_ERROR_OUT_OF_REGISTERS is the out-of-VGPRs abort, not
    an ISA the agent refuses (session 28 gave the abort its own entry, rocr.out-of-registers,
    which answers it in place of the code table; rocr.invalid-isa still does not)."""
    assert _real("hipErrorPeerAccessUnsupported") == ["code.hip.hipErrorPeerAccessUnsupported"]
    assert _real("HSA_STATUS_ERROR_OUT_OF_REGISTERS: out of VGPRs") == ["rocr.out-of-registers"]
