"""Review 26E (issue 28): the reviewer's counter-examples to r26-g11 and r26-g12. The texts are
constructed from the programs' formats (pacman's conflict question, Mesa's ac_llvm_util line,
dpkg's and rpm's file-conflict lines) to test the rules; they are not captured output."""

from __future__ import annotations

import pytest
from kb_helpers import first, ids

from rocmprov.kb import match

PRO = "apt.pacman-amdgpu-pro-opencl-conflict"
PACMAN = "apt.pacman-rocm-package-conflict"
Q = " are in conflict. Remove {}? [y/N]"


# constructed: amdgpu-pro conflicts that are not about OpenCL
@pytest.mark.parametrize("line", [
    ":: vulkan-amdgpu-pro and amdvlk" + Q.format("amdvlk"),
    "lib32-vulkan-amdgpu-pro and lib32-amdvlk" + Q.format("lib32-amdvlk"),
    "xf86-video-amdgpu and xserver-xorg-video-amdgpu-pro"
    + Q.format("xserver-xorg-video-amdgpu-pro"),
    ":: amdvlk and vulkan-radeon" + Q.format("vulkan-radeon") + "\nsee also amdgpu-pro",
])  # fmt: skip
def test_a_vulkan_or_xorg_amdgpu_pro_conflict_gets_no_opencl_or_hip_answer(line: str) -> None:
    found = ids(line)
    assert PRO not in found and PACMAN not in found, found


def test_the_amdgpu_pro_opencl_conflict_has_its_own_cause() -> None:
    # constructed, in pacman's format
    for line in (":: ocl-icd and amdgpu-pro-libopencl are in conflict (libcl)."
                 " Remove amdgpu-pro-libopencl? [y/N]",
                 "opencl-amd and amdgpu-pro-opencl are in conflict"):  # fmt: skip
        m = first(line)
        assert m is not None and m.id == PRO, line
        assert "hip-runtime" not in m.cause and "libcl" in m.cause


MESA = "mesa.amdgcn-target-not-registered"
AMDGCN = ("Cannot find target for triple amdgcn-- Unable to find target for this triple"
          " (no targets are registered)")  # fmt: skip


@pytest.mark.parametrize("text", [
    "$ glxinfo -B\nac_create_target_machine: " + AMDGCN + "\nSegmentation fault (core dumped)",
    "NixOS 24.11, no ROCm installed\n"
    "[1234:0922/101010.123:ERROR:gpu_init.cc] youtube-music: " + AMDGCN,
])  # fmt: skip
def test_a_plain_mesa_text_gets_the_generic_fix_not_amd_s_packages(text: str) -> None:
    m = first(text)
    assert m is not None and m.id == MESA
    assert "mesa-amdgpu-va-drivers" not in m.fix and "one Mesa build" in m.fix
    assert "mesa-amdgpu-va-drivers" not in m.cause


def test_amd_s_mesa_packages_keep_their_fix_when_rocm_is_named() -> None:
    m = first("fresh install of rocm 6.2.4 on Ubuntu 24.04, chrome crashes\nError: " + AMDGCN)
    assert m is not None and m.id == MESA and "mesa-amdgpu-va-drivers" in m.fix


FILE = "apt.rpm-rocm-file-conflict"


def test_hipcc_against_hipcc_nvidia_under_dpkg_keeps_the_choose_a_platform_fix() -> None:
    # constructed, in dpkg's format
    m = first("dpkg: error processing archive /var/cache/apt/archives/"
              "hipcc-nvidia_1.0.0.60103-122~22.04_amd64.deb (--unpack):\n"
              " trying to overwrite '/opt/rocm-6.1.3/bin/hipcc', which is also in package"
              " hipcc 1.0.0.60103-122~22.04")  # fmt: skip
    assert m is not None and m.id == FILE
    assert "Decide which platform" in m.fix and "dpkg -S" not in m.fix


def test_therock_rpm_wording_gets_no_dpkg_commands() -> None:
    # constructed, in rpm's format
    m = first("  file /opt/rocm/core-7.12/bin/miopen_gtest from install of"
              " amdrocm-dnn-test7.12-gfx120x-7.12.0-1.x86_64 conflicts with file from package"
              " amdrocm-dnn-dev7.12-gfx120x-7.12.0-1.x86_64")  # fmt: skip
    assert m is not None and m.id == FILE
    assert "dpkg" not in m.fix and "--replacefiles" in m.fix


def test_hip_nvidia_postinst_fix_cites_the_commit_it_names() -> None:
    m = first("/var/lib/dpkg/info/hip-runtime-nvidia.postinst: line 25: [: missing `]'")
    assert m is not None and m.id == "apt.hip-nvidia-postinst-syntax-error"
    assert "f9dccde4" in m.cause


def test_xnack_noise_does_not_call_rdna1_or_every_apu_xnack_less() -> None:
    line = "warning: xnack 'Off' was requested for a processor that does not support it!"
    m = [x for x in match(line) if x.id == "noise.xnack-requested-unsupported-processor"]
    assert m
    assert "RDNA 1/2/3" not in m[0].cause and "gfx1010" in m[0].cause
    assert "gfx803" in m[0].cause and "xuhuisheng" in m[0].cause
