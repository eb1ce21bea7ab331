"""Coverage G2 of session 30 (issue 28: `rocmprov explain`): what the real programs print, run on
a GPU-less Debian 12 machine in the configuration a ROCm user gets wrong (hipify-perl of
ROCm/HIPIFY@014177bc on CUDA code, clinfo 3.0.23.01.25 of Debian with no OpenCL platform).

Each fixture and wording is the program's own output (`kind: format-string`, sourced to the
message at a pinned commit). The near-misses are healthy lines of the same programs, or the same
program's message of another cause."""

from __future__ import annotations

from pathlib import Path

import pytest

from rocmprov.kb import Match, match
from tests.kb_helpers import first as _first
from tests.kb_helpers import ids as _ids
from tests.kb_helpers import known as _known

ROOT = Path(__file__).resolve().parent
HIPIFY = "compiler.hipify-perl-unsupported-identifier"
NO_PLATFORM = "rocr.opencl-no-platform"


def _hipify(text: str) -> Match | None:
    """The hipify entry's match (harmless since review 30g: `first` leaves it out)."""
    return next((m for m in match(text) if m.id == HIPIFY), None)


def _body(path: str) -> str:
    return (ROOT / "fixtures" / path).read_text(encoding="utf-8").split("---\n", 1)[1]


@pytest.mark.parametrize(
    ("path", "entry"),
    [
        (f"kb-wordings/{NO_PLATFORM}.clinfo-number-of-platforms-0.txt", NO_PLATFORM),
    ],
)
def test_the_programs_own_output_ranks_its_entry_first(path: str, entry: str) -> None:
    found = _first(_body(path))
    assert found is not None and found.id == entry, path


@pytest.mark.parametrize(
    "path",
    [
        f"kb/{HIPIFY}.txt",
        f"kb-wordings/{HIPIFY}.roc-library.txt",
        f"kb-wordings/{HIPIFY}.experimental.txt",
    ],
)
def test_hipify_perls_warnings_are_answered_as_harmless(path: str) -> None:
    text = _body(path)
    found = _hipify(text)
    assert found is not None and found.harmless, path
    assert _known(text) == [], path


def test_the_identifier_and_its_library_are_named() -> None:
    found = _hipify(_body(f"kb/{HIPIFY}.txt"))
    assert found is not None and found.condition == "" and found.harmless
    assert found.captures == {"state": "unsupported", "api": "ROCm HIP", "name": "cuCtxCreate_v4"}
    assert "cuCtxCreate_v4" in found.cause and "cuCtxCreate_v4" in found.fix
    roc = _hipify(_body(f"kb-wordings/{HIPIFY}.roc-library.txt"))
    assert roc is not None and roc.captures.get("api") == "ROC"


def test_an_experimental_mapping_gets_the_experimental_flag() -> None:
    found = _hipify(_body(f"kb-wordings/{HIPIFY}.experimental.txt"))
    assert found is not None and found.captures.get("since") == "6.3.0"
    assert "hipify-perl -experimental" in found.fix and "6.3.0" in found.fix


def test_hipify_perls_other_lines_are_not_an_unsupported_identifier() -> None:
    # hipify-perl's own lines here: a clean conversion, deprecated/removed CUDA names only, the
    # statistics of --print-stats, and the (false) device-function warning of older scripts
    for text in (
        "#include <hip/hip_runtime.h>\nint main(){ float*d; hipMalloc(&d,4); hipFree(d); }\n",
        "  b.cu:5: warning: deprecated CUDA identifier: cudaThreadSynchronize since CUDA 10.0\n",
        "  b.cu:4: warning: removed CUDA identifier: cusparseZhyb2csr since CUDA 11.0\n",
        "[HIPIFY] info: file 'a.cu' statistics:\n  CONVERTED refs count: 6\n  WARNINGS: 1\n",
    ):
        assert HIPIFY not in set(_ids(text)), text
    mul24 = '  k.cu:12: warning: unsupported device function "mul24":   y = __mul24(a, b);\n'
    found = set(_ids(mul24))
    assert "noise.hipify-perl-false-unsupported-mul24" in found and HIPIFY not in found


def test_clinfo_with_a_platform_is_not_no_platform() -> None:
    healthy = (
        "Number of platforms                               1\n"
        "  Platform Name                                   AMD Accelerated Parallel Processing\n"
        "  Number of devices                               0\n"
    )
    assert NO_PLATFORM not in {m.id for m in _known(healthy)}
    # a count that only starts with 0 is no count of 0
    assert NO_PLATFORM not in {m.id for m in _known("Number of platforms   01x\n")}


def test_no_platform_with_a_failed_hsa_start_keeps_the_runtimes_answer() -> None:
    text = (
        "hsa api call failure at: /src/rocminfo/rocminfo.cc:1306\n"
        "Call returned HSA_STATUS_ERROR_OUT_OF_RESOURCES: The runtime failed to allocate the"
        " necessary resources. This error may also occur when the core runtime library needs to"
        " spawn threads or create internal OS-specific events.\n"
        "Number of platforms                               0\n"
    )
    assert NO_PLATFORM not in {m.id for m in _known(text)}


def test_clinfos_count_is_found_inside_a_log_too() -> None:
    text = "$ clinfo\n" + _body(f"kb-wordings/{NO_PLATFORM}.clinfo-number-of-platforms-0.txt")
    found = _first(text)
    assert found is not None and found.id == NO_PLATFORM


def test_bitsandbytes_diagnostics_on_a_gpu_less_host_stays_unanswered() -> None:
    # `python -m bitsandbytes` 0.50.2 here under torch 2.13.0+cpu with no GPU: review 28e (F2)
    # answers it only beside an AMD GPU (apt.cuda-torch-on-amd), so not here either
    text = (
        "=================== bitsandbytes v0.50.2 ===================\n"
        "Python: 3.11.7\n"
        "PyTorch: 2.13.0+cpu\n"
        "  CUDA: N/A\n"
        "  HIP: N/A\n"
        "============================================================\n"
        "No CUDA, ROCm, or XPU detected; CPU library loaded successfully.\n"
    )
    assert _known(text) == []


def test_a_clean_conversions_substring_warnings_are_harmless() -> None:
    # review 30g: hipify-perl@014177bc run here on a file it converts completely (cuLaunchKernel ->
    # hipModuleLaunchKernel, cudaDevAttrMaxThreadsPerBlock -> hipDeviceAttributeMaxThreadsPerBlock,
    # cusparseMatDescr_t -> hipsparseMatDescr_t) warns about the prefixes it finds as substrings;
    # no known problem may be reported for that log (explain exits 0)
    text = (
        "  ok.cu:4: warning: unsupported ROCm HIP identifier: cudaDevAttrMax\n"
        "  ok.cu:6: warning: deprecated CUDA identifier: cuLaunch since CUDA 9.2\n"
        "  ok.cu:6: warning: unsupported ROCm HIP identifier: cuLaunch\n"
        "  sp.cu:3: warning: unsupported HIP identifier: cusparseMatDescr\n"
    )
    found = match(text)
    assert HIPIFY in {m.id for m in found}
    assert all(m.harmless for m in found), [m.id for m in found if not m.harmless]
