# ruff: noqa: E501  (the log lines are quoted verbatim, at their own length)
"""Session 29 E: last session's leftovers in the table.

Each text is real output, verbatim from the source named above it (trimmed at line
boundaries), or a message as the program's source prints it (said so above it). Every test here
failed on 35bba64.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from rocmprov.kb import load_table, match
from rocmprov.kb.lineends import normalise
from rocmprov.kb.similar import suggest

TABLE = load_table()


def _ids(text: str) -> list[str]:
    return [m.id for m in match(text, table=TABLE)]


def _real(text: str) -> list[str]:
    return [m.id for m in match(text, table=TABLE) if not m.harmless]


def _similar_real(text: str) -> list[str]:
    """What explain's similarity tier names as a real cause (over the lines no harmless match
    covers; nothing when a real cause matched)."""
    text = normalise(text)
    return [s.id for s in suggest(text, match(text, table=TABLE), TABLE) if not s.harmless]


# item 1: lines of machines without an AMD GPU that the similarity tier called AMD causes.
# source URL -> (text, the AMD entry the tier named, the harmless entry that answers now)
NON_AMD: dict[str, tuple[str, str, str]] = {
    # vLLM's CUDA wheel on a CPU-only host (Pixtral on the CPU)
    "https://github.com/vllm-project/vllm/issues/8693": (
        r"""python3 main.py
WARNING 09-21 15:31:18 _custom_ops.py:18] Failed to import from vllm._C with ImportError('libcuda.so.1: cannot open shared object file: No such file or directory')
INFO 09-21 15:31:19 config.py:1653] Downcasting torch.float32 to torch.float16.
""",
        "llm.sglang-cuda-sgl-kernel-on-rocm",
        "noise.vllm-cuda-ops-import-no-nvidia-driver",
    ),
    # the quickstart server with --device=cpu (a comment of the thread)
    "https://github.com/vllm-project/vllm/issues/6225": (
        r"""$ pip freeze | grep vllm
vllm==0.6.2
$ vllm serve facebook/opt-125m --port 19000 --device=cpu
WARNING 10-09 13:39:15 _custom_ops.py:18] Failed to import from vllm._C with ImportError('libcuda.so.1: cannot open shared object file: No such file or directory')
INFO 10-09 13:39:18 api_server.py:526] vLLM API server version 0.6.1.dev238+ge2c6e0a82
""",
        "llm.sglang-cuda-sgl-kernel-on-rocm",
        "noise.vllm-cuda-ops-import-no-nvidia-driver",
    ),
    # NVIDIA GPU Operator docs (Confidential Containers troubleshooting): a pod pending on the
    # NVIDIA passthrough resource
    "https://github.com/NVIDIA/cloud-native-docs/blob/52dcb7b8d956784344e241df476de17094a4574c/confidential-containers/troubleshooting.rst#L357": (
        r"""   Events:
     Type     Reason   Age   From      Message
     ----     ------   ---   ----      -------
     Warning  FailedScheduling  ...  default-scheduler   0/1 nodes are available: 1 Insufficient nvidia.com/pgpu.
""",
        "kubernetes.insufficient-amd-gpu",
        "noise.kubernetes-insufficient-nvidia-resource",
    ),
}


@pytest.mark.parametrize("url", sorted(NON_AMD))
def test_no_amd_cause_is_named_for_a_non_amd_line(url: str) -> None:
    text, amd, _ = NON_AMD[url]
    assert amd not in _ids(text) and _real(text) == [], (url, _ids(text))
    assert _similar_real(text) == [], (url, _similar_real(text))


@pytest.mark.parametrize("url", sorted(NON_AMD))
def test_the_harmless_reading_answers_first(url: str) -> None:
    text, _, harmless = NON_AMD[url]
    assert _ids(text)[:1] == [harmless], (url, _ids(text))


def test_the_vllm_entry_reads_the_cpu_host_but_not_a_rocm_one() -> None:
    """With ROCm named around (a ROCm torch) the line is not the CPU host's harmless one."""
    text = NON_AMD["https://github.com/vllm-project/vllm/issues/8693"][0]
    assert "noise.vllm-cuda-ops-import-no-nvidia-driver" in _ids(text)
    rocm = "PyTorch version: 2.4.0+rocm6.1\n" + text
    assert "noise.vllm-cuda-ops-import-no-nvidia-driver" not in _ids(rocm)


