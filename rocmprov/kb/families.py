"""When no entry knows a text: which part of the stack it is most likely about, and where its
maintainers take reports. Pure; a few literal searches over the text.

The families go from specific to general: the first one whose words occur in the text is the
closest (a log that mentions rocBLAS is about rocBLAS even though it also mentions HIP). Given
the lines that look like a problem (kb/problems.py), the words on them and on the few lines
around them (AROUND: the command or traceback frame above, the continuation below) come first:
a `pip list` that names nccl far above a failing compiler line is about the compiler. When none
of those names a family (the error on one line, the library named further up), the whole text
is read as before.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from rocmprov.kb.codes import Codes


@dataclass(frozen=True)
class Family:
    name: str
    words: str  # a regex of literals
    report: str


ROCM_ISSUES = "https://github.com/ROCm/ROCm/issues"
LIBRARIES_ISSUES = "https://github.com/ROCm/rocm-libraries/issues"
FAMILIES = (
    Family("Ollama", r"ollama|Ollama", "https://github.com/ollama/ollama/issues"),
    Family("llama.cpp (ggml HIP backend)", r"llama\.cpp|ggml|llama-server|llama-cli",
           "https://github.com/ggml-org/llama.cpp/issues"),
    Family("vLLM", r"vllm|vLLM", "https://github.com/vllm-project/vllm/issues"),
    Family("MIOpen", r"MIOpen|miopen", LIBRARIES_ISSUES),
    Family("hipBLASLt", r"hipBLASLt|hipblaslt|HIPBLASLT", LIBRARIES_ISSUES),
    Family("rocBLAS / Tensile", r"rocBLAS|rocblas|ROCBLAS|Tensile", LIBRARIES_ISSUES),
    Family("RCCL (NCCL API)", r"RCCL|rccl|NCCL|nccl", "https://github.com/ROCm/rccl/issues"),
    Family("AMD SMI / ROCm SMI", r"amd-smi|amdsmi|AMDSMI|rocm-smi|rocm_smi|RSMI",
           "https://github.com/ROCm/amdsmi/issues"),
    Family("PyTorch on ROCm", r"torch|PyTorch|pytorch",
           "https://github.com/pytorch/pytorch/issues (add the label module: rocm)"),
    Family("compiler (amdclang, hipcc, LLVM)",
           r"hipcc|amdclang|clang|offload-arch|ld\.lld|comgr", ROCM_ISSUES),
    Family("containers / Kubernetes", r"docker|podman|kubectl|kubelet|amd\.com/gpu|apptainer",
           ROCM_ISSUES),
    Family("packages (apt, dnf, zypper, amdgpu-install)",
           r"apt-get|apt |dpkg|dnf |yum |zypper|amdgpu-install|dkms", ROCM_ISSUES),
    Family("ROCr runtime (HSA, /dev/kfd)", r"HSA|hsa_|ROCr|rocr|/dev/kfd|hsakmt|KFD|kfd",
           ROCM_ISSUES),
    Family("HIP runtime", r"HIP|hip[A-Z]|libamdhip64", ROCM_ISSUES),
    Family("amdgpu kernel driver", r"amdgpu|\[drm\]|drm:",
           "https://gitlab.freedesktop.org/drm/amd/-/issues"),
)  # fmt: skip
_COMPILED = tuple(re.compile(f.words) for f in FAMILIES)
# characters searched for family words (the start of a log says enough)
MAX_SCANNED = 4 * 1024 * 1024
# lines read around each line that looks like a problem: (above, below). On the table's own 1,392
# real texts, 4 of them get another family than from the whole text (32 with the lines alone)
AROUND = (5, 2)
MAX_LINE = 8 * 1024  # characters of each of those lines read (the matcher's window)


@dataclass(frozen=True)
class Closest:
    family: str
    report: str
    why: str  # "the log mentions 'rocblas' (line 12)"


def closest(
    text: str, code_like: list[str], codes: Codes | None = None, problems: Sequence[int] = ()
) -> Closest | None:
    """The family a text is most likely about, or None. A name that looks like a status code
    of a known library (hipErrorSomethingNew) points at that library first; then a family word
    on or AROUND one of the lines numbered in `problems` (1-based: the lines that look like a
    problem); then one anywhere in the text."""
    if code_like and codes is not None:
        for name in code_like:
            for family in codes.families.values():
                if family.id == "rccl" and not name.endswith(("Error", "Result")):
                    continue  # ncclCommInitRank is a function, not a result
                if name.startswith(family.prefix) and name != family.type:
                    why = f"'{name}' looks like a {family.type} this table does not know"
                    return Closest(family.title, family.report, why)
    near = _around(text, problems)
    for family, regex in zip(FAMILIES, _COMPILED, strict=True):
        for number, line in near:
            m = regex.search(line)
            if m:
                why = f"the lines around a problem mention '{m.group()}' (line {number})"
                return Closest(family.name, family.report, why)
    head = text[:MAX_SCANNED]
    for family, regex in zip(FAMILIES, _COMPILED, strict=True):
        m = regex.search(head)
        if m:
            line = head.count("\n", 0, m.start()) + 1
            return Closest(
                family.name, family.report, f"the text mentions '{m.group()}' (line {line})"
            )
    return None


def _around(text: str, problems: Sequence[int]) -> list[tuple[int, str]]:
    """(line number, line) of the lines in `problems` and AROUND them, in order, each once."""
    if not problems:
        return []
    lines = text.split("\n")
    above, below = AROUND
    wanted = sorted({k for n in problems for k in range(n - above, n + below + 1)
                     if 1 <= k <= len(lines)})  # fmt: skip
    return [(k, lines[k - 1][:MAX_LINE]) for k in wanted]
