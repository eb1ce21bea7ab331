"""Named context regexes of the troubleshooting table, defined once.

A pattern's `unless` / `near` (kb/table.py, header of rocmprov/data/kb/core.yaml) may name one
of these instead of writing the regex out: `unless: {context: nvidia}`, or a list of names and
regexes that are alternatives of one context: `unless: [{context: nvidia}, 'ZLUDA|macOS']`.
The matcher's filter of CUDA-prefixed status codes (kb/matcher.py) reads the same definition.

Every context is searched over the lines around a match (kb/scan.py reads each stretch of a
text once per regex), so each alternative starts with a literal, not with a repeat: the regex
engine moves from position to position cheaply.
"""

from __future__ import annotations

import re

# A line or a prompt line that proves there is NO NVIDIA tool is no NVIDIA evidence:
#   bash: nvidia-smi: command not found          /bin/sh: 1: nvidia-smi: not found
#   Command 'nvidia-smi' not found, but ...      'nvidia-smi' is not recognized as an ...
#   nvidia-smi : The term 'nvidia-smi' is not recognized ...   (PowerShell)
#   FileNotFoundError: [Errno 2] No such file or directory: 'nvidia-smi'
#   zsh: command not found: nvidia-smi           which: no nvidia-smi in (...)
# and a prompt line (`$ nvidia-smi`, `# nvidia-smi -L`, `PS C:\> nvidia-smi`) whose next line
# (after at most one blank line) is such a line. A prompt followed by nvidia-smi's table still
# counts: the table's own lines ("NVIDIA-SMI 550.54", "CUDA Version: 12.4") do.
#
# Every look-around after a found name reads a bounded stretch (the shells' messages put the
# words within a few dozen characters of the name; a prompt line is short): an unbounded
# `[^\n]*` read the rest of the line once per occurrence, quadratic in a long line of them
# (a 0.35 MB line of "nvidia-smi: not found " took 56 s, and the matcher's CUDA-prefix filter
# searches the whole text).
_MISSING = r"(?:not found|not recognized)"
_NEXT_LINE_MISSING = (
    r"[^\n]{0,100}\n(?:[ \t\r]*\n)?[^\n]{0,100}?(?:nvidia-smi[^\n]{0,60}?"
    + _MISSING
    + r"|(?:command not found|Unknown command): nvidia-smi|No such file or directory: 'nvidia-smi'"
    + r"|which: no nvidia-smi\b|nvidia-smi: No such file or directory)"
)
# A quoted name is a program naming the tool (a Python traceback's source line
# `subprocess.check_output(["nvidia-smi", ...])` above "FileNotFoundError: ... 'nvidia-smi'",
# `shutil.which("nvidia-smi")`), on any machine: no evidence, except Python's CalledProcessError
# ("Command '['nvidia-smi', '-L']' returned non-zero exit status 9."): the tool ran (127 is the
# shell's "not found"). bash's "bash: /usr/bin/nvidia-smi: No such file or directory" (a hashed
# or typed path that is gone) is a missing tool too.
_NVIDIA_SMI = (  # the literal first, then what precedes it (a quick fail on every other "n")
    r"nvidia-smi(?<!['\"]nvidia-smi)(?<!command not found: nvidia-smi)"
    r"(?<!Unknown command: nvidia-smi)(?<!which: no nvidia-smi)"
    r"(?![^\n]{0,60}?" + _MISSING + r"|: No such file or directory|" + _NEXT_LINE_MISSING + r")"
    + r"|nvidia-smi(?:(?<=Command '\['nvidia-smi)|(?<=Command 'nvidia-smi))"
    + r"(?=[^\n]{0,300}?' returned non-zero exit status (?!127\b)\d)"
)

# An NVIDIA machine: its driver tool or driver, its cards by name, CUDA's device lines.
NVIDIA = (
    r"(?=[nNGRQTCD])(?:"
    + _NVIDIA_SMI
    # nvidia-smi's table header ("| NVIDIA-SMI 550.54.14  Driver Version: ...  CUDA Version:
    # 12.4 |"; also its "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA
    # driver": the tool is there), the kernel driver (NVRM: lines, nvidia.ko)
    + r"|NVIDIA-SMI|CUDA Version: \d|\bNVRM\b|nvidia\.ko\b"
    # consumer and workstation cards
    + r"|GeForce|\b[RG]TX\s?\d|Quadro|\bTesla\s+[A-Z]?\d"
    # ggml's CUDA device line ("  Device 0: NVIDIA GeForce RTX 3090, compute capability 8.6"),
    # also with a name without NVIDIA ("Device 0: Tesla V100-SXM2-16GB, compute capability
    # 7.0"); a ROCm build's line names an AMD GPU (a Vega reports "compute capability 9.0")
    # (not an empty name: "Device 0: , compute capability 9.0" is a ROCm build's MI100 in
    # llama.cpp of early 2024, tests/fixtures/healthy/llama.cpp-8x-mi100-slurm-...)
    + r"|\bDevice \d+: (?:NVIDIA"
    + r"|(?!AMD|Radeon|gfx|Instinct|[ \t]*,)[^\n]{0,100}?compute capability \d)"
    # data-centre and workstation cards as `nvidia-smi -L` ("GPU 0: NVIDIA H100 80GB HBM3
    # (UUID: ...)") and torch.cuda.get_device_name ("NVIDIA A100-SXM4-80GB", "NVIDIA L40S",
    # "NVIDIA RTX A6000") name them
    + r"|\bGPU \d+: NVIDIA\b|\bNVIDIA (?:[ABHLTV]\d{1,3}[A-Z]?|G[HB]\d{3}|TITAN|DGX|RTX)\b"
    # lspci's display line names a data-centre card after its chip ("3D controller: NVIDIA
    # Corporation GH100 [H100 SXM5 80GB]"); its audio and bridge functions name no product
    + r"|NVIDIA Corporation \w+ \[(?:[ABHLTV]\d{1,3}|G[HB]\d{3})"
    + r")"
)

CONTEXTS: dict[str, str] = {"nvidia": NVIDIA}

NVIDIA_MACHINE = re.compile(NVIDIA)