def test_the_kubernetes_entry_reads_nvidia_resources_not_amd_ones() -> None:
    """amd.com/gpu keeps its own cause; only NVIDIA's resources are harmless here."""
    text = NON_AMD[sorted(NON_AMD)[0]][0]
    assert "noise.kubernetes-insufficient-nvidia-resource" in _ids(text)
    amd = text.replace("nvidia.com/pgpu", "amd.com/gpu")
    assert _ids(amd)[:1] == ["kubernetes.insufficient-amd-gpu"], _ids(amd)


# item 3: dkms's build-failure line with no module named near it
DKMS_GENERIC = "dkms.module-build-failed"
FIXTURES = Path(__file__).resolve().parent / "fixtures"


def _fixture(path: Path) -> str:
    return path.read_text(encoding="utf-8").partition("\n---\n")[2]


def test_a_bare_bad_return_status_line_gets_the_generic_dkms_symptom() -> None:
    # https://github.com/fmorgner/dev-cyber/issues/9, cut above dkms's "Consult" line
    text = (
        "==> dkms install --no-depmod cyber/42.1729.1939 -k 6.17.6-zen1-1-zen\n\n"
        "Error! Bad return status for module build on kernel: 6.17.6-zen1-1-zen (x86_64)\n"
    )
    assert _real(text) == [DKMS_GENERIC], _ids(text)
    found = match(text, table=TABLE)[0]
    assert "6.17.6-zen1-1-zen" in found.fix and "amdgpu" not in found.cause


def test_the_generic_dkms_entry_is_never_listed_beside_a_dkms_cause_of_the_same_line() -> None:
    """Over every fixture: where a specific DKMS cause explains dkms's failure line, the generic
    "which module, the line does not say" is superseded (review 29E finding 4: it was listed
    beside them on 13 fixtures); it stays where it is alone."""
    alone = 0
    for path in sorted(FIXTURES.glob("kb*/*.txt")):
        if "heldout" in path.parent.name:
            continue
        found = [m.id for m in match(_fixture(path), table=TABLE) if not m.harmless]
        if DKMS_GENERIC not in found:
            continue
        others = [i for i in found if i.startswith("dkms.") and i != DKMS_GENERIC]
        assert others == [], (path.name, found)
        alone += 1
    assert alone >= 1, alone


def test_amdgpu_s_dkms_failure_names_amdgpu_s_cause_without_the_generic_one() -> None:
    """Review 29E finding 4 (ROCm/amdgpu#192, the table's fixture): the line names
    /var/lib/dkms/amdgpu/, so "which module, the line does not say" must not follow it."""
    found = _real(_fixture(FIXTURES / "kb/dkms.amdgpu-build-failed.txt"))
    assert found[:1] == ["dkms.amdgpu-build-failed"] and DKMS_GENERIC not in found, found


def test_nvidia_s_bare_dkms_failure_is_a_dkms_failure_not_amdgpu_s() -> None:
    # https://github.com/M-Bab/linux-kernel-amdgpu-binaries/issues/101 (an NVIDIA module's
    # build on an "...amdgpu.ubuntu" kernel), its last two lines
    text = (
        "ERROR (dkms apport): kernel package linux-headers-5.13.18-21.09.16.amdgpu.ubuntu is not "
        "supported\n"
        "Error! Bad return status for module build on kernel: 5.13.18-21.09.16.amdgpu.ubuntu "
        "(x86_64)\n"
    )
    assert _real(text) == [DKMS_GENERIC], _ids(text)
    nvidia = _fixture(FIXTURES / "kb-wordings/dkms.other-module-build-failed.nvidia-bad-return-status.txt")
    found = _real(nvidia)
    assert found[:1] == ["dkms.other-module-build-failed"] and "dkms.amdgpu-build-failed" not in found
    assert DKMS_GENERIC not in found, found  # superseded by the named module's cause


