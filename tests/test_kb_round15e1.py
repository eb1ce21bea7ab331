"""Round 15 (engineer 1): texts on which a widened install/DKMS pattern must stay silent or must
lead. CONSTRUCTED from the programs' own output formats (dkms.in do_status, uname), not captured:
they test that a pattern keeps its context."""

from __future__ import annotations

ROCMINFO_4104 = (
    "hsa api call failure at line 900, file: /data/jenkins_workspace/compute-rocm-rel-2.0/"
    "rocminfo/rocminfo.cc. Call returned 4104\n"
)
KFD_ENOMEM = "ROCk module is loaded\nUnable to open /dev/kfd read-write: Cannot allocate memory\n"

LEADS = [
    # uname -r, then dkms status: amdgpu installed only for another kernel
    ("$ uname -r\n5.4.0-97-generic\n$ rocminfo\n" + KFD_ENOMEM + "$ dkms status\n"
     "amdgpu/6.3.6-1697589.22.04, 5.15.0-91-generic, x86_64: installed\n",
     "dkms.amdgpu-install-dkms-failed-running-kernel"),
    # dpkg's output for rock-dkms 3.x on a 5.8 kernel, with apport's line in between
    ("Building initial module for 5.8.0-43-generic\nERROR: Cannot create report: [Errno 17] "
     "File exists: '/var/crash/rock-dkms-firmware.0.crash'\nError! Bad return status for module "
     "build on kernel: 5.8.0-43-generic (x86_64)\nConsult /var/lib/dkms/amdgpu/3.10-27/build/"
     "make.log for more information.\n", "dkms.amdgpu-kernel58-pci-platform-rom"),
    # apt's Release.gpg verification, and newer apt's line break after "invalid:" (gpgv.cc)
    ("W: GPG error: http://repo.radeon.com/rocm/apt/debian xenial Release: The following "
     "signatures were invalid: KEYEXPIRED 1533155360\n", "apt.rocm-key-expired"),
    ("W: GPG error: https://repo.radeon.com/rocm/apt/6.0 jammy InRelease: The following "
     "signatures were invalid:\n EXPKEYSIG 1234567812345678 Some Key\n", "apt.rocm-key-expired"),
    # a ROCm library's dependency on a distribution library of another release, versioned
    ("The following packages have unmet dependencies:\n rocsolver6.1.1 : Depends: libcholmod3 "
     "(>= 1:5.1.2) but it is not installable\n", "apt.package-for-other-ubuntu-release"),
]

SILENT = [
    # AMD's own libdrm: the amdgpu repository is missing, not another release's package
    (" hsa-rocr : Depends: libdrm-amdgpu-amdgpu1 but it is not installable\n",
     "apt.package-for-other-ubuntu-release"),
    # an expired key of another repository
    ("W: GPG error: http://ppa.launchpad.net/x/ubuntu xenial InRelease: The following "
     "signatures were invalid: KEYEXPIRED 1533155360\n", "apt.rocm-key-expired"),
    # ROCm 4.1's amdgpu supports 5.8: the generic build failure, not the 5.8 entry
    ("Error! Bad return status for module build on kernel: 5.8.0-43-generic (x86_64)\n"
     "Consult /var/lib/dkms/amdgpu/4.1-23/build/make.log for more information.\n",
     "dkms.amdgpu-kernel58-pci-platform-rom"),
    # the running kernel is among the installed ones (listed second)
    ("Linux host 4.15.0-34-generic #39~16.04.1-Ubuntu SMP x86_64 GNU/Linux\n$ dkms status\n"
     "amdgpu, 1.9-211, 4.15.0-33-generic, x86_64: installed\n"
     "amdgpu, 1.9-211, 4.15.0-34-generic, x86_64: installed\n",
     "dkms.amdgpu-install-dkms-failed-running-kernel"),
    # uname -r equal to the installed kernel (no prefix match on "5.4.0-9")
    ("$ uname -r\n5.4.0-97-generic\n" + KFD_ENOMEM + "$ dkms status\n"
     "amdgpu, 5.11.32-1350682, 5.4.0-97-generic, x86_64: installed\n",
     "dkms.amdgpu-install-dkms-failed-running-kernel"),
    # kfd's own "added device" line is not dkms status
    ("[    2.296928] kfd kfd: added device 1002:687f\n" + ROCMINFO_4104,
     "dkms.amdgpu-build-failed"),
]  # fmt: skip
