"""The fixed, documented list of probes: what a support bundle holds, one `<id>.out` each.

Probe ids are a contract: bundles are exchanged between people, so ids never change meaning.
Every probe is a POSIX shell command. A probe whose tool (or file) is absent exits 127 and is
recorded as `missing`, never as a crash.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass

MISSING_RC = 127


@dataclass(frozen=True)
class Probe:
    id: str
    description: str
    command: str
    needs_root: bool = False
    timeout: float = 30.0
    profile: str = "quick"  # the cheapest profile that runs it: "quick" probes run in both


# `audit --profile`: "full" runs every probe; "quick" (a health check run every few minutes)
# leaves out the probes that start a GPU runtime or an interpreter: torch (imports torch),
# rocminfo (initialises HSA on every GPU), rocm-smi and amd-smi (Python CLIs that initialise
# the SMI library). Checks that need them report SKIPPED, not UNKNOWN.
PROFILES = ("full", "quick")
PROFILE_SKIPPED = "not collected by the quick profile"


def for_profile(
    probes: tuple[Probe, ...], profile: str
) -> tuple[tuple[Probe, ...], tuple[str, ...]]:
    """(the probes the profile runs, the ids of those it leaves out)."""
    if profile not in PROFILES:
        raise ValueError(f"unknown profile {profile!r}")
    if profile == "full":
        return probes, ()
    kept = tuple(p for p in probes if p.profile == "quick")
    return kept, tuple(p.id for p in probes if p.profile != "quick")


def _need_tool(tool: str, command: str) -> str:
    """Exit 127 (missing) when `tool` is not on PATH, else run `command`."""
    q = shlex.quote(tool)
    return (
        f"command -v {q} >/dev/null 2>&1 || {{ echo {q}: not installed >&2; exit 127; }}; {command}"
    )


def _read_file(path: str) -> str:
    """Print a file; exit 127 (missing) when it does not exist."""
    q = shlex.quote(path)
    return f"[ -e {q} ] || {{ echo {q}: absent >&2; exit 127; }}; cat -- {q}"


# A sysfs dump of every PCI device, readable by any user (see DESIGN.md "Reading PCIe without
# root"). The local collector writes the same text through pyudev (collect/sysfs.py).
PCI_SYSFS_ATTRS = (
    "vendor",
    "device",
    "class",
    "subsystem_vendor",
    "subsystem_device",
    "current_link_speed",
    "current_link_width",
    "max_link_speed",
    "max_link_width",
)
_PCI_SYSFS = (
    "for d in /sys/bus/pci/devices/*; do "
    '[ -e "$d" ] || continue; '
    'echo "bdf ${d##*/}"; '
    'echo "path $(readlink -f "$d")"; '
    f"for a in {' '.join(PCI_SYSFS_ATTRS)}; do "
    '[ -r "$d/$a" ] && v=$(cat "$d/$a" 2>/dev/null) && echo "$a $v"; '
    "done; "
    '[ -e "$d/driver" ] && l=$(readlink "$d/driver") && echo "driver ${l##*/}"; '
    '[ -r "$d/resource" ] && while read -r r; do echo "resource $r"; done < "$d/resource"; '
    "echo; "
    "done"
)

_SECUREBOOT = (
    "if command -v mokutil >/dev/null 2>&1; then mokutil --sb-state 2>&1; "
    "elif [ ! -d /sys/firmware/efi ]; then echo 'rocmprov: no EFI firmware (legacy BIOS boot)'; "
    "else for f in /sys/firmware/efi/efivars/SecureBoot-*; do "
    '[ -r "$f" ] && echo "rocmprov: SecureBoot efivar bytes $(od -An -t u1 "$f")" && exit 0; '
    "done; exit 127; fi"
)

# ROCm-related package-manager configuration: sources, pins and keys, whatever their file
# names (AMD's instructions changed over the years; stale leftovers are what repair fixes).
_APT_ROCM = (
    "[ -d /etc/apt ] || [ -d /etc/yum.repos.d ] || exit 127; "
    "for f in /etc/apt/sources.list /etc/apt/sources.list.d/* /etc/apt/preferences "
    "/etc/apt/preferences.d/* /etc/yum.repos.d/*; do "
    '[ -f "$f" ] || continue; c=$(cat "$f" 2>/dev/null) || continue; '
    'case "$c" in *radeon*|*rocm*|*ROCm*|*amdgpu*) printf \'== file %s\\n%s\\n\' "$f" "$c";; esac; '
    "done; "
    "for f in /etc/apt/keyrings/* /etc/apt/trusted.gpg.d/* /usr/share/keyrings/*; do "
    'case "${f##*/}" in *rocm*|*amdgpu*|*radeon*) ;; *) continue;; esac; '
    '[ -f "$f" ] || continue; printf \'== key %s\\n\' "$f"; '
    "command -v gpg >/dev/null 2>&1 && "
    "gpg --batch --show-keys --with-colons \"$f\" 2>/dev/null | grep -E '^(pub|fpr):'; "
    "done; exit 0"
)

# Where each AMD stream records its release (the release table's streams block): legacy
# /opt/rocm-X.Y.Z/.info/version (/opt/rocm links there), TheRock /opt/rocm/core-X.Y/.info/version
# (/opt/rocm/core links there). A TheRock prefix without the file is listed by its directory.
_ROCM_INSTALLS = (
    'for p in "${ROCM_PATH:-}" "${ROCM_HOME:-}" /opt/rocm /opt/rocm-* /opt/rocm/core '
    "/opt/rocm/core-*; do "
    '[ -n "$p" ] || continue; f="$p/.info/version"; '
    '[ -f "$f" ] && printf \'%s\\t%s\\n\' "$f" "$(head -c 200 "$f" | head -n 1)"; '
    # TheRock's multi-arch tarballs carry their GPU kernels in <prefix>/.kpack (RELEASES.md)
    '[ -d "$p/.kpack" ] && echo "kpack $p"; '
    "done; "
    'for d in /opt/rocm/core-*; do [ -d "$d" ] && echo "$d"; done; '
    # AMD's post-install step: the dynamic linker's entry for the prefix's lib directories.
    "for f in /etc/ld.so.conf.d/*.conf; do "
    '[ -f "$f" ] && while read -r l; do case "$l" in */rocm*) echo "ldconf $f $l";; esac; '
    'done < "$f"; done; exit 0'
)

# TheRock's pip wheels (rocm-sdk-core) in the virtual environments people usually make, and
# conda environments (the base and envs/* of the usual installs). Its own probe, with a short
# timeout: /home is often NFS, and a stale mount blocks the glob; the release's version files
# (rocm-installs) must not wait on it.
_ROCM_VENVS = (
    "for m in /home/*/.venv /home/*/venv /home/*/*/.venv /home/*/*/venv /root/.venv /root/venv "
    "/opt/venv /opt/*/.venv /opt/*/venv /srv/*/.venv /srv/*/venv "
    "/opt/conda /opt/conda/envs/* /home/*/miniconda3/envs/* /home/*/anaconda3/envs/* "
    "/home/*/miniforge3/envs/*; do "
    'for i in "$m"/lib/python3*/site-packages/rocm_sdk_core-*.dist-info; do '
    '[ -d "$i" ] && echo "rocmsdk $i"; done; done 2>/dev/null | head -n 200; exit 0'
)

# BIOS and system model: /sys/class/dmi/id needs no root (dmidecode does); each value is cut to
# 200 bytes. No such directory (a container, a non-x86 board): exit 127, recorded as missing.
_DMI = (
    "[ -d /sys/class/dmi/id ] || { echo /sys/class/dmi/id: absent >&2; exit 127; }; "
    "for f in bios_vendor bios_version bios_date sys_vendor product_name board_vendor "
    "board_name; do "
    '[ -r "/sys/class/dmi/id/$f" ] && printf \'%s %s\\n\' "$f" '
    '"$(head -c 200 "/sys/class/dmi/id/$f" | head -n 1)"; '
    "done; exit 0"
)

# amdgpu's RAS sysfs (any user): the features mask, per-block error counts ("ue: N", "ce: N")
# and the retired/pending VRAM pages, per card; a card without ras/ (no RAS, a consumer GPU) prints
# nothing. Bounded: 200 lines of bad pages a card, 64 KiB in all. gpu_metrics is binary: not read.
_AMDGPU_RAS = (
    "found=0; for d in /sys/class/drm/card[0-9]*/device/ras; do "
    '[ -d "$d" ] || continue; found=1; c=${d%/device/ras}; c=${c##*/}; '
    'for f in "$d"/features "$d"/*_err_count "$d"/gpu_vram_bad_pages; do '
    '[ -r "$f" ] || continue; echo "== $c ${f##*/}"; head -n 200 "$f" 2>/dev/null; '
    "done; done | head -c 65536; "
    "ls -d /sys/class/drm/card[0-9]*/device/ras >/dev/null 2>&1 || exit 127"
)

_PACKAGES = (
    "if command -v dpkg-query >/dev/null 2>&1; then "
    "dpkg-query -W -f='${Package} ${Version} ${db:Status-Abbrev}\\n' 2>/dev/null; "
    "elif command -v rpm >/dev/null 2>&1; then "
    "rpm -qa --qf '%{NAME} %{VERSION}-%{RELEASE} ii\\n'; else exit 127; fi"
)

# dmesg, else the journal's kernel lines of this boot. A user the kernel (dmesg_restrict) and the
# journal (not in adm, wheel, systemd-journal) both refuse gets exit 0 and nothing from
# `journalctl -q`: that is not a clean kernel log, so no line at all fails, saying why.
_DMESG = (
    "dmesg --facility=kern 2>/dev/null || journalctl -k -b --no-pager -q | awk '{ print } "
    'END { if (NR == 0) { print "dmesg refused and journalctl -k printed no kernel line '
    '(permission denied to this user, or no kernel messages in the journal)" > "/dev/stderr"; '
    "exit 1 } }'"
)

_TORCH = r"""
import json, sys
out = {"python": sys.version.split()[0], "executable": sys.executable, "prefix": sys.prefix}
try:
    from importlib.metadata import version
    out["rocm_sdk"] = version("rocm-sdk-core")
