"""A probe that gave nothing is its own state (issue 29): the finding names the probe and why
(not installed, permission, timed out, not in the bundle), and never says anything about the
hardware ("no AMD GPU"). Probe outputs below are built the way the collector records them
(rocmprov/collect/probes.py: exit 127 + "<tool>: not installed" on stderr for a missing tool,
124 for a timeout); the stderr texts are util-linux dmesg's and journalctl's own refusals."""

from __future__ import annotations

from rocmprov.audit.host import audit_bundle
from rocmprov.checks.policy import Policy
from rocmprov.collect.bundle import Bundle, ProbeOutput
from rocmprov.facts.host import build_facts
from rocmprov.model import Severity


def _out(pid: str, rc: int, stdout: str = "", stderr: str = "", duration: float = 0.0):
    return ProbeOutput(id=pid, command="x", rc=rc, stdout=stdout, stderr=stderr, duration=duration)


def _bundle() -> Bundle:
    outs = [
        _out("pci-sysfs", 124, duration=30.0),
        _out("lspci", 127, stderr="lspci: not installed\n"),
        _out("dmesg", 1, stderr="dmesg: read kernel buffer failed: Operation not permitted\n"
             "Hint: You are currently not seeing messages from other users and the system.\n"),
        _out("amd-smi-static", 127, stderr="amd-smi: not installed\n"),
        _out("uname", 0, stdout="6.8.0-55-generic\n"),
    ]
    return Bundle(host="h", outputs={o.id: o for o in outs})


def test_probe_notes_say_why() -> None:
    facts = build_facts(_bundle())
    assert facts.why("pci-sysfs") == "timed out after 30 s"
    assert facts.why("lspci") == "not installed"
    assert facts.why("dmesg") == "permission denied"
    assert facts.why("rocminfo") == "not in the bundle"
    assert facts.why("uname") == "ran (ok), nothing usable"


def test_uncollected_pci_is_never_no_amd_gpu() -> None:
    report = audit_bundle(_bundle(), Policy())
    by = {}
    for f in report.findings:
        by.setdefault(f.check, []).append(f)
    assert not [f for f in report.findings if "no AMD GPU" in f.summary], [
        (f.check, f.summary) for f in report.findings if "no AMD GPU" in f.summary
    ]
    present = by["gpu.amd.present"][0]
    assert present.severity is Severity.UNKNOWN
    assert "pci-sysfs: timed out after 30 s" in present.summary
    assert "lspci: not installed" in present.summary
    for check in ("driver.amdgpu", "driver.kfd", "gpu.count", "gpu.gfx", "pcie.bar",
                  "pcie.link.width", "kernel.iommu", "gpu.ecc.uncorrectable", "gpu.throttle"):
        (f,) = by[check][:1]
        assert f.severity is Severity.UNKNOWN and f.summary.startswith("not collected: pci-sysfs")
    (dmesg,) = by["dmesg"]
    assert dmesg.severity is Severity.UNKNOWN and "dmesg: permission denied" in dmesg.summary


def test_no_gpu_host_still_says_so_and_health_names_missing_tools() -> None:
    # the same host, its sysfs read fine and listing only an NVIDIA GPU (10de:2335, class 0302)
    sysfs = "bdf 0000:18:00.0\npath /sys/devices/pci0000:17/0000:17:00.0/0000:18:00.0\n" \
        "vendor 0x10de\ndevice 0x2335\nclass 0x030200\n\n"
    outs = dict(_bundle().outputs)
    outs["pci-sysfs"] = _out("pci-sysfs", 0, stdout=sysfs)
    report = audit_bundle(Bundle(host="h", outputs=outs), Policy())
    present = next(f for f in report.findings if f.check == "gpu.amd.present")
    assert "no AMD GPU" in present.summary
    amdgpu = next(f for f in report.findings if f.check == "driver.amdgpu")
    assert amdgpu.severity is Severity.SKIPPED and "no AMD GPU" in amdgpu.summary


def test_health_reads_amd_smi_when_only_the_pci_probes_failed() -> None:
    from tests.fixtureload import FIXTURES, load

    metric = load(FIXTURES / "amd-smi-health" / "metric-text-ecc-ecc-blocks-deferred-changelog.txt")
    outs = dict(_bundle().outputs)
    outs["amd-smi-metric"] = _out("amd-smi-metric", 0, stdout=metric.text)
    report = audit_bundle(Bundle(host="h", outputs=outs), Policy())
    ecc = [f for f in report.findings if f.check == "gpu.ecc.uncorrectable"]
    assert [f.severity for f in ecc] == [Severity.OK]  # amd-smi spoke for its GPU


def test_a_gpu_rocminfo_saw_is_not_unknown_when_only_pci_failed() -> None:
    """The PCI probes gave nothing, but rocminfo (a real capture: one MI300X VF, gfx942) lists
    a GPU agent: the checks that do not need PCI go on, and no finding says whether there is an
    AMD GPU is unknown. The PCI-only checks (count by PCI, link, BAR) stay 'not collected'."""
    from tests.fixtureload import FIXTURES, load

    rocminfo = load(FIXTURES / "rocminfo" / "gfx942-mi300x-vf-rocm6.4-vm.txt").text
    outs = dict(_bundle().outputs)
    outs["rocminfo"] = _out("rocminfo", 0, stdout=rocminfo)
    outs["lsmod"] = _out("lsmod", 0, stdout="Module Size Used by\namdgpu 12345 0\n")
    report = audit_bundle(Bundle(host="h", outputs=outs), Policy())
    by = {f.check: f for f in report.findings}
    assert by["gpu.gfx"].severity is not Severity.UNKNOWN
    assert "gfx942" in by["gpu.gfx"].summary
    assert by["driver.amdgpu"].severity is Severity.OK
    assert all("unknown" not in f.summary for f in report.findings if "AMD GPU is" in f.summary)
    assert by["pcie.bar"].severity is Severity.UNKNOWN
    assert by["gpu.count"].severity is Severity.UNKNOWN


def test_kernel_log_a_user_cannot_read_is_not_a_clean_log() -> None:
    """The real dmesg probe run as an unprivileged user (nobody: not root, not in adm, wheel or
    systemd-journal; here kernel.dmesg_restrict=1): dmesg is refused and `journalctl -k -q`
    reads only the user's own journal, printing nothing with exit 0, which read as 'no error in
    the kernel log'. The probe must either print kernel lines or fail, saying why."""
    import os
    import subprocess

    from rocmprov.collect.probes import build_probes

    (probe,) = [p for p in build_probes() if p.id == "dmesg"]
    as_nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
    argv = [*(as_nobody if os.geteuid() == 0 else []), "bash", "-c", probe.command]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=60, cwd="/")
    out = _out("dmesg", proc.returncode, stdout=proc.stdout, stderr=proc.stderr)
    assert proc.stdout.strip() or proc.returncode != 0
    if not proc.stdout.strip():
        report = audit_bundle(Bundle(host="h", outputs={"dmesg": out}), Policy())
        (f,) = [f for f in report.findings if f.check == "dmesg"]
        assert f.severity is Severity.UNKNOWN and "permission denied" in f.summary
