"""Review 26D: the program-prefix cut (tests/kbvariants.py) made prefixes optional; where the
same tail is printed after ANOTHER program's or driver's prefix with another meaning, the
pattern refuses that prefix (a look-behind) instead. The texts are constructed from the
programs' formats (amdgpu/radeon dev_info lines, the driver core's probe line, rocBLAS's and
hipSPARSELt's Tensile printers) to test the rule; they are not captured output."""

from __future__ import annotations

import pytest
from kb_helpers import ids

PROBE = "{driver}: probe of 0000:01:00.0 failed with error {err}"


@pytest.mark.parametrize("err, entry", [("-12", "kernel.probe-failed-enomem-bar"),
                                        ("-22", "kernel.probe-failed-einval")])  # fmt: skip
def test_another_driver_s_probe_line_is_not_amdgpu_s(err: str, entry: str) -> None:
    assert entry in ids(PROBE.format(driver="amdgpu", err=err))
    assert entry in ids(PROBE.format(driver="", err=err).removeprefix(": "))  # quoted bare
    for driver in ("nvme", "snd_hda_intel", "mlx5_core"):
        assert entry not in ids(PROBE.format(driver=driver, err=err)), driver


def test_amdgpu_refusing_an_si_gpu_is_not_radeon_stepping_aside() -> None:
    radeon = "[    3.1] radeon 0000:01:00.0: SI support disabled by module param"
    assert "noise.radeon-si-cik-disabled" in ids(radeon)
    assert "noise.radeon-si-cik-disabled" in ids("SI support disabled by module param")
    amdgpu = "[    3.1] amdgpu 0000:01:00.0: SI support disabled by module param"
    assert "noise.radeon-si-cik-disabled" not in ids(amdgpu)


def test_radeon_s_pci_config_reset_is_not_amdgpu_s() -> None:
    assert "kernel.pci-config-reset" in ids("[ 88.1] amdgpu 0000:03:00.0: GPU pci config reset")
    assert "kernel.pci-config-reset" in ids("GPU pci config reset")
    assert "kernel.pci-config-reset" not in ids("[ 88.1] radeon 0000:01:00.0: GPU pci config reset")


def test_only_rocblas_s_found_branch_is_the_kernel_launch_exception() -> None:
    tail = 'Tensile solution found, but exception thrown for { a_type: "f16_r", b_type: "f16_r" }'
    assert "rocblas.tensile-exception-thrown" in ids("rocBLAS error: " + tail)
    assert "rocblas.tensile-exception-thrown" in ids(tail)
    assert "rocblas.tensile-exception-thrown" not in ids("rocBLAS error: No " + tail)
    assert "rocblas.tensile-exception-thrown" not in ids("hipsparselt_error: " + tail)
