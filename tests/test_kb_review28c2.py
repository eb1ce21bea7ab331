"""Review C2 of session 28's table (issue 28: `rocmprov explain`): the findings of a hostile read
of round 28's driver / firmware / container coverage, each failing on the table before its fix.

Blender prints "HIPEW initialization failed" on every start of a machine without the HIP runtime,
the kernel prints "kfd not supported on this ASIC" on every boot of a chip KFD never supported, and
dkms prints "Bad return status for module build" for any module: none is amdgpu's failure alone.
Texts are the fixtures' real lines (cut to fewer lines where a test says so), except where a test
says it fills a kernel format string.
"""

from __future__ import annotations

from pathlib import Path

from fixtureload import load
from kb_helpers import first, ids, known

from rocmprov.kb.table import load_table

FIX = Path(__file__).resolve().parent / "fixtures"
CYCLES = "container.cycles-hip-library-not-loaded"
KFD = "kfd.not-supported-on-this-asic"
DKMS = "dkms.amdgpu-build-failed"
IOMMU_V2 = "an APU whose KFD support needed the AMD IOMMUv2 driver"


def text(path: str) -> str:
    return load(FIX / path).text


def entry(entry_id: str):
    return load_table().by_id[entry_id]


# F1: the HIPEW line is a cause only with AMD evidence near it
BLENDER = text(f"kb/{CYCLES}.txt")


def test_the_hipew_line_with_an_amd_gpu_named_is_the_cycles_cause() -> None:
    found = first(BLENDER)
    assert found is not None and found.id == CYCLES


def test_the_hipew_line_alone_is_no_cause() -> None:
    # flathub#121's lines without the reporter's "AMD GPU as hardware": what any NVIDIA, Intel
    # or CPU-only Blender prints on start
    bare = "\n".join(ln for ln in BLENDER.splitlines() if "AMD GPU" not in ln)
    assert "HIPEW initialization failed" in bare
    assert CYCLES not in ids(bare)


# F2: "kfd not supported on this ASIC" is a healthy boot's line on chips KFD never supported
def test_a_mullins_display_boot_gets_no_kfd_cause() -> None:
    boot = text("healthy/dmesg-mullins-apu-kfd-not-supported-display-init.txt")
    assert "kfd not supported on this ASIC" in boot
    assert known(boot) == []


def test_the_kfd_line_beside_rocminfo_s_failure_is_still_the_cause() -> None:
    found = first(text(f"kb/{KFD}.txt"))
    assert found is not None and found.id == KFD


def test_the_kfd_line_alone_is_no_cause() -> None:
    line = next(ln for ln in text(f"kb/{KFD}.txt").splitlines() if "kfd not supported" in ln)
    assert KFD not in ids(line)


# F3: only GC 9.1.0 (Raven, Picasso) and 9.2.2 (Raven2) sat under KFD_SUPPORT_IOMMU_V2
RAVEN = text(f"kb-wordings/{KFD}.gc-ip-apu-iommuv2.txt")


def test_raven_s_gc_ip_line_gets_the_iommuv2_condition() -> None:
    found = first(RAVEN)
    assert found is not None and found.id == KFD
    assert found.condition.startswith(IOMMU_V2), found.condition
    assert "amd_iommu=off" not in found.fix


def test_renoir_and_vega12_gc_ip_lines_do_not_get_the_iommuv2_condition() -> None:
    # kgd2kfd_probe's "GC IP %06x %s not supported in kfd" filled with Renoir's and Vega 12's IP
    for gc in ("090300", "090201"):
        found = first(RAVEN.replace("GC IP 090100", f"GC IP {gc}"))
        assert found is not None and found.id == KFD
        assert not found.condition.startswith(IOMMU_V2), (gc, found.condition)
    assert "Renoir" not in entry(KFD).conditions[0].when


# F4: dkms's generic line is amdgpu's only with amdgpu's build named near it
MBAB = (  # https://github.com/M-Bab/linux-kernel-amdgpu-binaries/issues/101 (as posted)
    "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure "
    "that the latest NVIDIA driver is installed and running.\n"
    "Building module:\n"
    "cleaning build area...\n"
    "unset ARCH; [ ! -h /usr/bin/cc ] && export CC=/usr/bin/gcc; env NV_VERBOSE=1 'make' -j16 "
    "NV_EXCLUDE_BUILD_MODULES='' KERNEL_UNAME=5.13.18-21.09.16.amdgpu.ubuntu "
    "IGNORE_XEN_PRESENCE=1 IGNORE_CC_MISMATCH=1 "
    "SYSSRC=/lib/modules/5.13.18-21.09.16.amdgpu.ubuntu/build LD=/usr/bin/ld.bfd "
    "modules.....(bad exit status: 2)\n"
    "ERROR (dkms apport): kernel package linux-headers-5.13.18-21.09.16.amdgpu.ubuntu is not "
    "supported\n"
    "Error! Bad return status for module build on kernel: 5.13.18-21.09.16.amdgpu.ubuntu "
    "(x86_64)\n"
)


def test_nvidia_s_dkms_failure_is_not_amdgpu_s() -> None:
    assert DKMS not in ids(MBAB)


def test_nvidia_s_dkms_failure_without_its_make_line_is_not_amdgpu_s() -> None:
    # the same paste cut to fewer lines: NVIDIA's make line left out
    cut = "\n".join(ln for ln in MBAB.splitlines() if "NV_EXCLUDE_BUILD_MODULES" not in ln)
    assert DKMS not in ids(cut)


def test_a_bare_bad_return_status_line_is_not_amdgpu_s() -> None:
    line = MBAB.splitlines()[-1]
    assert line.startswith("Error! Bad return status") and DKMS not in ids(line)


def test_amdgpu_s_failure_with_its_consult_line_is_still_amdgpu_s() -> None:
    found = first(text(f"kb/{DKMS}.txt"))
    assert found is not None and found.id == DKMS


# F5: Podman refuses keep-groups beside any other --group-add
def test_the_no_hip_gpus_fix_says_keep_groups_replaces_the_other_group_adds() -> None:
    fix = entry("pytorch.no-hip-gpus").fix
    assert "keep-groups` alone" in fix and "replace both --group-add flags" in fix
    assert "crun" in fix


# F6: the Flatpak library path depends on the distribution; /opt is not in host-os
def test_the_cycles_fix_names_each_distribution_s_library_path() -> None:
    fix = entry(CYCLES).fix
    assert "/run/host/lib64" in fix and "Fedora" in fix
    assert "/run/host/usr/lib/x86_64-linux-gnu" in fix
    assert "--filesystem=/opt/rocm:ro" in fix
