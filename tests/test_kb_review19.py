"""Round 19 hostile review: counter-examples that failed before the review's fixes.

The one NVIDIA-machine definition (rocmprov/kb/contexts.py, `unless: {context: nvidia}` and the
matcher's CUDA-prefix filter) called AMD logs NVIDIA and silenced their ROCm cause, and missed
an NVIDIA card as lspci names it. Texts are CONSTRUCTED from the programs' format strings, as
each comment says, except the llama.cpp MI100 header, which is verbatim from
tests/fixtures/healthy/ (its source: ggml-org/llama.cpp#3051, kbsplit `table`).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from rocmprov.kb import contexts
from rocmprov.kb.table import load_table

ROOT = Path(__file__).resolve().parent.parent


def _verbatim(name: str) -> str:
    return (ROOT / "tests" / "fixtures" / "healthy" / name).read_text().split("---\n", 1)[1]


# verbatim: llama.cpp build 2006 (Feb 2024) on 8 MI100s; its ROCm build names no device
# ("  Device 0: , compute capability 9.0, VMM: no"), which the definition's "Device N: <not
# AMD> ... compute capability" alternative took for a CUDA device line
_MI100 = _verbatim("llama.cpp-8x-mi100-slurm-it-worked-found-8-rocm-devices.txt")
# constructed from ggml-cuda.cu's ggml_cuda_error of early 2024 (HIP builds still said "CUDA"):
# "CUDA error: %s" / "  current device: %d, in function %s at %s:%d" / "  %s" / GGML_ASSERT
_GGML_2024_ERROR = (
    "CUDA error: invalid device function\n"
    "  current device: 0, in function ggml_cuda_op_flatten at ggml-cuda.cu:9010\n"
    "  hipGetLastError()\n"
    'GGML_ASSERT: ggml-cuda.cu:9010: !"CUDA error"\n'
)

# constructed from CPython's traceback format: a program (a web UI's VRAM probe) runs
# subprocess.check_output(["nvidia-smi", ...]) on an AMD host; the source line quoting the
# tool's name sits a few lines above "No such file or directory: 'nvidia-smi'", and the quoted
# name counted as an NVIDIA machine
_PROBE_TRACEBACK = (
    "Traceback (most recent call last):\n"
    '  File "/app/modules/gpu_info.py", line 12, in get_vram\n'
    '    out = subprocess.check_output(["nvidia-smi", "--query-gpu=memory.total",'
    ' "--format=csv,noheader"])\n'
    '  File "/usr/lib/python3.10/subprocess.py", line 421, in check_output\n'
    "    return run(*popenargs, stdout=PIPE, timeout=timeout, check=True,\n"
    '  File "/usr/lib/python3.10/subprocess.py", line 1847, in _execute_child\n'
    "    raise child_exception_type(errno_num, err_msg, err_filename)\n"
    "FileNotFoundError: [Errno 2] No such file or directory: 'nvidia-smi'\n"
    "WARNING: could not read the VRAM size, continuing\n"
)
# constructed from bash's "%s: No such file or directory" for a command path that is gone (a
# hashed /usr/bin/nvidia-smi after the NVIDIA packages were removed)
_BASH_GONE = "$ nvidia-smi\nbash: /usr/bin/nvidia-smi: No such file or directory\n"
_AMD = "torch 2.3.1+rocm6.0, gfx1100\n"

# constructed: PyTorch's C10_CUDA_CHECK ("CUDA error: " + the runtime's string, also HIP's
# hipGetErrorString) and torch.cuda's lazy-init message of a CUDA wheel
_TORCH_ERRORS = [
    ("RuntimeError: CUDA error: invalid device function\n", "hip.invalid-device-function"),
    ("RuntimeError: CUDA error: an illegal memory access was encountered\n",
     "hip.illegal-address"),
    ("RuntimeError: CUDA error: unspecified launch failure\n", "hip.launch-failure"),
    ("RuntimeError: CUDA error: invalid device ordinal\n", "hip.invalid-device-ordinal"),
    ("RuntimeError: CUDA error: device kernel image is invalid\n", "hip.invalid-image"),
    ("RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA"
     " GPU and installed a driver from http://www.nvidia.com/Download/index.aspx\n",
     "apt.cuda-torch-on-amd"),
]  # fmt: skip

LEADS = (
    [(_MI100 + _GGML_2024_ERROR, "hip.invalid-device-function")]
    + [(_AMD + _PROBE_TRACEBACK + error, entry) for error, entry in _TORCH_ERRORS]
    + [(_AMD + _BASH_GONE + error, entry) for error, entry in _TORCH_ERRORS[:3]]
)

# constructed from lspci's format ("<slot> <class>: <vendor> <device>"; pci.ids names NVIDIA's
# data-centre cards "GH100 [H100 SXM5 80GB]", "GA100 [A100 SXM4 40GB]"): an NVIDIA machine the
# definition missed, where the CUDA runtime's own error got ROCm advice
_LSPCI_A100 = (
    "$ lspci | grep -i nvidia\n"
    "17:00.0 3D controller: NVIDIA Corporation GA100 [A100 SXM4 40GB] (rev a1)\n"
)
SILENT = [
    (_LSPCI_A100 + error, entry) for error, entry in _TORCH_ERRORS[:5]
]


@pytest.mark.parametrize(
    ("text", "nvidia"),
    [
        # the AMD texts above
        (_MI100, False),
        (_PROBE_TRACEBACK, False),
        (_BASH_GONE, False),
        # constructed: shutil.which("nvidia-smi") quoted in a traceback's source line
        ('    if shutil.which("nvidia-smi") is None:\n', False),
        # constructed from CPython's CalledProcessError: the tool ran and failed (9: driver not
        # loaded) -> NVIDIA; 127 is the shell's "not found" -> not
        ("subprocess.CalledProcessError: Command '['nvidia-smi', '-L']' returned non-zero exit"
         " status 9.\n", True),
        ("subprocess.CalledProcessError: Command 'nvidia-smi' returned non-zero exit status"
         " 127.\n", False),
        # constructed: the binary is there, its library is not -> still an NVIDIA tool
        ("nvidia-smi: error while loading shared libraries: libnvidia-ml.so.1: cannot open"
         " shared object file: No such file or directory\n", True),
        # constructed from lspci: a data-centre card is NVIDIA; the audio function alone names
        # no product and an AMD machine may show it beside a Radeon
        (_LSPCI_A100, True),
        ("3D controller [0302]: NVIDIA Corporation GH100 [H100 SXM5 80GB] [10de:2330]\n", True),
        ("03:00.1 Audio device: NVIDIA Corporation GA102 High Definition Audio Controller\n",
         False),
        # a named non-AMD device line stays NVIDIA (Jetson's ggml line)
        ("  Device 0: Orin, compute capability 8.7, VMM: yes\n", True),
    ],
)  # fmt: skip
def test_the_definition(text: str, nvidia: bool) -> None:
    assert (contexts.NVIDIA_MACHINE.search(text) is not None) is nvidia


def test_a_merged_entry_keeps_the_source_of_its_moved_wording() -> None:
    """The torchaudio merge dropped torchmetrics#2188, the source of the moved
    torchaudio-cuda-allocator wording (kbsplit: table)."""
    entry = load_table().by_id["framework.torch-extension-built-for-other-torch"]
    assert "https://github.com/Lightning-AI/torchmetrics/issues/2188" in entry.sources



def test_a_long_line_of_missing_tool_messages_is_read_in_linear_time() -> None:
    """Constructed: one line of 8,000 dash-style "nvidia-smi: not found" messages (a loop's
    output without newlines). Each occurrence's look-ahead read the rest of the line: about 14 s
    before the fix (the matcher's CUDA-prefix filter searches the whole text), 0.03 s after:
    4x the messages (8,000 -> 32,000) must take well under 16x the CPU time."""
    from tests.growth import assert_linear

    def line(count: int) -> str:
        return "nvidia-smi: not found " * count + "\n"

    assert contexts.NVIDIA_MACHINE.search(line(8000)) is None
    assert_linear(line, contexts.NVIDIA_MACHINE.search, 8000)
