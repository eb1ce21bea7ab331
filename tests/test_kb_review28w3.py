# ruff: noqa: E501  (the log lines are quoted verbatim, at their own length)
"""Session 28 W3: lines that got an AMD answer on machines that are not AMD GPU hosts.

Each text is a real error a user pasted from an NVIDIA, Windows, macOS or CPU-only machine,
verbatim from the source named above it (trimmed at line boundaries). The AMD/ROCm cause of the
entry that used to answer may no longer be named, neither by the matcher nor by the similarity
tier as explain runs it (over the lines no harmless match covers); the harmless reading of
the line on such a host answers first.
"""

from __future__ import annotations

import pytest

from rocmprov.kb import load_table, match
from rocmprov.kb.lineends import normalise
from rocmprov.kb.similar import suggest

TABLE = load_table()

# source URL -> (text, the AMD entry that answered before, the harmless entry that answers now)
TEXTS: dict[str, tuple[str, str, str]] = {
    # CPU-only Windows host (the maintainer: the warning came from having no GPU)
    "https://github.com/deepseek-ai/DeepSeek-Coder/issues/97": (
        r"""bin D:\miniconda3\envs\DeepSeek\lib\site-packages\bitsandbytes\libbitsandbytes_cpu.so
D:\miniconda3\envs\DeepSeek\lib\site-packages\bitsandbytes\cextension.py:34: UserWarning: The installed version of bitsandbytes was compiled without GPU support. 8-bit optimizers, 8-bit multiplication, and GPU quantization are unavailable.
  warn("The installed version of bitsandbytes was compiled without GPU support. "
""",
        "framework.bitsandbytes-cpu-only-build",
        "noise.bitsandbytes-cpu-build-non-amd-host",
    ),
    # an RTX 4090 on Windows (`python -m bitsandbytes`)
    "https://github.com/jllllll/bitsandbytes-windows-webui/issues/15": (
        r""">python -m bitsandbytes


\Roaming\Python\Python310\site-packages\bitsandbytes\cextension.py:34: UserWarning: The installed version of bitsandbytes was compiled without GPU support. 8-bit optimizers, 8-bit multiplication, and GPU quantization are unavailable.
  warn("The installed version of bitsandbytes was compiled without GPU support. "
function 'cadam32bit_grad_fp32' not found
""",
        "framework.bitsandbytes-cpu-only-build",
        "noise.bitsandbytes-cpu-build-non-amd-host",
    ),
    # a Mac (/Users/ home, the CUDA libraries of the wheel listed)
    "https://github.com/bitsandbytes-foundation/bitsandbytes/issues/853": (
        r"""UserWarning: The installed version of bitsandbytes was compiled without GPU support. 8-bit optimizers, 8-bit multiplication, and GPU quantization are unavailable.
  warn("The installed version of bitsandbytes was compiled without GPU support. "
'NoneType' object has no attribute 'cadam32bit_grad_fp32'
++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++
++++++++++++++++++ BUG REPORT INFORMATION ++++++++++++++++++
++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++

++++++++++++++++++ /usr/local CUDA PATHS +++++++++++++++++++

+++++++++++++++ WORKING DIRECTORY CUDA PATHS +++++++++++++++
/Users/slackroo/Data_science/LLM/llm_venv/lib/python3.10/site-packages/bitsandbytes/libbitsandbytes_cuda115_nocublaslt.so
/Users/slackroo/Data_science/LLM/llm_venv/lib/python3.10/site-packages/bitsandbytes/libbitsandbytes_cuda111_nocublaslt.so
""",
        "framework.bitsandbytes-cpu-only-build",
        "noise.bitsandbytes-cpu-build-non-amd-host",
    ),
    # Windows, the CPU .dll loaded
    "https://github.com/bitsandbytes-foundation/bitsandbytes/issues/569": (
        r"""bin C:\Python\Python310\lib\site-packages\bitsandbytes\libbitsandbytes_cpu.dll
C:\Python\Python310\lib\site-packages\bitsandbytes\cextension.py:34: UserWarning: The installed version of bitsandbytes was compiled without GPU support. 8-bit optimizers, 8-bit multiplication, and GPU quantization are unavailable.
  warn("The installed version of bitsandbytes was compiled without GPU support. "
function 'cadam32bit_grad_fp32' not found
CUDA SETUP: Loading binary C:\Python\Python310\lib\site-packages\bitsandbytes\libbitsandbytes_cpu.dll...
""",
        "framework.bitsandbytes-cpu-only-build",
        "noise.bitsandbytes-cpu-build-non-amd-host",
    ),
    # xFormers built for another torch: a CPU torch on Windows (the maintainer: the CPU PyTorch)
    "https://github.com/open-mmlab/PIA/issues/30": (
        r"""(pia) PS E:\PIA> python inference.py --config=example/config/majic_girl.yaml
WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. xFormers was built for:
    PyTorch 2.1.2+cu121 with CUDA 1201 (you have 2.1.2+cpu)
""",
        "framework.xformers-wheel-not-for-this-torch",
        "noise.xformers-extensions-not-loaded-non-amd-host",
    ),
    # a CPU torch (a comment of the thread)
    "https://github.com/invoke-ai/InvokeAI/issues/4788": (
        r"""WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. xFormers was built for:
    PyTorch 2.0.1+cu118 with CUDA 1108 (you have 2.0.1+cpu)
    Python  3.10.11 (you have 3.10.11)
  Please reinstall xformers (see https://github.com/facebookresearch/xformers#installing-xformers)
  Memory-efficient attention, SwiGLU, sparse and more won't be available.
  Set XFORMERS_MORE_DETAILS=1 for more details
[2023-10-05 01:21:25,831]::[InvokeAI]::INFO --> Patchmatch initialized
""",
        "framework.xformers-wheel-not-for-this-torch",
        "noise.xformers-extensions-not-loaded-non-amd-host",
    ),
    # another CUDA torch on an RTX 3060 (Windows)
    "https://github.com/invoke-ai/InvokeAI/issues/6590": (
        r"""Launching Web UI with arguments: xformers
WARNING:xformers:WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. xFormers was built for:
    PyTorch 2.1.2+cu121 with CUDA 1201 (you have 2.0.1+cu118)
    Python  3.10.11 (you have 3.10.11)
    Please reinstall xformers (see https://github.com/facebookresearch/xformers#installing-xformers)
""",
        "framework.xformers-wheel-not-for-this-torch",
        "noise.xformers-extensions-not-loaded-non-amd-host",
    ),
    # a Mac M1 (a plain torch)
    "https://github.com/Vchitect/SEINE/issues/21": (
        r"""WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. xFormers was built for:
    PyTorch 2.0.1 with CUDA 1106 (you have 2.0.1)
    Python  3.9.16 (you have 3.9.16)
  Please reinstall xformers (see https://github.com/facebookresearch/xformers#installing-xformers)
  Memory-efficient attention, SwiGLU, sparse and more won't be available.
  Set XFORMERS_MORE_DETAILS=1 for more details
loading model
""",
        "framework.xformers-wheel-not-for-this-torch",
        "noise.xformers-extensions-not-loaded-non-amd-host",
    ),
    # another CUDA torch, then accelerate on the CPU (a comment of the thread)
    "https://github.com/facebookresearch/xformers/issues/800": (
        r"""WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. xFormers was built for:
    PyTorch 2.1.0+cu121 with CUDA 1201 (you have 2.1.0+cu118)
    Python  3.8.18 (you have 3.8.5)
  Please reinstall xformers (see https://github.com/facebookresearch/xformers#installing-xformers)
  Memory-efficient attention, SwiGLU, sparse and more won't be available.
  Set XFORMERS_MORE_DETAILS=1 for more details
10/15/2023 14:46:49 - INFO - __main__ - Distributed environment: NO
Num processes: 1
Process index: 0
Local process index: 0
Device: cpu
""",
        "framework.xformers-wheel-not-for-this-torch",
        "noise.xformers-extensions-not-loaded-non-amd-host",
    ),
}


@pytest.mark.parametrize("url", sorted(TEXTS))
def test_the_amd_cause_is_not_named_on_a_non_amd_host(url: str) -> None:
    text, amd, _ = TEXTS[url]
    found = match(text, table=TABLE)
    assert amd not in [m.id for m in found], (url, [m.id for m in found])
    assert [m.id for m in found if not m.harmless] == [], url
    near = suggest(normalise(text), found, TABLE)
    assert [s.id for s in near if not s.harmless] == [], (url, [s.id for s in near])


@pytest.mark.parametrize("url", sorted(TEXTS))
def test_the_harmless_reading_answers_first(url: str) -> None:
    text, _, harmless = TEXTS[url]
    found = match(text, table=TABLE)
    assert found and found[0].id == harmless, (url, [m.id for m in found])
