"""Review 26C's findings on round 26's VM/Windows entries (r26-g9), each on constructed inputs
(marked so): the lines are built from the entries' reports and amdgpu's format strings, not
captured as a whole."""

from __future__ import annotations

from rocmprov.kb import load_table
from rocmprov.kb.matcher import Match, analyse

NO_ACK = "kernel.sriov-vf-no-ack-from-pf"
CONTINUE = "kernel.sriov-vf-pf-ack-continue"
VFIO = "kernel.vfio-reset-method-unsupported"


def _real(text: str) -> list[Match]:
    return [m for m in analyse(text).matches if not m.harmless]


def test_sriov_continue_alone_is_a_lower_symptom_and_give_up_is_the_failed_init() -> None:
    """amdgpu's mailbox (mxgpu_ai.c / mxgpu_nv.c) prints ", continue" and goes on; ", give up"
    and "." (mxgpu_vi.c) return the error. Constructed inputs."""
    dev = "amdgpu 0000:3b:03.6: "
    alone = _real(dev + "Doesn't get ack from pf, continue\n")
    assert [m.id for m in alone][:1] == [CONTINUE] and NO_ACK not in [m.id for m in alone]
    assert alone[0].kind == "symptom" and "carries on" in alone[0].cause
    for failed in (
        dev + "Doesn't get ack from pf, give up\n",
        dev + "Doesn't get ack from pf.\n",
        dev + "Doesn't get ack from pf, continue\n" + dev + "Fatal error during GPU init\n",
        dev + "Doesn't get ack from pf, continue\n" + dev + "Doesn't get ack from pf, give up\n",
    ):
        ids = [m.id for m in _real(failed)]
        assert NO_ACK in ids and CONTINUE not in ids, failed


def test_vfio_reset_method_blames_vendor_reset_only_for_device_specific() -> None:
    """Constructed inputs in the form of the entry's fixture (vendor-reset#46)."""
    for method in ("acpi", "flr"):
        m = _real(f"vfio-pci 0000:0f:00.0: Unsupported reset method '{method}'\n")[0]
        assert m.id == VFIO and m.condition == "" and "vendor-reset" not in m.cause
        assert "vendor-reset" not in m.title
    m = _real("vfio-pci 0000:0f:00.0: Unsupported reset method 'device_specific'\n")[0]
    assert m.id == VFIO and m.condition.startswith("the method is device_specific")
    assert "vendor-reset" in m.fix


def test_hyperv_gpu_p_entry_is_gone() -> None:
    """Its only report was an NVIDIA card under Hyper-V on Windows (no AMD source)."""
    ids = {e.id for e in load_table().entries}
    assert "kernel.hyperv-gpu-p-device-assignment-policy" not in ids


def test_wsl_dxg_noise_and_out_of_resources_sources() -> None:
    """The dxg noise entry's cause claims no more than its NVIDIA-host reports; the WSL
    out-of-resources entry cites rocm-systems PR #1317, not an unverified release tag."""
    table = {e.id: e for e in load_table().entries}
    noise = table["noise.wsl-dxgkio-ioctl-failed"]
    assert "whatever the GPU" in noise.cause and "not why ROCm fails" in noise.cause
    wsl = table["wsl.unsupported-distro-out-of-resources"]
    assert "https://github.com/ROCm/rocm-systems/pull/1317" in wsl.sources
    assert not any("releases/tag" in s for s in wsl.sources) and "7.2.3" not in wsl.cause


def test_directml_plugin_hresult_wording() -> None:
    """tensorflow-directml-plugin#359's line, its HRESULT changed (constructed)."""
    line = "F tensorflow/c/logging.cc:43] HRESULT failed with 0x887A0005: "
    assert _real(line + "dml_device_->GetDeviceRemovedReason()\n")[0].id == (
        "framework.directml-device-removed"
    )