# item 2: what xFormers' memory_efficient_attention says when its extension did not load, on
# hosts with no AMD GPU: source URL -> text
XFORMERS_AMD = "framework.xformers-wheel-not-for-this-torch"
XFORMERS_NON_AMD = "noise.xformers-extensions-not-loaded-non-amd-host"
XFORMERS: dict[str, str] = {
    # an RTX 5090 on Windows (later releases' operator names)
    "https://github.com/IgorAherne/trellis-stable-projectorz/issues/52": r"""04:42:20 - ERROR - Error processing UI generation request: 500: No operator found for `memory_efficient_attention_forward` with inputs:
      query       : shape=(1, 1374, 16, 64) (torch.float16)
      key         : shape=(1, 1374, 16, 64) (torch.float16)
      value       : shape=(1, 1374, 16, 64) (torch.float16)
      attn_bias   : <class 'NoneType'>
      p           : 0.0
`fa3F@0.0.0` is not supported because:
    xFormers wasn't build with CUDA support
    operator wasn't built - see `python -m xformers.info` for more info
`fa2F@0.0.0` is not supported because:
    xFormers wasn't build with CUDA support
    operator wasn't built - see `python -m xformers.info` for more info
`cutlassF-pt` is not supported because:
    xFormers wasn't build with CUDA support
""",
    # the Colab notebooks' NVIDIA GPUs, an older release
    "https://github.com/TheLastBen/fast-stable-diffusion/discussions/387": (
        "RuntimeError: No such operator xformers::efficient_attention_forward_generic - did you "
        "forget to build xformers with 'python setup.py develop'?\n"
    ),
}


@pytest.mark.parametrize("url", sorted(XFORMERS))
def test_xformers_unloaded_operators_are_not_an_amd_cause_without_amd_named(url: str) -> None:
    text = XFORMERS[url]
    assert _real(text) == [] and _similar_real(text) == [], (url, _ids(text), _similar_real(text))
    assert _ids(text)[:1] == [XFORMERS_NON_AMD], (url, _ids(text))
    # under a ROCm torch's version the line is not the harmless one
    rocm = "torch 2.3.1+rocm6.0\n" + text
    assert XFORMERS_NON_AMD not in _ids(rocm), _ids(rocm)


def test_xformers_older_operator_lines_under_a_rocm_torch_are_the_amd_cause() -> None:
    """Releases before 0.0.25 say "wasn't build with CUDA support" on any torch; their operator
    names (and "No such operator") with a ROCm torch named are the AMD cause."""
    for text in (XFORMERS["https://github.com/TheLastBen/fast-stable-diffusion/discussions/387"],
                 OLD_NAMES):  # fmt: skip
        rocm = "torch 2.3.1+rocm6.0\n" + text
        assert _real(rocm)[:1] == [XFORMERS_AMD], _ids(rocm)


# Review 29E finding 2: from 0.0.25 xformers/ops/fmha/common.py appends "xFormers wasn't build
# with CUDA support" only when torch.version.hip is None
# (https://github.com/facebookresearch/xformers/blob/9f6abadabdec17cd4b5c301632a44bf8216a7f35/xformers/ops/fmha/common.py#L313),
# and fa2F@/fa3F@/cutlassF-pt exist only from 0.0.28: those lines come from a non-ROCm torch.
# Operator lines as the dispatch prints them (names as common.py/flash.py/cutlass.py spell them,
# the version filled with ordinary values); the rest of the message as in the fixtures.
OLD_NAMES = (
    "`flshattF@v2.3.6` is not supported because:\n    xFormers wasn't build with CUDA support\n"
    "`cutlassF` is not supported because:\n    xFormers wasn't build with CUDA support\n"
)
NEW_NAMES = {
    "fa2F@v2.5.7-pt": "`fa2F@v2.5.7-pt` is not supported because:\n    xFormers wasn't build with CUDA support\n",
    "fa2F@2.8.3": "`fa2F@2.8.3` is not supported because:\n    xFormers wasn't build with CUDA support\n",
    "cutlassF-blackwell": "`cutlassF-blackwell` is not supported because:\n    xFormers wasn't build with CUDA support\n",
    "trellis#52": XFORMERS["https://github.com/IgorAherne/trellis-stable-projectorz/issues/52"],
}


