"""A Bundle (live or on disk) -> HostFacts: every parser applied once. Pure.

A fact is None when its probe is absent from the bundle or could not run; checks turn None
into UNKNOWN. An empty value means the probe ran and found nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from rocmprov.collect.bundle import Bundle, ProbeOutput
from rocmprov.parse.amdsmi_health import HEALTH_PROBES, GpuHealthFacts, build_health
from rocmprov.parse.apt import RepoConfig, parse_apt_rocm, parse_packages
from rocmprov.parse.containers import CONTAINER_PROBES, ContainerFacts, build_containers
from rocmprov.parse.lspci import parse_lspci
from rocmprov.parse.pci import AMD_VENDOR, PciDevice
from rocmprov.parse.rocm import (
    PIP,
    RocmInstall,
    VersionRecord,
    find_installs,
    parse_layout_marks,
    parse_ldconf,
    parse_version_records,
    stray_libraries,
)
from rocmprov.parse.rocminfo import RocmInfo, parse_rocminfo
from rocmprov.parse.smi import (
    GpuMetrics,
    SmiGpu,
    parse_amd_smi,
    parse_amd_smi_metric,
    parse_rocm_smi,
)
from rocmprov.parse.sysfs import parse_pci_sysfs
from rocmprov.parse.system import (
    DevNode,
    DkmsModule,
    OsRelease,
    UserGroups,
    infer_os_release,
    parse_cmdline,
    parse_dkms,
    parse_groups,
    parse_int,
    parse_ls_dev,
    parse_modules,
    parse_secureboot,
    parse_uname,
    parse_unit_state,
    parse_version_file,
)
from rocmprov.parse.torch import TorchInfo, parse_torch


@dataclass(frozen=True)
class HostFacts:
    host: str
    probe_status: dict[str, str] = field(default_factory=dict)
    probe_notes: dict[str, str] = field(default_factory=dict)  # why a probe gave nothing
    os: OsRelease | None = None
    kernel: str | None = None
    cmdline: dict[str, str] | None = None
    pci: tuple[PciDevice, ...] | None = None
    pci_source: str = ""  # sysfs | lspci | ""
    lspci_caps_denied: bool = False
    modules: frozenset[str] | None = None
    amdgpu_initstate: str | None = None
    devnodes: dict[str, DevNode] | None = None
    groups: tuple[UserGroups, ...] | None = None  # the GPU users, in the order asked
    rocm_version: str | None = None  # "" = not installed
    rocminfo: RocmInfo | None = None
    smi_gpus: tuple[SmiGpu, ...] | None = None
    smi_metrics: tuple[GpuMetrics, ...] | None = None  # amd-smi metric: live per-GPU readings
    gpu_health: GpuHealthFacts | None = None  # ECC/RAS/XGMI/partition (parse/amdsmi_health.py)
    dmesg: str | None = None
    dkms: tuple[DkmsModule, ...] | None = None
    secureboot: str | None = None
    numa_balancing: int | None = None
    gpu_manager: str | None = None  # is-enabled state; "no-systemd" when systemctl is absent
    torch: TorchInfo | None = None
    repo: RepoConfig | None = None
    packages: dict[str, str] | None = None  # installed package -> version
    rocm_source: str = ""  # stream of the installed ROCm: legacy | therock | distro | ""
    rocm_installs: tuple[RocmInstall, ...] | None = None  # every install seen, primary first
    rocm_stray: tuple[str, ...] = ()  # distribution ROCm libraries with no install around them
    rocm_ldconf: tuple[str, ...] | None = None  # ROCm lib dirs in /etc/ld.so.conf.d
    logs: dict[str, str] = field(default_factory=dict)  # raw text the explain table reads
    containers: ContainerFacts | None = None  # runtimes, toolkit, CDI specs (parse/containers.py)

    def not_collected(self, *probe_ids: str) -> str:
        """Why these probes gave nothing, per probe: 'pci-sysfs: not in the bundle; lspci: not
        installed'. Says what happened to the probes, never anything about the hardware."""
        return "; ".join(f"{p}: {self.why(p)}" for p in probe_ids)

    def why(self, probe_id: str) -> str:
        if probe_id in self.probe_notes:
            return self.probe_notes[probe_id]
        status = self.probe_status.get(probe_id)
        return "not in the bundle" if status is None else f"ran ({status}), nothing usable"

    @property
    def amd_gpus(self) -> tuple[PciDevice, ...]:
        return tuple(d for d in self.pci or () if d.is_amd_gpu)

    def device(self, bdf: str) -> PciDevice | None:
        return next((d for d in self.pci or () if d.bdf == bdf), None)

    def summary(self) -> dict[str, Any]:
        """The facts a person compares between hosts (also in JSON output)."""
        return {
            "os": f"{self.os.id} {self.os.version_id}".strip() if self.os else None,
            "kernel": self.kernel,
            "rocm": self.rocm_version,
            "amd_gpus": [d.bdf for d in self.amd_gpus] if self.pci is not None else None,
            "gpus": [f"{d.vendor_id}:{d.device_id}" for d in self.pci or () if d.is_gpu]
            if self.pci is not None
            else None,
            "pci_source": self.pci_source or None,
            "amdgpu_loaded": ("amdgpu" in self.modules) if self.modules is not None else None,
            "kfd": ("/dev/kfd" in self.devnodes) if self.devnodes is not None else None,
            "gpu_user": self.groups[0].user if self.groups else None,
            "gpu_user_groups": sorted(self.groups[0].groups) if self.groups else None,
            "gpu_users": {u.user: sorted(u.groups) if u.exists else None for u in self.groups}
            if self.groups
            else None,
            "gpu_manager": self.gpu_manager,
            "numa_balancing": self.numa_balancing,
            "torch": self.torch.version if self.torch else None,
            "rocm_source": self.rocm_source or None,
            "rocm_installs": [i.label for i in self.rocm_installs or ()],
            "gpu_metrics": self.gpu_metrics(),
        }

    def gpu_metrics(self) -> list[dict[str, Any]]:
        """Per AMD GPU: the live readings amd-smi gave (joined to the PCI address through
        amd-smi static / rocm-smi by index) and the PCIe link the PCI probes saw. Keys whose
        value is unknown are left out; a GPU amd-smi did not report still has its link."""
        bdf_of = {g.index: _full_bdf(g.bdf) for g in self.smi_gpus or () if g.bdf}
        rows: dict[str, dict[str, Any]] = {}
        for pos, d in enumerate(sorted(self.amd_gpus, key=lambda d: d.bdf)):
            row = rows.setdefault(d.bdf, {"gpu": str(pos), "bdf": d.bdf})
            port = slot_port(self, d)  # the slot's link, not the one to the on-card switch
            for key, value in (
                ("pcie_link_speed_gts", port.link_sta.speed_gts),
                ("pcie_link_width", port.link_sta.width),
                ("pcie_link_max_speed_gts", port.link_cap.speed_gts),
                ("pcie_link_max_width", port.link_cap.width),
            ):
                if value is not None:
                    row[key] = value
        for m in self.smi_metrics or ():
            bdf = bdf_of.get(m.index, "")
            row = rows.setdefault(bdf or f"gpu{m.index}", {"bdf": bdf})
            row["gpu"] = str(m.index)
            if m.temperatures_celsius:
                row["temperature_celsius"] = dict(m.temperatures_celsius)
            for key, value in (
                ("power_watts", m.power_watts),
                ("vram_used_bytes", m.vram_used_bytes),
                ("vram_total_bytes", m.vram_total_bytes),
                ("ecc_correctable", m.ecc_correctable),
                ("ecc_uncorrectable", m.ecc_uncorrectable),
            ):
                if value is not None:
                    row[key] = value
        return sorted(rows.values(), key=lambda r: (int(r["gpu"]), r["bdf"]))


