"""Round 18 (engineer 1): install on other distributions and newer kernels. The texts are
CONSTRUCTED, not captured outputs: each fills a message's format string (named in the comment,
from the program's source) with typical values, or puts a real message next to the context that
decides the cause."""

from __future__ import annotations

LEADS = [
    # gcc: "passing argument %d of %qE from incompatible pointer type", amdgpu-dkms 6.2.0 built in
    # the DKMS tree (not the /tmp/amd.XXXXXXXX copy), ASCII quotes of LANG=C
    ("/var/lib/dkms/amdgpu/6.8.5-2009582.24.04/build/amd/display/amdgpu_dm/amdgpu_dm_helpers.c:"
     "563:64: error: passing argument 2 of 'drm_dp_add_payload_part2' from incompatible pointer "
     "type [-Werror=incompatible-pointer-types]\n", "dkms.amdgpu-drm-dp-add-payload-part2"),
    # gcc: "too many arguments to function %qE", the same call against the two-argument helper
    ("/tmp/amd.Ab3dEf9H/amd/amdgpu/../display/amdgpu_dm/amdgpu_dm_helpers.c:560:15: error: too "
     "many arguments to function \u2018drm_dp_add_payload_part2\u2019\n",
     "dkms.amdgpu-drm-dp-add-payload-part2"),
    # dkms's kernel_postinst.d script run by run-parts (debianutils: "%s exited with return code
    # %d") from the linux-headers postinst, then dpkg's "error processing package %s (%s):"
    ("run-parts: /etc/kernel/header_postinst.d/dkms exited with return code 11\n"
     "dpkg: error processing package linux-headers-6.11.0-19-generic (--configure):\n"
     " installed linux-headers-6.11.0-19-generic package post-installation script subprocess "
     "returned error exit status 11\n", "dkms.amdgpu-dpkg-configure-failed"),
    # the unsigned kernel flavour (Ubuntu mainline / linux-image-unsigned-*) fails the same way
    # (review 18a: with DKMS's hook line; dpkg's line alone is any postinst.d hook's failure)
    ("run-parts: /etc/kernel/postinst.d/dkms exited with return code 1\n"
     "dpkg: error processing package linux-image-unsigned-6.12.10-061210-generic (--configure):\n",
     "dkms.amdgpu-dpkg-configure-failed"),
    # gcc's source echo under the error: all that is left when the error line was cut short
    ("  563 |         ret = drm_dp_add_payload_part2(mst_mgr, mst_state->base.state, new_payl\n",
     "dkms.amdgpu-drm-dp-add-payload-part2"),
    # any other compiler error in amdgpu-dkms's mktemp build tree stays with the generic entry
    # (its wording of that form now belongs to dkms.amdgpu-drm-dp-add-payload-part2)
    ("/tmp/amd.gUeRkJ9X/amd/amdgpu/../display/amdgpu_dm/amdgpu_dm.c:9612:17: error: implicit "
     "declaration of function 'drm_atomic_helper_wait_for_flip_done_x' "
     "[-Werror=implicit-function-declaration]\n", "dkms.amdgpu-build-failed"),
    # with the amdgpu build failure in the same paste, the root cause leads, not the symptom
    ("Error! Bad return status for module build on kernel: 6.8.0-44-generic (x86_64)\n"
     "Consult /var/lib/dkms/amdgpu/6.8.5-2009582.24.04/build/make.log for more information.\n"
     "run-parts: /etc/kernel/postinst.d/dkms exited with return code 11\n",
     "dkms.amdgpu-build-failed"),
    # rpm lib/package.c: "%s: %s" (file, "Header V%d %s/%s Signature, key ID %s: NOKEY"), as dnf 4
    # prints it while downloading from repo.radeon.com
    ("warning: /var/cache/dnf/rocm-5f1bd3c4f2b0e1a7/packages/rocm-core-6.2.0.60200-66.el9."
     "x86_64.rpm: Header V4 RSA/SHA512 Signature, key ID 1a693c5c: NOKEY\n",
     "apt.rpm-amd-key-nokey-warning"),
    # dnf 4 dnf/cli/commands/install.py: PackagesNotAvailableError("Unable to find a match",
    # pkg_spec=' '.join(errs)) -> "Error: Unable to find a match: <spec> <spec>...", pasted alone
    ("Error: Unable to find a match: rocm\n", "apt.rocm-repo-not-configured"),
    # the ROCm spec after an unrelated one in the same list (a versioned meta-package)
    ("Error: Unable to find a match: kernel-devel-5.14.0-503.40.1.el9_5.x86_64 "
     "rocm-hip-sdk6.4.1\n", "apt.rocm-repo-not-configured"),
]

SILENT = [
    # the same compiler error from another DKMS driver (i915-sriov's MST code) is not amdgpu's
    ("/var/lib/dkms/i915-sriov-dkms/2024.09.26/build/drivers/gpu/drm/i915/display/intel_dp_mst.c:"
     "1203:48: error: passing argument 2 of 'drm_dp_add_payload_part2' from incompatible pointer "
     "type [-Werror=incompatible-pointer-types]\n", "dkms.amdgpu-drm-dp-add-payload-part2"),
    # i915's own call of the helper, echoed by gcc, is not amdgpu's
    ("  1203 |         ret = drm_dp_add_payload_part2(&intel_dp->mst_mgr, state, payload);\n",
     "dkms.amdgpu-drm-dp-add-payload-part2"),
    # another kernel hook failing (update-grub) is not a DKMS build
    ("run-parts: /etc/kernel/postinst.d/zz-update-grub exited with return code 1\n",
     "dkms.amdgpu-dpkg-configure-failed"),
    # dpkg failing on an unrelated package
    ("dpkg: error processing package linux-firmware (--configure):\n",
     "dkms.amdgpu-dpkg-configure-failed"),
    # NOKEY for another vendor's key (NVIDIA's CUDA repository) is not AMD's
    ("warning: /var/cache/dnf/cuda-rhel9-x86_64-3c1d7ab4a4de7c4e/packages/cuda-toolkit-12-6-"
     "12.6.3-1.x86_64.rpm: Header V4 RSA/SHA512 Signature, key ID d42d0685: NOKEY\n",
     "apt.rpm-amd-key-nokey-warning"),
    # a verified signature of AMD's key (rpm -K with the key imported)
    ("rocm-core-6.2.0.60200-66.el9.x86_64.rpm: Header V4 RSA/SHA512 Signature, key ID "
     "1a693c5c: OK\n",
     "apt.rpm-amd-key-nokey-warning"),
    # a missing kernel package alone is not a missing ROCm repository
    ("Error: Unable to find a match: kernel-modules-extra-6.12.0-124.56.5.el10_1.x86_64\n",
     "apt.rocm-repo-not-configured"),
    # the renamed rocm-dkms has its own entry, and "rocminfo" inside another name is not it
    ("Error: Unable to find a match: rocm-dkms python3-rocminfo-helpers\n",
     "apt.rocm-repo-not-configured"),
]
