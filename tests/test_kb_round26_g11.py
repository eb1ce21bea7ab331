"""Round 26 (g11): installation and packages. Each test fails on the table before its change."""

from __future__ import annotations

from tests.kb_helpers import first

# clinfo after an apt upgrade of ROCm 3.9 -> 3.10 (ROCm/legacy-rocm-build#1331): the ICD
# loader opens the OpenCL runtime by the absolute path in its .icd file
AMDOCL_PATH = (
    "clinfo\n"
    "dlerror: /opt/rocm-3.1.0/opencl/lib/x86_64/libamdocl64.so: cannot open shared object"
    " file: No such file or directory\n"
    "Number of platforms:\t\t\t\t 1\n"
)

# dpkg unpacking a ROCm file an installed package of another source owns (no multi-version
# name): the generic two-owners answer with dpkg's own fix, not the hipcc-nvidia one
DPKG_OTHER_OWNER = (
    "dpkg: error processing archive /tmp/apt-dpkg-install-sZnI2A/13-rocm-opencl-icd-loader"
    "_1.2.60103-122~22.04_amd64.deb (--unpack):\n"
    " trying to overwrite '/opt/rocm/lib/libOpenCL.so.1', which is also in package"
    " rocm-opencl-runtime 6.0.2-1\n"
)


def test_the_opencl_runtime_library_gets_no_dev_package_advice() -> None:
    """libamdocl64.so is the OpenCL runtime's real, unversioned file name: the "bare
    development name, install the -dev package" condition does not apply to it."""
    found = first(AMDOCL_PATH)
    assert found is not None and found.id == "rocm.library-not-found"
    assert found.condition == ""


def test_dpkg_overwrite_of_a_rocm_file_names_both_packages() -> None:
    found = first(DPKG_OTHER_OWNER)
    assert found is not None and found.id == "apt.rpm-rocm-file-conflict"
    assert found.captures.get("new") == "rocm-opencl-icd-loader"
    assert found.captures.get("old") == "rocm-opencl-runtime"
    assert found.condition.startswith("dpkg (Debian/Ubuntu)")
