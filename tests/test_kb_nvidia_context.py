"""One definition of "this log is from an NVIDIA machine" (rocmprov/kb/contexts.py), named by
the table's patterns as `unless: {context: nvidia}` and read by the matcher's filter of
CUDA-prefixed status codes.

CUDA's wording of an error ("CUDA error: invalid device function", "an illegal memory access
was encountered", ...) is also printed by HIP builds of CUDA programs: on an AMD machine it is
HIP's, beside an NVIDIA card, driver or nvidia-smi it is CUDA's own, and ROCm advice is wrong.
A line proving there is NO NVIDIA tool (nvidia-smi not found / not recognized), also after a
bare prompt line `$ nvidia-smi`, is no NVIDIA evidence.

All texts below are CONSTRUCTED from the programs' format strings, not captured outputs:
PyTorch's C10_CUDA_CHECK ("CUDA error: " + cudaGetErrorString, the runtime's strings for
cudaErrorInvalidDeviceFunction / IllegalAddress / LaunchFailure / InvalidDevice /
InvalidKernelImage, which are also HIP's hipGetErrorString's) and torch.cuda's "Found no NVIDIA
driver on your system" and cudaErrorInsufficientDriver string; ggml's ggml_cuda_error ("%s
error: %s" then "  current device: %d, in function %s at %s:%d") and ggml_cuda_init's "  Device
%d: %s, compute capability %d.%d, VMM: %s"; CTranslate2's CUDA_CHECK ("CUDA failed with error "
+ cudaGetErrorString); nvidia-smi's table header and `nvidia-smi -L` ("GPU %u: %s (UUID: %s)");
torch.cuda.get_device_name's product names; the NVIDIA kernel module's "NVRM:" prefix; rocminfo's
"Name:" / "Marketing Name:" fields; and the shells' own "command not found" messages (bash, dash,
PowerShell, cmd.exe, Python's FileNotFoundError, zsh).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from rocmprov.kb import contexts, match
from rocmprov.kb import matcher as kbmatcher
from rocmprov.kb.table import TableError, load_table, parse_table
from tests.kbcases import assert_leads, assert_silent

ROOT = Path(__file__).resolve().parent.parent
KB = ROOT / "rocmprov" / "data" / "kb"

GGML_AT = (
    "  current device: 0, in function {f} at /src/llama.cpp/ggml/src/ggml-cuda/ggml-cuda.cu:{n}\n"
)

# (entry, its error text in CUDA's wording)
ERRORS = [
    ("hip.invalid-device-function", "RuntimeError: CUDA error: invalid device function\n"),
    (  # ggml's wording (llm.ggml-invalid-device-function until round 19's merge)
        "hip.invalid-device-function",
        "CUDA error: invalid device function\n"
        + GGML_AT.format(f="ggml_cuda_compute_forward", n=2300)
        + "  err\n/src/llama.cpp/ggml/src/ggml-cuda/ggml-cuda.cu:75: CUDA error\n",
    ),
    ("hip.illegal-address", "RuntimeError: CUDA error: an illegal memory access was encountered\n"),
    (
        "hip.illegal-address",
        "terminate called after throwing an instance of 'c10::Error'\n"
        "  what():  an illegal memory access was encountered\n",
    ),
    ("hip.launch-failure", "RuntimeError: CUDA error: unspecified launch failure\n"),
    ("hip.invalid-device-ordinal", "RuntimeError: CUDA error: invalid device ordinal\n"),
    ("hip.invalid-image", "RuntimeError: CUDA error: device kernel image is invalid\n"),
    (
        "llm.ggml-hipblas-internal-error",
        "CUDA error: CUBLAS_STATUS_INTERNAL_ERROR\n"
        + GGML_AT.format(f="ggml_cuda_mul_mat_batched_cublas", n=1900)
        + "  cublasGemmStridedBatchedEx(ctx.cublas_handle(), CUBLAS_OP_T, CUBLAS_OP_N, ...)\n",
    ),
    (
        "apt.cuda-torch-on-amd",
        "RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA"
        " GPU and installed a driver from http://www.nvidia.com/Download/index.aspx\n",
    ),
    (
        "apt.cuda-torch-on-amd",
        "RuntimeError: CUDA driver version is insufficient for CUDA runtime version\n",
    ),
    (
        "framework.ctranslate2-no-gpu-build",
        "RuntimeError: CUDA failed with error CUDA driver version is insufficient for CUDA runtime"
        " version\n",
    ),
    (
        "framework.ctranslate2-no-gpu-build",
        "RuntimeError: CUDA failed with error no CUDA-capable device is detected\n",
    ),
]

NVIDIA_SMI_TABLE = (
    "+-----------------------------------------------------------------------------------------+\n"
    "| NVIDIA-SMI 550.54.14              Driver Version: 550.54.14      CUDA Version: 12.4     |\n"
    "|-----------------------------------------+------------------------+----------------------+\n"
)

NVIDIA = {
    "data-centre, nvidia-smi -L": "$ nvidia-smi -L\n"
    "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-00000000-1111-2222-3333-444444444444)\n",
    "data-centre, torch's name": "device: NVIDIA A100-SXM4-80GB\n",
    "data-centre, L40S": "torch.cuda.get_device_name(0): NVIDIA L40S\n",
    "GeForce, ggml's device line": "ggml_cuda_init: found 1 CUDA devices:\n"
    "  Device 0: NVIDIA GeForce RTX 4090, compute capability 8.9, VMM: yes\n",
    "nvidia-smi table": NVIDIA_SMI_TABLE,
    "prompt, then the table": "$ nvidia-smi\n" + NVIDIA_SMI_TABLE,
    "kernel driver": "[    4.210000] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  550.54.14\n",
}

ROCMINFO = "  Name:                    gfx1100\n  Marketing Name:          AMD Radeon RX 7900 XTX\n"
AMD = {
    "rocminfo": ROCMINFO,
    "bash not found": ROCMINFO + "bash: nvidia-smi: command not found\n",
    "dash not found": ROCMINFO + "/bin/sh: 1: nvidia-smi: not found\n",
    "python not found": ROCMINFO
    + "FileNotFoundError: [Errno 2] No such file or directory: 'nvidia-smi'\n",
    "cmd not recognized": ROCMINFO
    + "'nvidia-smi' is not recognized as an internal or external command,\n"
    "operable program or batch file.\n",
    "bare prompt, bash": ROCMINFO + "$ nvidia-smi\nbash: nvidia-smi: command not found\n",
    "bare prompt, root dash": ROCMINFO + "# nvidia-smi\n/bin/sh: 1: nvidia-smi: not found\n",
    "bare prompt, PowerShell": ROCMINFO + "PS C:\\> nvidia-smi\n"
    "nvidia-smi : The term 'nvidia-smi' is not recognized as the name of a cmdlet, function,"
    " script file, or operable program.\n",
    "bare prompt, cmd.exe": ROCMINFO + "C:\\Users\\me> nvidia-smi\n"
    "'nvidia-smi' is not recognized as an internal or external command,\n",
    "bare prompt, zsh after a blank line": ROCMINFO
    + "% nvidia-smi -L\n\nzsh: command not found: nvidia-smi\n",
}

FILLER = "".join(f"step {i}: loading\n" for i in range(5))


def _ids(errors: list[tuple[str, str]], contexts_: dict[str, str]) -> list:
    return [
        pytest.param(entry, error, ctx, id=f"{entry}[{i}]-{name}")
        for i, (entry, error) in enumerate(errors)
        for name, ctx in contexts_.items()
    ]


@pytest.mark.parametrize(("entry", "error", "machine"), _ids(ERRORS, NVIDIA))
def test_cuda_wording_on_an_nvidia_machine_is_silent(entry: str, error: str, machine: str) -> None:
    assert_silent(machine + FILLER + error, entry)


@pytest.mark.parametrize(("entry", "error"), ERRORS[:3])
@pytest.mark.parametrize("machine", list(NVIDIA.values())[:2])
def test_the_nvidia_evidence_after_the_error_also_vetoes(
    entry: str, error: str, machine: str
) -> None:
    assert_silent(error + FILLER + machine, entry)


@pytest.mark.parametrize(("entry", "error", "machine"), _ids(ERRORS, AMD))
def test_the_same_line_on_an_amd_machine_leads_to_the_entry(
    entry: str, error: str, machine: str
) -> None:
    assert_leads(machine + FILLER + error, entry)


@pytest.mark.parametrize(
    ("entry", "error"),
    [
        ("hip.invalid-device-function", "RuntimeError: HIP error: invalid device function\n"),
        (
            "hip.illegal-address",
            "RuntimeError: HIP error: an illegal memory access was encountered\n",
        ),
        ("hip.illegal-address", "hipErrorIllegalAddress\n"),
        ("hip.launch-failure", "RuntimeError: HIP error: unspecified launch failure\n"),
        ("hip.invalid-device-ordinal", "RuntimeError: HIP error: invalid device ordinal\n"),
        ("hip.invalid-image", "RuntimeError: HIP error: device kernel image is invalid\n"),
        (
            "llm.ggml-hipblas-internal-error",
            "ROCm error: CUBLAS_STATUS_INTERNAL_ERROR\n"
            + GGML_AT.format(f="ggml_cuda_mul_mat_batched_cublas", n=1900),
        ),
    ],
)
def test_hips_own_wording_is_hips_even_beside_an_nvidia_word(entry: str, error: str) -> None:
    """HIP's or ROCm's name on the line is no CUDA wording: no veto (a machine with both)."""
    assert entry in [m.id for m in match(NVIDIA["data-centre, nvidia-smi -L"] + FILLER + error)]


@pytest.mark.parametrize(
    ("text", "nvidia"),
    [(t, True) for t in NVIDIA.values()]
    + [(t, False) for t in AMD.values()]
    + [
        ("Command 'nvidia-smi' not found, but can be installed with:\n", False),
        ("$ nvidia-smi\nCommand 'nvidia-smi' not found, but can be installed with:\n", False),
        ("which: no nvidia-smi in (/usr/local/bin:/usr/bin)\n", False),
        ("$ nvidia-smi\nFailed to initialize NVML: Driver/library version mismatch\n", True),
        ("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\n", True),
        ("  Device 0: Tesla V100-SXM2-16GB, compute capability 7.0, VMM: yes\n", True),
        ("  Device 0: AMD Radeon VII, compute capability 9.0, VMM: no\n", False),
        ("Quadro RTX 8000\n", True),
        ("NVIDIA RTX A6000\n", True),
    ],
)
def test_the_definition(text: str, nvidia: bool) -> None:
    assert (contexts.NVIDIA_MACHINE.search(text) is not None) is nvidia


def test_the_definition_exists_once() -> None:
    """The five former copies (matcher.py's _NVIDIA_MACHINE, core.yaml's &nvidia anchor and
    llm.yaml's copy, frameworks.yaml's two and packages.yaml's two) are gone: the table names
    the context and the matcher imports it."""
    for path in sorted(KB.glob("*.yaml")):
        raw = path.read_text(encoding="utf-8")
        for fragment in (r"nvidia\.ko", r"\bNVRM\b", r"CUDA Version: \d", "&nvidia", "*nvidia"):
            assert fragment not in raw, (path.name, fragment)
    source = (ROOT / "rocmprov" / "kb" / "matcher.py").read_text(encoding="utf-8")
    assert "GeForce" not in source and "NVIDIA-SMI" not in source
    assert kbmatcher.NVIDIA_MACHINE is contexts.NVIDIA_MACHINE
    users = [
        (e.id, p.unless) for e in load_table().entries for p in e.patterns
        if p.unless and "NVIDIA-SMI" in p.unless
    ]  # fmt: skip
    assert len(users) >= 12, users  # 7 former copies, 5 CUDA-worded patterns
    for ident, unless in users:
        assert contexts.NVIDIA in unless, ident
    assert sum(v.count("NVIDIA-SMI") for v in contexts.CONTEXTS.values()) == 1


def _one(unless: object) -> object:
    entry = {"id": "t.ctx", "title": "t", "category": "rocm", "kind": "root-cause",
             "cause": "c" * 50, "fix": "f", "sources": ["https://example.org/a"],
             "patterns": [{"regex": "driver version is insufficient", "unless": unless,
                           "around": 5}]}  # fmt: skip
    return parse_table({"schema": "rocmprov.kb/1", "entries": [entry]})


def test_a_named_context_and_alternatives() -> None:
    assert _one({"context": "nvidia"}).entries[0].patterns[0].unless == contexts.NVIDIA
    combined = _one([{"context": "nvidia"}, "ZLUDA"]).entries[0].patterns[0].unless
    assert re.search(combined, "ZLUDA") and re.search(combined, "| NVIDIA-SMI 550.54 |")
    for bad in (
        {"context": "amd-ish"},
        {"context": "nvidia", "extra": 1},
        [{"context": "nvidia"}, ""],
        3,
    ):
        with pytest.raises(TableError):
            _one(bad)


def test_the_matcher_reads_the_text_once_for_many_cuda_prefixed_codes(monkeypatch) -> None:
    """The CUDA-prefix filter of status codes searches the text once, not once per hit."""
    calls = []

    class Counting:
        def search(self, text: str, *args: object) -> object:
            calls.append(len(text))
            return contexts.NVIDIA_MACHINE.search(text, *args)

    monkeypatch.setattr(kbmatcher, "NVIDIA_MACHINE", Counting())
    text = NVIDIA["GeForce, ggml's device line"] + "".join(
        f"worker {i}: CUDA error: invalid device ordinal\n" for i in range(50)
    )
    match(text)
    assert len(calls) == 1, calls


@pytest.mark.parametrize(("name", "machine"), list(NVIDIA.items()) + list(AMD.items()))
def test_a_cuda_prefixed_status_code_follows_the_same_definition(name: str, machine: str) -> None:
    """No entry pattern reads CUDA's "no kernel image is available" (hipErrorNoBinaryForGpu's
    string): the status-code look-up finds it, and the matcher's CUDA-prefix filter drops it on
    an NVIDIA machine by the same definition."""
    text = (
        machine
        + FILLER
        + ("RuntimeError: CUDA error: no kernel image is available for execution on the device\n")
    )
    found = [m.id for m in match(text)]
    if name in NVIDIA:
        assert found == [], found
    else:
        assert found[:1] == ["hip.no-binary-for-gpu"], found
