"""Review C4 of session 28's table (issue 28: `rocmprov explain`): each test is a finding of a
hostile read of round 28's framework and benign-line coverage, failing before its fix.

The log texts below are synthetic reproducers (the reviewer's counter-examples), built around
real program lines (torch's NumPy warning, the importing source lines named beside them);
they are not fixtures and quote no report beyond those lines."""

from __future__ import annotations

from pathlib import Path

from rocmprov.kb.matcher import analyse
from tests.kb_helpers import first as _first
from tests.kb_helpers import ids as _ids

FIXTURES = Path(__file__).parent / "fixtures" / "kb"
NUMPY = "framework.numpy-abi-mismatch"
TORCH_NUMPY = "noise.torch-failed-to-initialize-numpy"
CACHED = "framework.diffusers-hf-hub-cached-download-removed"
FUNCTIONAL = "framework.basicsr-torchvision-functional-tensor-removed"
PKG = "framework.setuptools70-pkg-resources-packaging"
FACTORY = "noise.tf-cuda-plugin-factory-already-registered"

# torch's non-fatal warning (torch/csrc/utils/tensor_numpy.cpp, TORCH_WARN at L84)
WARNING = (
    "/usr/lib/python3/dist-packages/torch/_subclasses/functional_tensor.py:258: UserWarning: "
    "Failed to initialize NumPy: _ARRAY_API not found (Triggered internally at "
    "../torch/csrc/utils/tensor_numpy.cpp:84.)\n"
)


def _body(path: Path) -> str:
    return path.read_text(encoding="utf-8", errors="replace").split("\n---\n", 1)[-1]


def test_torch_numpy_warning_changes_no_fixtures_first_answer() -> None:
    changed = []
    for path in sorted(FIXTURES.glob("*.txt")):
        text = _body(path)
        before = _first(text)
        if before is None or before.id == NUMPY:
            continue
        after = _first(WARNING + text)
        if after is None or after.id != before.id:
            changed.append((path.name, before.id, after.id if after else None))
    assert changed == []


def test_torch_numpy_warning_alone_is_a_harmless_line() -> None:
    assert _first(WARNING) is None
    assert TORCH_NUMPY in _ids(WARNING)
    api = WARNING.replace("_ARRAY_API not found", "module compiled against API version 0xf "
                          "but this version of numpy is 0xd")  # fmt: skip
    assert _first(api) is None and TORCH_NUMPY in _ids(api)
    # a module's own import failure stays the NumPy root cause
    text = (
        '  File "/usr/lib/python3/dist-packages/ompl/base/__init__.py", line 2, in <module>\n'
        "    from ompl.base._base import *\n"
        "AttributeError: _ARRAY_API not found\n"
        "ImportError: numpy.core._multiarray_umath failed to import\n"
    )
    top = _first(text)
    assert top is not None and top.id == NUMPY


# NON906/chara-searcher#5: sentence_transformers (<= 2.2.2) imports cached_download, not diffusers
SENTENCE = (
    '  File "D:\\AI\\stable-diffusion-webui\\venv\\lib\\site-packages\\sentence_transformers\\'
    'SentenceTransformer.py", line 12, in <module>\n'
    "    from huggingface_hub import HfApi, HfFolder, Repository, hf_hub_url, cached_download\n"
    "ImportError: cannot import name 'cached_download' from 'huggingface_hub' (D:\\AI\\"
    "stable-diffusion-webui\\venv\\lib\\site-packages\\huggingface_hub\\__init__.py)\n"
)


def test_cached_download_is_not_blamed_on_diffusers_without_diffusers() -> None:
    top = _first(SENTENCE)
    assert top is not None and top.id == CACHED
    assert "diffusers>=0.29" not in top.fix and not top.condition
    assert "last frame" in top.fix and "huggingface_hub<0.26" in top.fix
    assert "cached_download" in top.title


def test_cached_download_from_diffusers_gets_the_diffusers_fix() -> None:
    top = _first(_body(FIXTURES / f"{CACHED}.txt"))
    assert top is not None and top.id == CACHED
    assert top.condition and "diffusers>=0.29" in top.fix


# pytorchvideo 0.1.3, pytorchvideo/transforms/augmentations.py line 9
PYTORCHVIDEO = (
    '  File "/usr/local/lib/python3.10/dist-packages/pytorchvideo/transforms/augmentations.py",'
    " line 9, in <module>\n"
    "    import torchvision.transforms.functional_tensor as F_t\n"
    "ModuleNotFoundError: No module named 'torchvision.transforms.functional_tensor'\n"
)
# openai/CLIP before dcba3cb, clip/clip.py line 6
CLIP = (
    '  File "/home/user/stable-diffusion-webui/venv/lib/python3.10/site-packages/clip/clip.py",'
    " line 6, in <module>\n"
    "    from pkg_resources import packaging\n"
    "ImportError: cannot import name 'packaging' from 'pkg_resources' (/home/user/venv/lib/"
    "python3.10/site-packages/pkg_resources/__init__.py)\n"
)


def test_functional_tensor_patch_for_basicsr_only() -> None:
    top = _first(PYTORCHVIDEO)
    assert top is not None and top.id == FUNCTIONAL
    assert "degradations.py" not in top.fix and "last frame" in top.fix
    basicsr = _first(_body(FIXTURES / f"{FUNCTIONAL}.txt"))
    assert basicsr is not None and basicsr.condition and "degradations.py" in basicsr.fix


def test_pkg_resources_packaging_names_clip_and_the_importer() -> None:
    top = _first(CLIP)
    assert top is not None and top.id == PKG
    assert "CLIP" in top.fix and "dcba3cb" in top.fix and "last frame" in top.fix


def _codes(text: str) -> tuple[list[str], list[str]]:
    found = analyse(text).matches
    return [m.id for m in found if m.id.startswith("code.")], [m.id for m in found]


def test_harmless_line_explains_only_the_codes_inside_its_match() -> None:
    xformers = (
        "WARNING:xformers:A matching Triton is not available, some optimizations will not be "
        "enabled. Error caught was: HSA_STATUS_ERROR_INVALID_MEMORY_POOL\n"
    )
    codes, found = _codes(xformers)
    assert codes == ["code.hsa.HSA_STATUS_ERROR_INVALID_MEMORY_POOL"]
    assert "noise.xformers-matching-triton-not-available" in found
    old = ("Triton is not available, some optimizations will not be enabled. "
           "Error hipErrorInvalidKernelFile\n")  # fmt: skip
    assert _codes(old)[0] == ["code.hip.hipErrorInvalidKernelFile"]


def test_tensorflow_rocm_factory_refusals_are_harmless() -> None:
    text = _body(FIXTURES.parent / "kb-wordings" / f"{FACTORY}.rocm-build.txt")
    assert _first(text) is None and FACTORY in _ids(text)
    entry = next(m for m in analyse(text).matches if m.id == FACTORY)
    assert "CUDA build" not in entry.cause and "CUDA build" not in entry.title