def slot_port(facts: HostFacts, gpu: PciDevice) -> PciDevice:
    """The highest AMD bridge above the GPU (the card's upstream switch port), else the GPU."""
    port = gpu
    for _ in range(16):
        parent = facts.device(port.parent) if port.parent else None
        if parent is None or parent.vendor_id != AMD_VENDOR or not parent.is_bridge:
            return port
        port = parent
    return port


def _ok(out: ProbeOutput | None) -> str | None:
    """stdout when the probe ran; None when it is absent, missing or failed."""
    if out is None or out.status in ("missing", "timeout"):
        return None
    return out.stdout


def _said(out: ProbeOutput | None) -> str | None:
    """stdout of a probe that ran, or failed but printed something; None for a failure that
    printed nothing (dmesg refused to a user: an empty log is not a clean one)."""
    text = _ok(out)
    if out is not None and out.status == "failed" and not (text or "").strip():
        return None
    return text


def build_facts(bundle: Bundle) -> HostFacts:
    g = bundle.get
    status = {pid: out.status for pid, out in bundle.outputs.items()}
    pci, source, denied = _pci(g("pci-sysfs"), g("lspci"))
    text = _ok(g("os-release"))
    uname = _ok(g("uname"))
    cmd = _ok(g("cmdline"))
    packages = _parsed(g("packages"), parse_packages)
    torch = _torch(g("torch"))
    installs = _installs(g("rocm-installs"), g("rocm-version"), packages, torch, g("rocm-venvs"))
    system = [i for i in installs or () if i.layout != PIP]  # a venv's ROCm is not the host's
    rocm_version = system[0].version if system else (None if installs is None else "")
    rocm_source = system[0].stream if system else ""
    return HostFacts(
        host=bundle.host,
        probe_status=status,
        probe_notes={pid: n for pid, out in bundle.outputs.items() if (n := probe_note(out))},
        os=infer_os_release(text) if text is not None else None,
        kernel=parse_uname(uname) if uname is not None else None,
        cmdline=parse_cmdline(cmd) if cmd is not None else None,
        pci=pci,
        pci_source=source,
        lspci_caps_denied=denied,
        modules=_modules(g("lsmod"), g("amdgpu-initstate")),
        amdgpu_initstate=_initstate(g("amdgpu-initstate")),
        devnodes=_devnodes(g("kfd")),
        groups=_parsed(g("groups"), parse_groups),
        rocm_version=rocm_version,
        rocm_source=rocm_source,
        rocm_installs=installs,
        rocm_stray=stray_libraries(packages, installs or ()),
        rocm_ldconf=_parsed(g("rocm-installs"), parse_ldconf),
        rocminfo=_rocminfo(g("rocminfo")),
        smi_gpus=_smi(g("amd-smi-static"), g("rocm-smi")),
        smi_metrics=_metrics(g("amd-smi-metric")),
        gpu_health=build_health({p: _ok(g(p)) for p in HEALTH_PROBES}),
        dmesg=_said(g("dmesg")),
        dkms=tuple(parse_dkms(g("dkms").stdout))
        if g("dkms") and g("dkms").status == "ok"
        else (() if g("dkms") and g("dkms").status == "missing" else None),
        secureboot=_parsed(g("secureboot"), parse_secureboot),
        numa_balancing=_parsed(g("numa-balancing"), parse_int),
        gpu_manager=_gpu_manager(g("gpu-manager")),
        torch=torch,
        repo=_parsed(g("apt-rocm"), parse_apt_rocm),
        packages=packages,
        logs=_logs(bundle),
        containers=build_containers({p: _ok(g(p)) for p in CONTAINER_PROBES}),
    )