@pytest.mark.parametrize("name", sorted(NEW_NAMES))
def test_xformers_0_0_28_operator_names_are_never_the_rocm_torch_cause(name: str) -> None:
    text = NEW_NAMES[name]
    assert _ids(text)[:1] == [XFORMERS_NON_AMD], (name, _ids(text))
    rocm = "torch 2.3.1+rocm6.0\n" + text
    assert XFORMERS_AMD not in _ids(rocm), (name, _ids(rocm))


# Review 29E finding 3: torch's collect_env prints "HIP runtime version: N/A" on every CUDA or
# CPU build, and a Ryzen APU's CPU name says "with Radeon Graphics": neither is an AMD GPU.
# The collect_env lines: tests/fixtures/healthy/nvidia-torch-collect-env-2.0.1-cu117-windows-
# gtx-1050ti.txt (pytorch/pytorch#51858, verbatim); the CPU name is a real model string
# (composed here with the fixtures' own xFormers and JAX lines: the point is the context).
COLLECT_ENV = _fixture(FIXTURES / "healthy/nvidia-torch-collect-env-2.0.1-cu117-windows-gtx-1050ti.txt")
RYZEN = "Model name:                      AMD Ryzen 7 5800H with Radeon Graphics\n"


@pytest.mark.parametrize("context", ["collect_env", "ryzen"])
def test_collect_env_hip_na_and_a_ryzen_cpu_name_are_not_amd_evidence(context: str) -> None:
    around = COLLECT_ENV if context == "collect_env" else RYZEN
    assert "HIP runtime version: N/A" in COLLECT_ENV
    for line in (NEW_NAMES["trellis#52"], XFORMERS["https://github.com/TheLastBen/fast-stable-diffusion/discussions/387"]):
        text = around + line
        assert _real(text) == [] and _ids(text)[:1] == [XFORMERS_NON_AMD], (context, _ids(text))
    jax = around + _fixture(FIXTURES / "kb/noise.jax-cpu-jaxlib-nvidia-gpu-may-be-present.txt")
    assert _real(jax) == [], (context, _ids(jax))
    # an AMD GPU's name is still AMD evidence
    amd = "GPU models and configuration: AMD Radeon RX 7900 XTX\n" + line
    assert _real(amd)[:1] == [XFORMERS_AMD], _ids(amd)


def test_the_twin_s_cause_and_fix_name_the_misnamed_windows_extension() -> None:
    """Review 29E finding 5: trellis-stable-projectorz#52 was fixed by renaming `pyd` to
    `_C.pyd` (xformers#1272), not by another wheel; the NVIDIA report is not an AMD source."""
    twin = next(e for e in TABLE.entries if e.id == XFORMERS_NON_AMD)
    assert "_C.pyd" in twin.cause and "_C.pyd" in twin.fix
    assert "https://github.com/facebookresearch/xformers/issues/1272" in twin.sources
    amd = next(e for e in TABLE.entries if e.id == XFORMERS_AMD)
    assert not any("fast-stable-diffusion" in u or "qiita.com" in u for u in amd.sources), amd.sources


# item 4: a file of a repository is cited at a commit, with its line
def test_the_ras_entry_cites_files_at_a_commit_and_line() -> None:
    entry = next(e for e in TABLE.entries if e.id == "kernel.ras-uncorrectable-error")
    blobs = [u for u in entry.sources if "/blob/" in u]
    assert len(blobs) >= 2
    for url in blobs:
        assert re.search(r"/blob/[0-9a-f]{40}/[^#]+#L\d+$", url), url


