"""Session 25, task e5: the table's known leftovers. Each test is a case the base table
(8fb639f) answered wrongly. The inputs are written for the test (short, in the programs' real
formats as the entries' cited sources show them); they are not captures of real machines."""

from __future__ import annotations

from rocmprov.kb import match
from tests.kb_helpers import first as _first
from tests.kb_helpers import ids as _ids

_PTXAS = "ptxas fatal   : Value '{sm}' is not defined for option 'gpu-name'\n"
_TRACE = (
    "torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:\n"
    "RuntimeError: Internal Triton PTX codegen error: \n"
)
_BTOP = (
    "2025/03/02 (10:11:12) | INFO: Failed to load librocm_smi64.so, AMD GPUs will not be "
    "detected: librocm_smi64.so: cannot open shared object file: No such file or directory\n"
)






def test_sm_110_without_amd_context_is_not_a_rocm_torch_with_the_cuda_triton() -> None:
    """NVIDIA Thor is sm_110 since CUDA 13 (sm_101 before): a Triton carrying CUDA 12's ptxas
    rejects it on a Jetson. The base table told that user to reinstall pytorch-triton-rocm."""
    cuda_env = (  # torch's collect_env on a CUDA build names ROCm and HIP only as N/A
        "PyTorch version: 2.5.0\nCUDA used to build PyTorch: 12.6\n"
        "ROCM used to build PyTorch: N/A\nHIP runtime version: N/A\n"
    )
    for sm in ("sm_110", "sm_110a"):
        for context in ("", cuda_env, "Jetson AGX Thor Developer Kit\nGPU: AMD Radeon RX 7900\n"):
            text = context + _TRACE + _PTXAS.format(sm=sm)
            assert "framework.pip-torch-triton-pin-broken" not in _ids(text), context


def test_sm_110_beside_amd_evidence_is_still_the_cuda_triton_on_rocm_torch() -> None:
    for context in ("GPU: AMD Radeon RX 7900 XTX\n", "PyTorch version: 2.3.0+rocm6.0\n",
                    "  Name:                    gfx1100\n", "### ROCm Version\n\nROCm 6.0.0\n",
                    "ROCM used to build PyTorch: 6.0.32830\n"):  # fmt: skip
        for sm in ("sm_110", "sm_110a"):
            found = _first(context + _TRACE + _PTXAS.format(sm=sm))
            assert found is not None and found.id == "framework.pip-torch-triton-pin-broken"
            assert found.condition.startswith("torch.compile fails"), found.condition
    # the values no NVIDIA GPU has need no context
    found = _first(_TRACE + _PTXAS.format(sm="sm_94a"))
    assert found is not None and found.id == "framework.pip-torch-triton-pin-broken"


def test_a_system_installs_missing_hipcub_header_is_the_dev_package_not_the_wheels() -> None:
    """compiler.torch-extension-rocm-sdk-headers-not-found (TheRock's wheels) ranked above
    compiler.rocm-library-dev-headers-not-found on any hipcub/rocprim header."""
    text = (
        "/usr/bin/hipcc -x hip -I/opt/rocm/include -c src/sort.hip -o sort.o\n"
        "src/sort.hip:3:10: fatal error: 'hipcub/hipcub.hpp' file not found\n"
        "    3 | #include <hipcub/hipcub.hpp>\n"
    )
    found = _first(text)
    assert found is not None and found.id == "compiler.rocm-library-dev-headers-not-found"
    assert "compiler.torch-extension-rocm-sdk-headers-not-found" not in _ids(text)
    # the same header in a build on TheRock's wheels is still theirs
    text = (
        "/home/u/venv/lib/python3.12/site-packages/_rocm_sdk_core/bin/hipcc -x hip -c k.hip\n"
        "k.hip:2:10: fatal error: 'rocprim/rocprim.hpp' file not found\n"
    )
    found = _first(text)
    assert found is not None and found.id == "compiler.torch-extension-rocm-sdk-headers-not-found"


def test_dkms_add_of_a_version_with_no_source_folder_is_not_a_stale_registration() -> None:
    """dkms prints "Could not find module source directory" only in add_module(), after its
    check that the module/version is not registered yet (dkms.in), so it is never a stale
    entry; dkms.stale-amdgpu-tree claimed the amdgpu path line with the `dkms remove` fix."""
    text = (
        "$ sudo dkms add amdgpu/6.8.5-2041575\n"
        "Error! Could not find module source directory.\n"
        "Directory: /usr/src/amdgpu-6.8.5-2041575 does not exist.\n"
    )
    found = _first(text)
    assert found is not None and found.id == "dkms.module-source-dir-missing"
    assert "dkms.stale-amdgpu-tree" not in _ids(text)
    alone = _first("Directory: /usr/src/amdgpu-6.8.5-2041575 does not exist.\n")
    assert alone is not None and alone.id == "dkms.module-source-dir-missing"
    stale = _first(
        "Error! Could not locate dkms.conf file.\n"
        "File: /var/lib/dkms/amdgpu/6.8.5-2041575/source/dkms.conf does not exist.\n"
    )
    assert stale is not None and stale.id == "dkms.stale-amdgpu-tree"


def test_btops_rocm_smi_line_on_an_nvidia_or_intel_host_is_harmless() -> None:
    """btop logs the line on every Linux host without ROCm SMI; the base table gave the AMD
    install fix (amdsmi.btop-librocm-smi64-not-found or rocm.library-not-found) on NVIDIA and
    Intel hosts."""
    nvidia = "$ nvidia-smi -L\nGPU 0: NVIDIA GeForce RTX 4090 (UUID: GPU-5a1c)\n" + _BTOP
    intel = (
        "00:02.0 VGA compatible controller: Intel Corporation Alder Lake-P GT2 "
        "[Iris Xe Graphics] (rev 0c)\n" + _BTOP
    )
    for text in (nvidia, intel):
        assert _first(text) is None, _first(text)
        assert match(text)[0].id == "noise.btop-librocm-smi64-no-amd-gpu"


def test_btops_rocm_smi_line_with_an_amd_gpu_keeps_the_install_fix() -> None:
    hybrid = (
        "00:02.0 VGA compatible controller: Intel Corporation Raptor Lake-S GT1 "
        "[UHD Graphics 770] (rev 04)\n"
        "03:00.0 VGA compatible controller: Advanced Micro Devices, Inc. [AMD/ATI] Navi 32 "
        "[Radeon RX 7700 XT / 7800 XT] (rev ff)\n" + _BTOP
    )
    for text in (hybrid, _BTOP):
        found = _first(text)
        assert found is not None and found.id == "amdsmi.btop-librocm-smi64-not-found"


def test_both_wordings_of_a_migraphx_binding_for_another_python_are_one_entry() -> None:
    """release.migraphx-python-version-no-binding (ROCm 7: an empty module) and
    framework.migraphx-python-abi-mismatch (an older binding: undefined _Py symbol) were one
    cause with one fix, merged into the older id."""
    for text in (
        "AttributeError: module 'migraphx' has no attribute 'parse_onnx'\n",
        "ImportError: /opt/rocm-3.7.0/lib/migraphx.so: undefined symbol: _Py_ZeroStruct\n",
    ):
        found = _first(text)
        assert found is not None and found.id == "framework.migraphx-python-abi-mismatch"
    # the empty-module wording is answered by the kept entry alone (8fb639f answered it with the
    # merged-away id only): no second entry tells the same cause
    text = "AttributeError: module 'migraphx' has no attribute 'parse_onnx'\n"
    real = [m.id for m in match(text) if not m.harmless]
    assert real == ["framework.migraphx-python-abi-mismatch"]
