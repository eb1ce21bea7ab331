"""Round 17, hostile review A of round 17's compiler/frameworks/llm/runtime changes:
counter-examples that failed before the review's fixes.

Every text here is CONSTRUCTED (no report's text): Lemonade's lines from the format strings in
src/cpp/server/system_info.cpp (get_system_info's "Unsupported GPU" / "Unsupported GPU: <family>"
messages, where a machine without any AMD GPU gets the bare form) and runtime_config.cpp
("'<section>.backend' must be one of: auto, <supported backends>", the order of llamacpp.h's
support rows), laid out as `lemonade backends` prints its table; hipBLASLt's loader line
("rocblaslt error: Cannot read <path>: <strerror>") with a PyTorch path under a home directory
named ollama and with Ollama's Windows install path.
"""

from __future__ import annotations

import pytest

from rocmprov.kb import match

LEMONADE = "llm.lemonade-rocm-backend-unsupported-gpu"
HIPBLASLT = "rocblas.hipblaslt-no-library-for-arch"


def ids(text: str) -> list[str]:
    return [m.id for m in match(text)]


# Healthy `lemonade backends` listings and config typos on machines where ROCm is never offered:
# the entry must stay silent (before the review each of these ranked it first).
SILENT = [
    # an NVIDIA machine's listing: the rocm row's bare "Unsupported GPU" is the normal state
    "Recipe              Backend     Status          Message/Version                  Action\n"
    "llamacpp            cuda        installed       b8200                            -\n"
    "                    rocm        unsupported     Unsupported GPU                  -\n"
    "                    vulkan      installed       b8200                            -\n",
    # an Intel laptop's listing (no AMD GPU: bare form)
    "sd-cpp              rocm        unsupported     Unsupported GPU                  -\n",
    # a typo on an NVIDIA machine: the message does not name the rejected value
    "Failed to load model: 'llamacpp.backend' must be one of: auto, cuda, vulkan, cpu\n",
    # a typo on a Mac
    "Error: 'llamacpp.backend' must be one of: auto, metal\n",
]


@pytest.mark.parametrize("text", SILENT)
def test_lemonade_entry_is_silent_where_rocm_is_never_offered(text: str) -> None:
    assert LEMONADE not in ids(text)


def test_bare_unsupported_gpu_on_install_gets_the_no_amd_gpu_fix() -> None:
    found = match("Error: Cannot install llamacpp:rocm on this system: Unsupported GPU\n")
    assert found and found[0].id == LEMONADE
    assert "no AMD GPU at all" in found[0].fix
    # the marketing-name advice stays with it
    assert "RX 6950" in found[0].fix


def test_a_named_family_does_not_get_the_no_amd_gpu_fix() -> None:
    found = match("Error: Cannot install llamacpp:rocm on this system: Unsupported GPU: gfx906\n")
    assert found and found[0].id == LEMONADE
    assert "no AMD GPU at all" not in found[0].fix


@pytest.mark.parametrize("gfx", ["gfx1103", "gfx1030", "gfx1032", "gfx1100", "gfx1201", "gfx1036"])
def test_lemonade_10_8_0_exact_target_bug_covers_every_wildcard_family(gfx: str) -> None:
    # PR #2295's commit names gfx1103 itself; 10.8.0's llamacpp:rocm row listed gfx103X too
    found = match(f"Error: Cannot install llamacpp:rocm on this system: Unsupported GPU: {gfx}\n")
    assert found and found[0].id == LEMONADE
    assert "10.8.1" in found[0].fix, found[0].fix


def test_table_row_with_a_family_still_leads() -> None:
    row = "                    rocm        unsupported     Unsupported GPU: gfx90c     -\n"
    found = match(row)
    assert found and found[0].id == LEMONADE
    assert found[0].captures.get("gfx") == "gfx90c"


def test_ollama_condition_needs_ollamas_lib_folder_not_any_ollama_directory() -> None:
    # a PyTorch venv in the home of a user (service account) named ollama
    torch = (
        "rocblaslt error: Cannot read /home/ollama/venv/lib/python3.12/site-packages/torch/lib/"
        "hipblaslt/library/TensileLibrary_lazy_gfx1201.dat: No such file or directory\n"
    )
    found = match(torch)
    assert found and found[0].id == HIPBLASLT
    assert not found[0].fix.startswith("In Ollama"), found[0].fix


def test_ollama_condition_still_applies_to_the_windows_install_and_does_not_promise_an_update() -> (
    None
):
    win = (
        "rocblaslt error: Could not load C:\\Users\\me\\AppData\\Local\\Programs\\Ollama\\lib\\"
        "ollama\\rocm\\hipblaslt\\library\\TensileLibrary_lazy_gfx1200.dat\n"
    )
    found = match(win)
    assert found and found[0].id == HIPBLASLT
    assert found[0].fix.startswith("In Ollama")
    # Ollama's main branch still installs no hipblaslt/library: "update Ollama" was not a fix
    assert "updating Ollama does not remove" in found[0].fix