def _installs(
    records: ProbeOutput | None,
    version_file: ProbeOutput | None,
    packages: dict[str, str] | None,
    torch: TorchInfo | None = None,
    venvs: ProbeOutput | None = None,
) -> tuple[RocmInstall, ...] | None:
    """Every ROCm install the probes show (rocmprov.parse.rocm); None when nothing was looked at.
    Bundles from before the rocm-installs probe still carry /opt/rocm/.info/version."""
    found = list(_parsed(records, parse_version_records) or ())
    if version_file is not None and version_file.status == "ok":
        found.append(
            VersionRecord("/opt/rocm/.info/version", parse_version_file(version_file.stdout))
        )
    looked = (
        _ok(records) is not None
        or packages is not None
        or (version_file is not None and version_file.status in ("ok", "missing"))
    )
    kpacks, wheels = _parsed(records, parse_layout_marks) or ((), ())  # older bundles: here
    wheels += (_parsed(venvs, parse_layout_marks) or ((), ()))[1]
    if torch is not None and torch.rocm_sdk and torch.prefix.startswith("/"):
        wheels = (VersionRecord(torch.prefix, torch.rocm_sdk), *wheels)
    looked = looked or bool(wheels)
    if not looked:
        return None
    return find_installs(tuple(found), packages, kpacks=kpacks, wheels=wheels)


_DENIED = ("permission denied", "operation not permitted", "must be root", "are not root")


