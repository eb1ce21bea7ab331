"""Round 18 hostile review (reviewer a): counter-examples that failed before the review's fixes.
Every text below is CONSTRUCTED (not a captured output) from the programs' format strings, as
each comment says."""

from __future__ import annotations

from rocmprov.kb import match
from tests.kbcases import assert_leads

# an old HIP build of llama.cpp (named "CUDA", mid-2023 CUDA_CHECK "CUDA error %d at %s:%d: %s")
_GGML_HIP = (
    "ggml_init_cublas: found 1 ROCm devices:\n"
    "  Device 0: AMD Radeon RX 6700 XT, compute capability 10.3\n"
    "llm_load_tensors: using ROCm for GPU acceleration\n"
    "llm_load_tensors: offloaded 33/33 layers to GPU\n"
    "CUDA error 98 at /home/user/llama.cpp/ggml-cuda.cu:6951: invalid device function\n"
    "current device: 0\n"
)

LEADS = [
    # constructed: bash's "command not found" for nvidia-smi on an AMD host (a launcher or the
    # user probing for an NVIDIA GPU first), then the HIP build's error: the lowercase
    # nvidia-smi veto silenced ggml's entry (the generic HIP entry led from the status code)
    ("bash: nvidia-smi: command not found\n" + _GGML_HIP, "hip.invalid-device-function"),
    # constructed: dash's wording of the same
    ("/bin/sh: 1: nvidia-smi: not found\n" + _GGML_HIP, "hip.invalid-device-function"),
    # constructed: Python's subprocess.run(["nvidia-smi", ...]) without the binary
    ("FileNotFoundError: [Errno 2] No such file or directory: 'nvidia-smi'\n" + _GGML_HIP,
     "hip.invalid-device-function"),
    # constructed: Windows cmd's wording, then an older ROCm PyTorch's "CUDA error" (hipified)
    ("'nvidia-smi' is not recognized as an internal or external command,\n"
     "RuntimeError: CUDA error: invalid device function\n", "hip.invalid-device-function"),
]  # fmt: skip

SILENT = [
    # constructed from Ubuntu's initramfs-tools / run-parts / dpkg wording: a kernel update
    # whose postinst failed in initramfs-tools (full /boot), not in DKMS's hook; the
    # linux-image alternative blamed DKMS
    ("Setting up linux-image-6.8.0-45-generic (6.8.0-45.45) ...\n"
     "update-initramfs: Generating /boot/initrd.img-6.8.0-45-generic\n"
     "pigz: abort: write error on <stdout> (No space left on device)\n"
     "E: mkinitramfs failure pigz 28\n"
     "update-initramfs: failed for /boot/initrd.img-6.8.0-45-generic with 1.\n"
     "run-parts: /etc/kernel/postinst.d/initramfs-tools exited with return code 1\n"
     "dpkg: error processing package linux-image-6.8.0-45-generic (--configure):\n"
     " installed linux-image-6.8.0-45-generic package post-installation script subprocess "
     "returned error exit status 1\n", "dkms.amdgpu-dpkg-configure-failed"),
    # constructed from dpkg's "error processing package %s (%s):": a linux-image configure
    # failure alone names no DKMS hook (round18_e1 asserted it led; moved there with the hook)
    ("dpkg: error processing package linux-image-unsigned-6.12.10-061210-generic (--configure):\n",
     "dkms.amdgpu-dpkg-configure-failed"),
    # constructed from gres_gpu.c's info() in _normalize_sys_gres_types(): printed only when
    # no configured GPU has a type, i.e. on a healthy untyped node (Gres=gpu:8, AutoDetect=rsmi)
    ("[2026-12-01T10:00:01.100] gres/gpu: _normalize_sys_gres_types: Could not find an unused "
     "configuration record with a GRES type that is a substring of system device "
     "`amd_instinct_mi250x`. Setting system GRES type to NULL\n"
     "Gres Name=gpu Type=(null) Count=1 Index=0 File=/dev/dri/renderD128 Flags=HAS_FILE,ENV_RSMI\n",
     "container.slurm-gres-gpus-ignored"),
    # constructed from dnf 4's messages (base.py / cli: "Key import failed (code %d). Failing
    # package is: %s", " GPG Keys are configured as: %s", "Error: GPG check FAILED"): the
    # NOKEY line of an install that then stopped on the signature was called harmless
    ("warning: /var/cache/dnf/rocm-2a3f1c/packages/rocm-core-6.2.0.60200-66.el9.x86_64.rpm: "
     "Header V4 RSA/SHA512 Signature, key ID 1a693c5c: NOKEY\n"
     "ROCm 6.2                                         1.6 kB/s | 1.6 kB     00:01\n"
     "Importing GPG key 0x1A693C5C:\n"
     " From       : https://repo.radeon.com/rocm/rocm.gpg.key\n"
     "Key import failed (code 2). Failing package is: rocm-core-6.2.0.60200-66.el9.x86_64\n"
     " GPG Keys are configured as: https://repo.radeon.com/rocm/rocm.gpg.key\n"
     "Error: GPG check FAILED\n", "apt.rpm-amd-key-nokey-warning"),
    # constructed: the same with dnf's "Public key for %s is not installed" (no gpgkey= line)
    ("warning: /var/cache/dnf/amdgpu-1f/packages/amdgpu-dkms-6.8.5.60200-2009582.el9.noarch.rpm: "
     "Header V4 RSA/SHA512 Signature, key ID 1a693c5c: NOKEY\n"
     "Public key for amdgpu-dkms-6.8.5.60200-2009582.el9.noarch.rpm is not installed\n"
     "Error: GPG check FAILED\n", "apt.rpm-amd-key-nokey-warning"),
]  # fmt: skip



def test_review18_a_nokey_alone_still_harmless() -> None:
    # the fixture's case (rpm -qi on the downloaded file, nothing failing after it) keeps the
    # noise entry
    text = ("warning: amd-smi-lib-26.2.0.70101-38.el8.x86_64.rpm: Header V4 RSA/SHA512 "
            "Signature, key ID 1a693c5c: NOKEY\nName        : amd-smi-lib\n")
    assert [m.id for m in match(text)] == ["apt.rpm-amd-key-nokey-warning"]


def test_review18_a_dkms_hook_still_leads() -> None:
    # the kernel update whose DKMS hook failed (the entry's wording fixture, cut to the hook
    # line and dpkg's) still reaches the entry through run-parts' dkms line
    assert_leads("run-parts: /etc/kernel/postinst.d/dkms exited with return code 11\n"
                 "dpkg: error processing package linux-image-6.8.0-44-generic (--configure):\n",
                 "dkms.amdgpu-dpkg-configure-failed")


def test_review18_a_slurm_nvidia_node_condition() -> None:
    # constructed from gres.c's fatal() on an NVIDIA node (the entry's own fixture is one):
    # the fix must be NVIDIA's, not "load amdgpu"
    text = "slurmd: fatal: can't stat gres.conf file /dev/nvidia0: No such file or directory\n"
    found = [m for m in match(text) if m.id == "container.slurm-gres-file-missing"]
    assert found and "NVIDIA" in found[0].condition
    assert "modprobe amdgpu" not in found[0].fix
