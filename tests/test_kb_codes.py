"""Status codes from the ROCm headers, facts seen anywhere in a log, and the honest "not known".

The generator's parsers run on verbatim excerpts of the same headers (tests/fixtures/headers/,
each with its source URL at the pinned commit) and must give what rocmprov/data/kb_codes.yaml
holds: the generated file is checked against its sources, not against itself.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from rocmprov.kb import match
from rocmprov.kb.codes import load_codes
from rocmprov.kb.context import extract, hint
from rocmprov.kb.families import closest
from rocmprov.kb.matcher import analyse

ROOT = Path(__file__).resolve().parent.parent
HEADERS = ROOT / "tests" / "fixtures" / "headers"
CODES_YAML = ROOT / "rocmprov" / "data" / "kb_codes.yaml"
REQUIRED = ("hipError_t", "hsa_status_t", "amdsmi_status_t", "rocblas_status", "hipblasStatus_t",
            "miopenStatus_t", "ncclResult_t")  # fmt: skip


def _generator():  # scripts/ is not a package: load the script as a module
    spec = importlib.util.spec_from_file_location(
        "gen_kb_codes", ROOT / "scripts" / "gen_kb_codes.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["gen_kb_codes"] = module
    spec.loader.exec_module(module)
    return module


GEN = _generator()
DOC = yaml.safe_load(CODES_YAML.read_text(encoding="utf-8"))
BY_FAMILY = {f["id"]: {c["name"]: c for c in f["codes"]} for f in DOC["families"]}


def header(name: str) -> tuple[str, str]:
    head, _, body = (HEADERS / name).read_text(encoding="utf-8").partition("\n---\n")
    return head.removeprefix("source: ").strip(), body


# ---------------------------------------------------------------- generated from the headers


def test_every_family_the_issue_names_is_generated_with_its_provenance() -> None:
    types = {f["type"] for f in DOC["families"]}
    assert set(REQUIRED) <= types
    for family in DOC["families"]:
        assert len(family["codes"]) >= 7, family["id"]
        for source in family["sources"]:
            assert len(source["commit"]) == 40
            assert source["url"] == (f"https://github.com/{source['repo']}/blob/"
                                     f"{source['commit']}/{source['path']}")  # fmt: skip
        for code in family["codes"]:
            assert code["name"].startswith(family["prefix"]), code
            assert code.get("meaning") or code.get("message") or code.get("alias_of"), code
        assert family["next_step"] and family["report"].startswith("https://")


def test_the_generator_reads_the_rocblas_enum_as_the_yaml_holds_it() -> None:
    url, text = header("rocblas-types.h.txt")
    codes = GEN.parse_enum(GEN.enum_body(text, enum="rocblas_status"), "rocblas_status_")
    assert [c.value for c in codes] == list(range(16))  # 13..15 are split over two lines
    assert codes[15].name == "rocblas_status_arch_mismatch"
    source = next(s for s in GEN.FAMILIES[3].sources)
    assert url == source.url
    for code in codes:
        assert BY_FAMILY["rocblas"][code.name]["value"] == code.value
        assert BY_FAMILY["rocblas"][code.name]["meaning"] == code.meaning


def test_the_generator_reads_hip_aliases_and_continued_comments() -> None:
    _, text = header("hip_runtime_api.h.txt")
    codes = {c.name: c for c in GEN.parse_enum(GEN.enum_body(text, enum="hipError_t"), "hipError")}
    assert codes["hipErrorInvalidValue"].meaning.endswith("not in an acceptable range.")
    assert codes["hipErrorMemoryAllocation"].alias_of == "hipErrorOutOfMemory"
    assert (
        BY_FAMILY["hip"]["hipErrorInvalidValue"]["meaning"] == codes["hipErrorInvalidValue"].meaning
    )


def test_the_generator_reads_the_anonymous_hsa_additions_with_block_comments() -> None:
    _, text = header("hsa_ext_amd.h.txt")
    body = GEN.enum_body(text, marker="@remark Additions to hsa_status_t")
    codes = {c.name: c for c in GEN.parse_enum(body, "HSA_STATUS_")}
    assert codes["HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION"].value == 41
    assert "beyond the maximum legal address" in codes[
        "HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION"].meaning  # fmt: skip
    assert BY_FAMILY["hsa"]["HSA_STATUS_ERROR_MEMORY_FAULT"]["value"] == 43


def test_the_generator_reads_messages_from_the_switch() -> None:
    _, text = header("rccl-init.cc.txt")
    messages = GEN.parse_messages(GEN.function_body(text, "ncclGetErrorString_impl"))
    assert messages["ncclRemoteError"] == "remote process exited or there was a network error"
    assert BY_FAMILY["rccl"]["ncclSystemError"]["message"] == messages["ncclSystemError"]


def test_the_committed_file_is_what_the_generator_renders() -> None:
    """Rendering the YAML's own codes through the generator's writer gives the file back: nobody
    edited it by hand."""
    families = []
    for spec in GEN.FAMILIES:
        raw = next(f for f in DOC["families"] if f["id"] == spec.id)
        codes = [GEN.Code(c["name"], c["value"], c.get("meaning", ""), c.get("message", ""),
                          c.get("alias_of", "")) for c in raw["codes"]]  # fmt: skip
        families.append((spec, codes))
    assert GEN.render(families) == CODES_YAML.read_text(encoding="utf-8")


# ---------------------------------------------------------------- codes in a text


@pytest.mark.parametrize(
    ("text", "expected", "how"),
    [
        ("rocblas_status_invalid_size returned from rocblas_sgemm\n",
         "rocblas_status_invalid_size", "Invalid size"),
        ("hipblasLtMatmul returned HIPBLAS_STATUS_ARCH_MISMATCH\n",
         "HIPBLAS_STATUS_ARCH_MISMATCH", "architecture mismatch"),
        ("MIOpen Error: miopenStatusUnknownError in convolution\n",
         "miopenStatusUnknownError", "Unknown error"),
        ("amdsmi.AmdSmiLibraryException: Error code: 32 | AMDSMI_STATUS_NOT_INIT\n",
         "AMDSMI_STATUS_NOT_INIT", "not initialized"),
        ("hsa_executable_define failed: HSA_STATUS_ERROR_VARIABLE_ALREADY_DEFINED\n",
         "HSA_STATUS_ERROR_VARIABLE_ALREADY_DEFINED", "already defined"),
        ("torch.distributed.DistBackendError: NCCL error: remote process exited or there was a "
         "network error\n",
         "ncclRemoteError", "network"),
        ("RuntimeError: HIP error: the operation cannot be performed in the present state\n",
         "hipErrorIllegalState", "valid state"),
        ("hsa_queue_create failed: HSA error code 0x1002\n",
         "HSA_STATUS_ERROR_INVALID_QUEUE_CREATION", "0x1002"),
    ],
)  # fmt: skip
def test_a_printed_code_gets_its_meaning_and_the_next_step(
    text: str, expected: str, how: str
) -> None:
    found = [m for m in match(text) if m.id.startswith("code.")]
    assert found, text
    top = found[0]
    assert top.id.endswith("." + expected)
    assert how.lower() in top.cause.lower()
    assert top.fix and top.sources[0].startswith("https://github.com/ROCm/")
    assert not top.harmless and top.kind == "symptom"


def test_a_code_a_table_entry_explains_is_not_repeated() -> None:
    found = match("hipErrorNoBinaryForGpu: Unable to find code object for all current devices!\n")
    assert [m.id for m in found] == ["hip.no-binary-for-gpu"]


@pytest.mark.parametrize(
    ("text", "owner"),
    [
        # HSA's hex value of the code rocr.out-of-resources names
        ("hsa_queue_create failed: HSA error code 0x1008\n", "rocr.out-of-resources"),
        # HIP's message for hipErrorInvalidDeviceFunction, behind ggml's source location
        ("CUDA error 98 at ggml-cuda.cu:6246: invalid device function\n",
         "hip.invalid-device-function"),
        ("ROCm error: kernels.cu:88: invalid device function\n", "hip.invalid-device-function"),
        ("RuntimeError: HIP error: invalid device function\n", "hip.invalid-device-function"),
    ],
)  # fmt: skip
def test_a_code_an_entry_names_by_itself_brings_that_entry_in_every_spelling(
    text: str, owner: str
) -> None:
    found = match(text)
    assert found[0].id == owner, [m.id for m in found]
    assert not any(m.id.startswith("code.") for m in found)
    assert found[0].lines == (1,) and found[0].evidence == (text.strip(),)


def test_a_hex_value_brings_the_owning_entry_only_on_a_status_line() -> None:
    (bare,) = match("HSA_ENABLE_SDMA=0 mask 0x2a\n")
    assert bare.id == "code.hsa.HSA_STATUS_ERROR_ILLEGAL_INSTRUCTION"
    assert match("hsa_signal_wait returned HSA status 0x2a\n")[0].id == "rocr.illegal-instruction"


def test_a_message_is_a_code_only_after_the_prefix_and_a_location_is_not_a_message() -> None:
    assert match("kernels.cu:88: invalid device function\n") == []
    assert match("HIP error: kernels.cu:88:\n") == []


def test_codes_rank_below_every_table_entry_and_success_is_not_reported() -> None:
    text = ("rocblas_status_success\nmiopenStatusSuccess\nhipSuccess\n"
            "RuntimeError: No HIP GPUs are available\nHIPBLAS_STATUS_INTERNAL_ERROR\n")  # fmt: skip
    found = match(text)
    assert found[0].id == "pytorch.no-hip-gpus"
    assert [m.id for m in found[1:]] == ["code.hipblas.HIPBLAS_STATUS_INTERNAL_ERROR"]


def test_a_state_code_is_harmless_and_a_hex_needs_hsa_on_the_line() -> None:
    (state,) = match("hipEventQuery returned hipErrorNotReady\n")
    assert state.harmless and "not a failure" in state.cause
    assert match("value 0x1008 in register dump\n") == []


def test_names_inside_longer_words_are_not_codes() -> None:
    assert match("myhipErrorOutOfMemoryCounter=3\n") == []


# ---------------------------------------------------------------- facts anywhere in the text


def test_a_gfx_target_on_one_line_fills_the_fix_of_a_library_error_on_another() -> None:
    log = ("  Name:                    gfx1031\n"
           "  Marketing Name:          AMD Radeon RX 6700 XT\n"
           "...\n"
           "RuntimeError: HIP error: invalid device function\n")  # fmt: skip
    top = match(log)[0]
    assert top.id == "hip.invalid-device-function"
    assert "gfx1031" in top.fix and "HSA_OVERRIDE_GFX_VERSION=10.3.0" in top.fix
    assert top.condition  # the RDNA2 condition was chosen by a value from another line
    facts = {f.name: (f.value, f.line) for f in analyse(log).facts}
    assert facts["gfx"] == ("gfx1031", 1)
    assert "gpu" not in facts  # only the facts the matched entries use are looked for


def test_explicit_context_wins_over_the_text_and_a_capture_wins_over_both() -> None:
    log = "Name: gfx1031\nRuntimeError: HIP error: invalid device function\n"
    assert "gfx1103" in match(log, context={"gfx": "gfx1103"})[0].fix
    captured = ("rocBLAS warning: No paths matched /opt/rocm/lib/rocblas/library/*gfx1036*co. "
                "Make sure that ROCBLAS_TENSILE_LIBPATH is set correctly.\n")  # fmt: skip
    top = match("Name: gfx1030\n" + captured)[0]
    assert top.captures.get("gfx") == "gfx1036" and "gfx1036" in top.fix


def test_without_a_value_the_fix_says_how_to_get_it() -> None:
    top = match("RuntimeError: HIP error: invalid device function\n")[0]
    assert "{gfx}" not in top.fix and "<gfx>" not in top.fix
    assert hint("gfx") in top.fix or "rocminfo" in top.fix


@pytest.mark.parametrize(
    ("text", "name", "value"),
    [
        ("[    0.000000] Linux version 6.8.0-49-generic (buildd@lcy02) (x86_64-linux-gnu-gcc)",
         "kernel", "6.8.0-49-generic"),
        ("Successfully installed torch-2.5.1+rocm6.2", "rocm_version", "6.2"),
        ("ls /opt/rocm-6.3.1/lib", "rocm_version", "6.3.1"),
        # AMD's 10.0 transition guide: TheRock installs to /opt/rocm/core-X.Y
        ("error while loading /opt/rocm/core-10.1/lib/libamdhip64.so.7", "rocm_version", "10.1"),
        ("amdgpu 0000:c3:00.0: amdgpu: SMU is initialized successfully!\namdgpu 0000:c3:00.0:",
         "pci", "0000:c3:00.0"),
        ("GPU[0]: AMD Instinct MI300X OAM", "gpu", "AMD Instinct MI300X"),
        ("target=gfx90a:sramecc+:xnack-", "gfx", "gfx90a"),
    ],
)  # fmt: skip
def test_facts_are_read_from_the_usual_places(text: str, name: str, value: str) -> None:
    facts = {f.name: f.value for f in extract(text)}
    assert facts.get(name) == value


def test_the_most_frequent_gfx_wins_and_an_unrelated_word_is_not_one() -> None:
    text = "Name: gfx1036\n" + "Name: gfx1100\n" * 3 + "ngfx1234 is not a target\n"
    assert {f.name: f.value for f in extract(text)}["gfx"] == "gfx1100"


# ---------------------------------------------------------------- when nothing is known


def test_not_known_names_the_closest_family_and_where_to_report() -> None:
    near = closest("rocblas_gemm_ex: something new went wrong\n", [], load_codes())
    assert near is not None and "rocBLAS" in near.family and "rocm-libraries" in near.report
    unknown_code = analyse("failed with hipErrorSomethingBrandNew\n")
    assert unknown_code.matches == [] and unknown_code.code_like == ["hipErrorSomethingBrandNew"]
    near = closest("failed with hipErrorSomethingBrandNew\n", unknown_code.code_like, load_codes())
    assert near is not None and "hipError_t" in near.why
    assert closest("nothing here at all\n", [], load_codes()) is None


def _explain(*args: str, stdin: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "rocmprov", "explain", *args], input=stdin,
                          capture_output=True, text=True, timeout=60, cwd=ROOT)  # fmt: skip


def test_explain_says_what_to_collect_and_where_to_report_and_exits_0() -> None:
    proc = _explain("-", stdin="MIOpen(HIP): Warning [SomethingNew] a message no one has seen\n")
    assert proc.returncode == 0, proc.stderr
    assert "No known cause" in proc.stdout and "Closest family: MIOpen" in proc.stdout
    assert "rocmprov collect --local" in proc.stdout and "rocm-libraries/issues" in proc.stdout
    doc = json.loads(_explain("-", "--format", "json", stdin="a b c failed\n").stdout)
    assert doc["unknown"]["closest_family"] == "" and doc["unknown"]["collect"].startswith(
        "rocmprov collect"
    )
    assert doc["unknown"]["report"] == "https://github.com/ROCm/ROCm/issues"
    assert doc["unknown"]["looks_like_error"] is True
    # nothing in it looks like a problem: no family, the general tracker (test_kb_problems.py)
    doc = json.loads(_explain("-", "--format", "json", stdin="a b c\n").stdout)
    assert doc["unknown"]["looks_like_error"] is False
    assert doc["unknown"]["report"] == "https://github.com/ROCm/ROCm/issues"


def test_explain_json_lists_the_facts_it_used() -> None:
    log = "Name: gfx1031\nRuntimeError: HIP error: invalid device function\n"
    doc = json.loads(_explain("-", "--format", "json", stdin=log).stdout)
    assert {"name": "gfx", "value": "gfx1031", "line": 1} in doc["context"]
    assert "gfx1031" in doc["matches"][0]["fix"] and "unknown" not in doc