def probe_note(out: ProbeOutput) -> str:
    """Why a probe that did not succeed gave nothing: not installed, permission, timed out ...;
    "" when it ran. From its status and its own messages (the first 4 KiB of stderr)."""
    if out.status == "ok":
        return ""
    said = (out.stderr[:4096] + "\n" + out.stdout[:4096]).lower()
    if out.status == "timeout":
        return f"timed out after {out.duration:.0f} s" if out.duration else "timed out"
    if out.status == "missing":
        return "absent" if ": absent" in said else "not installed"
    if any(d in said for d in _DENIED):
        return "permission denied"
    return f"failed (exit {out.rc})"


def _gpu_manager(out: ProbeOutput | None) -> str | None:
    if out is not None and "systemctl: not found" in out.stdout + out.stderr:
        return "no-systemd"
    return _parsed(out, parse_unit_state)


def _logs(bundle: Bundle) -> dict[str, str]:
    """Raw text of the probes whose errors the troubleshooting table knows."""
    logs = {}
    for pid in ("dmesg", "rocminfo", "dkms", "torch"):
        out = bundle.get(pid)
        if out is not None and out.status != "missing":
            logs[pid] = out.stdout + ("\n" + out.stderr if out.stderr else "")
    return logs


def _parsed(out: ProbeOutput | None, parser: Any) -> Any:
    text = _ok(out)
    return parser(text) if text is not None else None


def _pci(
    sysfs: ProbeOutput | None, lspci: ProbeOutput | None
) -> tuple[tuple[PciDevice, ...] | None, str, bool]:
    from_lspci = parse_lspci(lspci.stdout) if lspci and lspci.status != "missing" else []
    denied = any(d.caps_denied for d in from_lspci)
    if sysfs is not None and sysfs.status == "ok" and sysfs.stdout.strip():
        named = {d.bdf: d for d in from_lspci}
        merged = []
        for d in parse_pci_sysfs(sysfs.stdout):
            other = named.get(d.bdf)
            if other is not None:
                d = replace(
                    d, name=other.name, caps_denied=other.caps_denied, downgraded=other.downgraded
                )
            merged.append(d)
        return tuple(merged), "sysfs", denied
    if from_lspci:
        return tuple(from_lspci), "lspci", denied
    if lspci is not None and lspci.status == "ok":
        return (), "lspci", denied
    return None, "", denied


def _modules(lsmod: ProbeOutput | None, init: ProbeOutput | None) -> frozenset[str] | None:
    mods = parse_modules(lsmod.stdout) if lsmod and lsmod.status == "ok" else None
    # /sys/module/amdgpu exists for a loaded module and for a built-in driver alike
    if init is not None and init.status == "ok":
        mods = (mods or frozenset()) | {"amdgpu"}
    if mods is None and init is not None and init.status == "missing" and lsmod is not None:
        mods = frozenset()
    return mods


def _initstate(out: ProbeOutput | None) -> str | None:
    if out is None:
        return None
    return out.stdout.strip() if out.status == "ok" else ""


def _devnodes(out: ProbeOutput | None) -> dict[str, DevNode] | None:
    if out is None or out.status in ("missing", "timeout"):
        return None
    return parse_ls_dev(out.stdout)


def _rocminfo(out: ProbeOutput | None) -> RocmInfo | None:
    if out is None or out.status in ("missing", "timeout"):
        return None
    return parse_rocminfo(out.stdout + "\n" + out.stderr)


def _smi(static: ProbeOutput | None, rocm_smi: ProbeOutput | None) -> tuple[SmiGpu, ...] | None:
    if static is not None and static.status == "ok":
        gpus = parse_amd_smi(static.stdout)
        if gpus:
            return tuple(gpus)
    if rocm_smi is not None and rocm_smi.status == "ok":
        return tuple(parse_rocm_smi(rocm_smi.stdout))
    return None


def _metrics(out: ProbeOutput | None) -> tuple[GpuMetrics, ...] | None:
    if out is None or out.status != "ok":
        return None
    return tuple(parse_amd_smi_metric(out.stdout))


def _full_bdf(bdf: str) -> str:
    """amd-smi's "0000:c1:00.0"; rocm-smi's "0000:C1:00.0" or "c1:00.0" -> 0000:c1:00.0."""
    bdf = bdf.strip().lower()
    return bdf if bdf.count(":") == 2 else f"0000:{bdf}"


def _torch(out: ProbeOutput | None) -> TorchInfo | None:
    if out is None or out.status == "timeout":
        return None
    if out.status == "missing":
        return TorchInfo(installed=False, error="python not found")
    return parse_torch(out.stdout)