# item 5: JAX's CPU fallback with AMD named further than 10 lines away. Each text is a real
# JAX line (the fixtures' own), under a rocminfo agent line and 20 lines of other output
# (composed here: the point is the distance)
ROCMINFO = "  Name:                    gfx1100\n" + "".join(f"step {i}: loss=0.{i:02d}\n" for i in range(20))
JAX_FALLBACK = "framework.jax-no-gpu-backend-cpu-fallback"
JAX_LINES: dict[str, tuple[str, str]] = {
    # JAX's Colab CPU test notebook: the fallback, then the CPU device it uses
    "tests/fixtures/kb/noise.jax-cpu-fallback-cpu-or-nvidia-host.txt": (JAX_FALLBACK, "noise.jax-cpu-fallback-cpu-or-nvidia-host"),
    # the later wording (dire-jax#14), which WSL2's /dev/dxg also brings about
    "tests/fixtures/kb/noise.jax-cpu-jaxlib-nvidia-gpu-may-be-present.txt": (JAX_FALLBACK, "noise.jax-cpu-jaxlib-nvidia-gpu-may-be-present"),
    # xla_bridge's start-up probe of a CUDA jaxlib (multinerf#12)
    "tests/fixtures/kb-wordings/noise.jax-backend-probe-not-found.rocm-probe-cuda-platforms.txt": ("framework.jax-rocm-backend-not-registered", "noise.jax-backend-probe-not-found"),
}


@pytest.mark.parametrize("path", sorted(JAX_LINES))
def test_jax_cpu_fallback_with_amd_named_20_lines_away_is_the_amd_cause(path: str) -> None:
    line = _fixture(FIXTURES.parent.parent / path)
    real, harmless = JAX_LINES[path]
    assert _ids(line)[:1] == [harmless], _ids(line)  # alone: the harmless reading
    text = ROCMINFO + line
    assert _real(text)[:1] == [real] and harmless not in _ids(text), _ids(text)


# Review 29E finding 1: a CPU jaxlib (0.4.x) on an NVIDIA host logs its own probes of 'cuda'
# and 'rocm' at INFO, then the NVIDIA warning. Lines 1-3 verbatim from google-research/t5x#1286
# (an NVIDIA host), line 4 verbatim from sanchit-gandhi/whisper-jax#211: composed, in the order
# jax 0.4.25's xla_bridge prints them (L701-704, then L734-743). The probe's quoted 'rocm' is
# no AMD evidence.
JAX_NVIDIA = """I0513 15:22:19.102880 139889676502848 xla_bridge.py:455] Unable to initialize backend 'cuda': module 'jaxlib.xla_extension' has no attribute 'GpuAllocatorConfig'
I0513 15:22:19.102970 139889676502848 xla_bridge.py:455] Unable to initialize backend 'rocm': module 'jaxlib.xla_extension' has no attribute 'GpuAllocatorConfig'
I0513 15:22:19.103725 139889676502848 xla_bridge.py:455] Unable to initialize backend 'tpu': INVALID_ARGUMENT: TpuPlatform is not available.
WARNING:2025-06-15 17:04:55,449:jax._src.xla_bridge:791: An NVIDIA GPU may be present on this machine, but a CUDA-enabled jaxlib is not installed. Falling back to cpu.
"""
GPU_ALLOC = "tests/fixtures/kb-wordings/noise.jax-backend-probe-not-found.cpu-jaxlib-gpuallocatorconfig.txt"


def test_jax_s_own_rocm_probe_is_no_amd_evidence_for_the_nvidia_warning() -> None:
    assert _real(JAX_NVIDIA) == [], _ids(JAX_NVIDIA)
    assert "noise.jax-cpu-jaxlib-nvidia-gpu-may-be-present" in _ids(JAX_NVIDIA)
    assert _similar_real(JAX_NVIDIA) == [], _similar_real(JAX_NVIDIA)


def test_a_cpu_jaxlib_s_rocm_probe_is_the_rocm_cause_only_with_amd_named() -> None:
    """maxim#32's probe lines alone are harmless; with a gfx agent 20 lines above, the 'rocm'
    probe is framework.jax-rocm-backend-not-registered."""
    probe = "".join(_fixture(FIXTURES.parent.parent / GPU_ALLOC).splitlines(keepends=True)[:2])
    assert _real(probe) == [] and _ids(probe)[:1] == ["noise.jax-backend-probe-not-found"], _ids(probe)
    amd = ROCMINFO + probe
    assert _real(amd)[:1] == ["framework.jax-rocm-backend-not-registered"], _ids(amd)
