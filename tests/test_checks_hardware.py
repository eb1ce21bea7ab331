"""pcie/gpu/dmesg checks on facts built from small probe texts (values from real captures)."""

from __future__ import annotations

from rocmprov.audit.host import audit_bundle
from rocmprov.checks.policy import Policy
from rocmprov.collect.bundle import Bundle, ProbeOutput


def _audit(**probes: str) -> dict[str, list[tuple[str, str, str]]]:
    outs = {k.replace("_", "-"): ProbeOutput(k.replace("_", "-"), "t", 0, v)
            for k, v in probes.items()}
    report = audit_bundle(Bundle("h", outs), Policy())
    found: dict[str, list[tuple[str, str, str]]] = {}
    for f in report.findings:
        found.setdefault(f.check, []).append((f.severity.value, f.subject, f.actual))
    return found


def _dev(bdf: str, path: str, cls: str, speed: str, width: int, mspeed: str, mwidth: int,
         resources: str = "", vendor: str = "0x1002") -> str:
    return (f"bdf {bdf}\npath {path}\nvendor {vendor}\ndevice 0x0000\nclass {cls}\n"
            f"current_link_speed {speed}\ncurrent_link_width {width}\n"
            f"max_link_speed {mspeed}\nmax_link_width {mwidth}\n{resources}\n")


ROOT = "/sys/devices/pci0000:00/0000:00:01.1"
VRAM_32G = ("resource 0x0000060000000000 0x00000607ffffffff 0x000000000014220c\n"
            "resource 0x0000000000000000 0x0000000000000000 0x0000000000000000\n"
            "resource 0x0000060800000000 0x00000608001fffff 0x000000000014220c\n")
VRAM_256M = ("resource 0x00000000c0000000 0x00000000cfffffff 0x000000000014220c\n"
             "resource 0x0000000000000000 0x0000000000000000 0x0000000000000000\n"
             "resource 0x00000000d0000000 0x00000000d01fffff 0x000000000014220c\n")


def _card(up_width: int, up_speed: str = "16.0 GT/s PCIe", bars: str = VRAM_32G) -> str:
    # the shape of tests/fixtures/sysfs/upstream-port-x8-vs-gpu-endpoint-x16-link-files.txt:
    # root port -> on-card upstream port 01:00.0 -> downstream 02:00.0 -> GPU 03:00.0 (32GT x16)
    return (
        _dev("0000:00:01.1", ROOT, "0x060400", "16.0 GT/s PCIe", 16, "16.0 GT/s PCIe", 16,
             vendor="0x1022")
        + _dev("0000:01:00.0", f"{ROOT}/0000:01:00.0", "0x060400", up_speed, up_width,
               "32.0 GT/s PCIe", 16)
        + _dev("0000:02:00.0", f"{ROOT}/0000:01:00.0/0000:02:00.0", "0x060400",
               "32.0 GT/s PCIe", 16, "32.0 GT/s PCIe", 16)
        + _dev("0000:03:00.0", f"{ROOT}/0000:01:00.0/0000:02:00.0/0000:03:00.0", "0x038000",
               "32.0 GT/s PCIe", 16, "32.0 GT/s PCIe", 16, bars)
    )


def test_slot_link_read_on_upstream_port_and_capped_by_root_port() -> None:
    found = _audit(pci_sysfs=_card(16))
    assert found["pcie.link.width"] == [("ok", "0000:03:00.0 (slot link at 0000:01:00.0)", "x16")]
    # the upstream port can do 32 GT/s but the root port only 16: 16 GT/s is full speed
    assert found["pcie.link.speed"][0][0] == "ok"


def test_lost_width_is_critical_lower_speed_is_warning() -> None:
    found = _audit(pci_sysfs=_card(8, "8.0 GT/s PCIe"))
    assert found["pcie.link.width"][0][:2] == ("critical",
                                                "0000:03:00.0 (slot link at 0000:01:00.0)")
    assert found["pcie.link.speed"][0][0] == "warning"


def test_small_vram_bar_with_doorbell_beside_it() -> None:
    found = _audit(pci_sysfs=_card(16, bars=VRAM_256M))
    assert found["pcie.bar"] == [("critical", "0000:03:00.0", "256M")]
    assert _audit(pci_sysfs=_card(16))["pcie.bar"][0][:2] == ("ok", "0000:03:00.0")


def test_caps_denied_gives_unknown_run_as_root() -> None:
    text = ("63:00.0 VGA compatible controller [0300]: Advanced Micro Devices, Inc. [AMD/ATI] "
            "Phoenix1 [1002:15bf]\n\tMemory at 7c00000000 (64-bit, prefetchable) [size=256M]\n"
            "\tCapabilities: <access denied>\n")
    found = _audit(lspci=text)
    assert found["pcie.link.width"][0][0] == found["pcie.link.speed"][0][0] == "unknown"


def test_gpu_count_disagreement_and_gfx_per_gpu() -> None:
    rocminfo = "".join(f"Agent {i}\n  Name: gfx90a\n  Device Type: GPU\n" for i in (1, 2))
    found = _audit(pci_sysfs=_card(16), rocminfo=rocminfo)
    assert found["gpu.count"][0][0] == "critical"
    assert len(found["gpu.gfx"]) == 2


def test_dmesg_not_collected_is_unknown_and_clean_log_ok() -> None:
    assert _audit(pci_sysfs=_card(16))["dmesg"][0][0] == "unknown"
    assert _audit(dmesg="[ 1.0] amdgpu 0000:03:00.0: amdgpu: SMU is initialized\n")["dmesg"] == [
        ("ok", "", "")]


def test_dmesg_probe_enomem_names_bar_fix() -> None:
    log = "[ 9.2] amdgpu 0000:83:00.0: amdgpu: Fatal error during GPU init\n" \
          "[ 9.3] amdgpu: probe of 0000:83:00.0 failed with error -12\n"
    found = _audit(dmesg=log)
    assert found["dmesg.amdgpu.probe_enomem"][0][:2] == ("critical", "0000:83:00.0")
    assert found["dmesg.amdgpu.init"][0][0] == "critical"