except Exception:
    pass
try:
    import torch
except Exception as exc:
    out["error"] = f"{type(exc).__name__}: {exc}"
else:
    out["torch"] = torch.__version__
    out["hip"] = getattr(torch.version, "hip", None)
    out["cuda"] = getattr(torch.version, "cuda", None)
    try:
        out["available"] = bool(torch.cuda.is_available())
        out["device_count"] = int(torch.cuda.device_count())
        out["devices"] = [torch.cuda.get_device_name(i) for i in range(out["device_count"])]
    except Exception as exc:
        out["device_error"] = f"{type(exc).__name__}: {exc}"
    try:  # the HIP runtime this torch really loaded
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as maps:
            for line in maps:
                if "libamdhip64.so" in line:
                    out["hip_library"] = line.split(None, 5)[-1].strip()[:400]
                    break
    except OSError:
        pass
print(json.dumps(out))
"""


def _groups_command(gpu_users: Sequence[str]) -> str:
    """Per GPU user a `--- user NAME` line and `id -- NAME` (an unknown user's error included,
    so the check can say so); no users: the login user."""
    names = " ".join(shlex.quote(u) for u in gpu_users) if gpu_users else '"$(id -un)"'
    return (
        f'for u in {names}; do echo "--- user $u"; id -- "$u" 2>&1; done; '
        "echo '--- getent'; getent group render video"
    )


def _torch_command(python: str, fallback: str) -> str:
    """The torch probe with `python`, or `fallback` where `python` is not there (the torch
    venv apply makes does not exist before the first apply)."""
    code = shlex.quote(_TORCH)
    if not fallback:
        return _need_tool(python, f"{shlex.quote(python)} -c {code}")
    found = 'command -v "$p" >/dev/null 2>&1'
    return (
        f"p={shlex.quote(python)}; {found} || p={shlex.quote(fallback)}; "
        f'{found} || {{ echo "$p: not installed" >&2; exit 127; }}; "$p" -c {code}'
    )


def build_probes(
    *, gpu_users: Sequence[str] = (), python: str = "python3", python_fallback: str = ""
) -> tuple[Probe, ...]:
    """The probes for one host. `gpu_users` run GPU work (default: the login user); `python`
    is the interpreter whose torch is judged (`python_fallback` where it does not exist)."""
    return (
        Probe("uname", "running kernel release", "uname -r"),
        Probe("os-release", "distribution", _read_file("/etc/os-release")),
        Probe("cmdline", "kernel command line", _read_file("/proc/cmdline")),
        Probe(
            "lspci",
            "PCI devices with capabilities (LnkCap/LnkSta need root)",
            _need_tool("lspci", "lspci -vvv -nn -D"),
            needs_root=True,
        ),
        Probe("pci-sysfs", "PCI link and BARs from sysfs (any user)", _PCI_SYSFS),
        Probe("lsmod", "loaded kernel modules", _read_file("/proc/modules")),
        Probe("kfd", "GPU device nodes", "ls -l /dev/kfd /dev/dri"),
        Probe(
            "groups",
            "groups of the GPU users; whether render/video exist",
            _groups_command(gpu_users),
        ),
        Probe(
            "amdgpu-initstate", "amdgpu driver state", _read_file("/sys/module/amdgpu/initstate")
        ),
        Probe("rocm-version", "installed ROCm release", _read_file("/opt/rocm/.info/version")),
        Probe("rocm-installs", "ROCm version records of both AMD streams", _ROCM_INSTALLS),
        Probe(
            "rocm-venvs",
            "TheRock's rocm-sdk wheels in the usual virtual and conda environments",
            _ROCM_VENVS,
            timeout=15,
            profile="full",
        ),
        Probe(
            "rocminfo",
            "HSA agents (gfx targets)",
            _need_tool("rocminfo", "rocminfo"),
            timeout=60,
            profile="full",
        ),
        Probe(
            "rocm-smi",
            "rocm-smi product, VRAM, use",
            _need_tool(
                "rocm-smi", "rocm-smi --showproductname --showmeminfo vram --showuse --json"
            ),
            timeout=60,
            profile="full",
        ),
        Probe(
            "amd-smi-static",
            "amd-smi static facts",
            _need_tool("amd-smi", "amd-smi static --json"),
            timeout=60,
            profile="full",
        ),
        Probe(
            "amd-smi-metric",
            "amd-smi metrics",
            _need_tool("amd-smi", "amd-smi metric --json"),
            timeout=60,
            profile="full",
        ),
        Probe(
            "amd-smi-firmware",
            "amd-smi firmware versions per GPU (PMFW, PSP SOS, MEC ...)",
            _need_tool("amd-smi", "amd-smi firmware --json"),
            timeout=60,
            profile="full",
        ),
        Probe(
            "rocm-smi-firmware",
            "rocm-smi firmware, VBIOS and driver versions",
            _need_tool("rocm-smi", "rocm-smi --showfwinfo --showvbios --showdriverversion --json"),
            timeout=60,
            profile="full",
        ),
        Probe("dmi", "BIOS and system model from /sys/class/dmi/id (any user)", _DMI),
        Probe(
            "amdgpu-version",
            "version of the loaded amdgpu module (DKMS builds)",
            _read_file("/sys/module/amdgpu/version"),
        ),
        Probe(
            "amd-smi-xgmi",
            "amd-smi XGMI link metrics (multi-GPU boards)",
            _need_tool("amd-smi", "amd-smi xgmi --json 2>&1 | head -c 262144"),
            timeout=60,
            profile="full",
        ),
        Probe(
            "amd-smi-bad-pages",
            "amd-smi retired and pending VRAM pages",
            _need_tool("amd-smi", "amd-smi bad-pages --json 2>&1 | head -c 262144"),
            timeout=60,
            profile="full",
        ),
        Probe("amdgpu-ras", "amdgpu RAS sysfs: features, error counts, bad pages", _AMDGPU_RAS),
        Probe(
            "rocm-smi-ras",
            "rocm-smi per-block RAS state and ECC counts (text: its --json prints nothing here)",
            _need_tool("rocm-smi", "rocm-smi --showrasinfo 2>&1 | head -c 262144"),
            timeout=60,
            profile="full",
        ),
        Probe(
            "dmesg",
            "kernel log: the kernel's own lines (dmesg --facility=kern, or journalctl -k)",
            _DMESG,
            needs_root=True,
        ),
        Probe("dkms", "DKMS module build state", _need_tool("dkms", "dkms status")),
        Probe("secureboot", "UEFI secure boot state (mokutil, else the EFI variable)", _SECUREBOOT),
        Probe(
            "numa-balancing",
            "automatic NUMA balancing",
            _read_file("/proc/sys/kernel/numa_balancing"),
        ),
        Probe(
            "gpu-manager",
            "Ubuntu gpu-manager unit state",
            "systemctl is-enabled gpu-manager.service 2>&1",
        ),
        Probe("apt-rocm", "ROCm package sources, pins and keys", _APT_ROCM),
        Probe("packages", "installed packages (dpkg or rpm)", _PACKAGES),
        Probe(
            "torch",
            "the target python's torch, HIP version, devices",
            _torch_command(python, python_fallback),
            timeout=120,
            profile="full",
        ),
        *_container_probes(),
    )


def _container_probes() -> tuple[Probe, ...]:
    from rocmprov.collect.containers import CONTAINER_PROBES

    return tuple(Probe(i, what, cmd, needs_root=root) for i, what, cmd, root in CONTAINER_PROBES)


PROBE_IDS: tuple[str, ...] = tuple(p.id for p in build_probes())
