"""rocmprov repair: remedies linked by data, plans, outcomes; and a legacy host broken in five
ways repaired by one run on the lab, while a real AMD machine's BIOS problems go to a human."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from rocmprov.actions.repair import bios_checklist, outcomes, plan, remedies
from rocmprov.checks import CHECKS  # noqa: F401  (every check module imports cleanly)
from rocmprov.model import AuditResult, Finding, HostReport, Severity
from tests.fixtureload import FIXTURES, load
from tests.helpers import rocmprov
from tests.lab import Lab, LabHost
from tests.lab.amdrepo import Served

pytestmark = pytest.mark.long  # its lab test takes minutes in CI: scheduled first

DOCS_CHECKS = Path(__file__).resolve().parent.parent / "docs" / "checks.md"


def _report(host: str, *findings: Finding) -> HostReport:
    return HostReport(host, findings)


def test_every_remedy_names_a_real_tag_or_checklist_entry() -> None:
    site = yaml.safe_load(
        (Path(__file__).resolve().parent.parent / "playbooks" / "site.yml").read_text()
    )
    tags = {t for play in site for role in play["roles"] for t in role.get("tags", [])}
    for check, remedy in remedies()["software"].items():
        assert set(remedy["tags"]) <= tags, check
    for check, key in remedies()["human"].items():
        assert key is None or key in bios_checklist(), check


def test_plan_maps_findings_to_tags_and_hardware_to_a_checklist() -> None:
    before = AuditResult(
        (
            _report(
                "a",
                Finding("user.groups", Severity.CRITICAL, "bob not in render", subject="bob"),
                Finding("repo.pin", Severity.WARNING, "pin at 500"),
                Finding("pcie.bar", Severity.CRITICAL, "VRAM BAR 256M", subject="0000:03:00.0"),
                Finding("kernel.numa_balancing", Severity.OK, "off"),
            ),
            _report("b", Finding("service.gpu-manager", Severity.OK, "masked")),
            HostReport("c", failure="timeout", message="no answer"),
        )
    )
    p = plan(before)
    assert p.hosts == ("a",)
    assert p.tags["a"] == ("repo", "users")
    (step,) = p.human
    assert step.finding.check == "pcie.bar"
    assert any("0000:03:00.0" in cmd for cmd in step.prove)
    assert (
        any("Above 4G" in row.get("menu", "") + row.get("setting", "") for row in step.bios)
        or "Above 4G" in step.title
    )


def test_outcomes_fixed_still_broken_and_human() -> None:
    bad = [
        Finding("user.groups", Severity.CRITICAL, "bob not in render", subject="bob"),
        Finding("repo.pin", Severity.WARNING, "pin at 500"),
        Finding("pcie.link.width", Severity.CRITICAL, "x8", subject="0000:03:00.0"),
    ]
    before = AuditResult((_report("a", *bad),))
    after = AuditResult(
        (
            _report(
                "a",
                Finding("user.groups", Severity.OK, "bob in render", subject="bob"),
                Finding("repo.pin", Severity.WARNING, "pin at 500"),
                bad[2],
            ),
        )
    )
    states = {o.check: o.state for o in outcomes(before, after, plan(before))}
    assert states == {
        "user.groups": "fixed",
        "repo.pin": "still broken",
        "pcie.link.width": "needs a human",
    }


# --- on the lab: one legacy host, five breakages, one repair -----------------------------


DEBIAN_12 = {"distribution": "Debian", "distribution_version": "12", "os_family": "Debian"}


def _legacy() -> tuple[str, dict]:
    """The newest legacy release with amdgpu + graphics repositories (the lab is Debian 12)."""
    from rocmprov.knowledge import releases
    from tests.test_releases_lab import legacy_full

    version = str(legacy_full()["version"])
    return version, releases.resolve(version, DEBIAN_12)


def _break(lab: Lab, host: LabHost, mirror: Served) -> None:
    root = host.root
    _version, upstream = _legacy()
    key = mirror.repos.key_text(upstream["key_url"])
    (root / "etc/apt/keyrings").mkdir(parents=True, exist_ok=True)
    (root / "etc/apt/keyrings/rocm.asc").write_text(key)
    (root / "etc/apt/sources.list.d/rocm.sources").write_text(
        f"Types: deb\nURIs: {mirror.mirror(upstream['rocm_url'])}\nSuites: {upstream['suite']}\n"
        "Components: main\nArchitectures: amd64\nSigned-By: /etc/apt/keyrings/rocm.asc\n"
    )
    # wrong apt pin
    (root / "etc/apt/preferences.d/rocmprov-radeon-pin").write_text(
        f"Package: *\nPin: release o={upstream['pin_origin']}\nPin-Priority: 400\n"
    )
    sh = ["sh", "-c"]
    # stale key: a second copy where the apt-key era put it (trusted for every repository)
    lab.exec(
        host, [*sh, "gpg --dearmor < /etc/apt/keyrings/rocm.asc > /etc/apt/trusted.gpg.d/rocm.gpg"]
    )
    # a GPU user without render/video
    lab.exec(host, ["useradd", "-m", "gpuuser"])
    # gpu-manager unit exists and is enabled (where Ubuntu's package puts it)
    (root / "usr/lib/systemd/system/gpu-manager.service").write_text(
        "[Unit]\nDescription=stand-in for Ubuntu's gpu-manager\n[Service]\nType=oneshot\n"
        "ExecStart=/bin/true\n[Install]\nWantedBy=multi-user.target\n"
    )
    lab.exec(host, ["systemctl", "daemon-reload"])
    lab.exec(host, ["systemctl", "enable", "gpu-manager.service"])
    # ROCm package removed: the release's meta-package is not installed (nothing of ROCm is)


def _inventory(lab: Lab, host: LabHost, mirror: Served, tmp: Path) -> Path:
    text = lab.inventory.read_text()
    group_vars = text[text.index("[lab:vars]") :]
    host_vars = {
        "rocmprov_repo_source": "amd",
        "rocmprov_mirrors": mirror.mirrors,
        "rocmprov_rocm_version": _legacy()[0],
        "rocmprov_gpu_users": ["gpuuser"],
        "rocmprov_gpu_user": "gpuuser",
        "rocmprov_torch_enabled": False,
        "rocmprov_firmware_refresh": False,
    }
    (tmp / "host_vars").mkdir()
    (tmp / "host_vars" / f"{host.name}.yml").write_text(yaml.safe_dump(host_vars))
    inv = tmp / "inventory.ini"
    inv.write_text(f"[lab]\n{host.name} ansible_host={host.address}\n\n{group_vars}\n")
    return inv


BROKEN = {"user.groups", "service.gpu-manager", "repo.pin", "repo.key", "rocm.packages"}


@pytest.mark.lab
def test_legacy_host_broken_five_ways_is_repaired_in_one_run(
    lab: Lab, clean_host: LabHost, amd_mirror: Served, tmp_path: Path
) -> None:
    _break(lab, clean_host, amd_mirror)
    inv = _inventory(lab, clean_host, amd_mirror, tmp_path)
    before = json.loads(rocmprov("audit", str(inv), "--format", "json").stdout)
    bad = {
        f["check"]
        for f in before["hosts"][0]["findings"]
        if f["severity"] in ("warning", "critical")
    }
    assert bad >= BROKEN, before["hosts"][0]["findings"]

    plan_run = rocmprov(
        "repair",
        str(inv),
        "--check",
        "--format",
        "json",
        env={"XDG_STATE_HOME": str(tmp_path / "state")},
    )
    assert plan_run.stdout, plan_run.stderr
    planned = json.loads(plan_run.stdout)
    assert planned["apply"] is None  # --check stops at the plan
    assert set(planned["plan"]["tags"][clean_host.name]) == {
        "gpu_manager",
        "packages",
        "repo",
        "users",
    }
    run = rocmprov(
        "repair", str(inv), "--format", "json", env={"XDG_STATE_HOME": str(tmp_path / "state")}
    )
    assert run.stdout, run.stderr
    doc = json.loads(run.stdout)
    assert doc["schema"] == "rocmprov.repair/1"
    assert doc["apply"]["status"] == "successful", json.dumps(doc["apply"]["hosts"])
    states = {o["check"]: o["state"] for o in doc["outcomes"]}
    for check in BROKEN:
        assert states[check] == "fixed", (check, doc["outcomes"])
    # no AMD GPU in the lab: that one is for a human, and nothing is still broken
    assert states["gpu.amd.present"] == "needs a human"
    assert "still broken" not in states.values()
    assert run.rc == 1

    after = json.loads(rocmprov("audit", str(inv), "--format", "json").stdout)
    for f in after["hosts"][0]["findings"]:
        if f["check"] in BROKEN:
            assert f["severity"] == "ok", f
    assert (
        "masked"
        in lab.exec(
            clean_host, ["systemctl", "is-enabled", "gpu-manager.service"], check=False
        ).stdout
    )


def test_real_machine_with_downgraded_link_and_256m_bar_gets_the_bios_checklist() -> None:
    """A complete `lspci -vvnn` of a real RX 580 server (linux-hardware.org probe): the slot
    runs at Gen2 (BIOS-capped) and the VRAM BAR is 256M. Both go to a human, with the BIOS
    items and the commands that prove the fix, on the right PCI addresses."""
    from rocmprov.audit.host import audit_bundle
    from rocmprov.collect.bundle import Bundle, ProbeOutput

    name = "rx580-tb250-btc-full-lspci-vvnn-gen2-capped-slot-256m-bar.txt"
    text = load(FIXTURES / "lspci" / name).text
    report = audit_bundle(Bundle("rig", {"lspci": ProbeOutput("lspci", "lspci -vvnn", 0, text)}))
    p = plan(AuditResult((report,)))
    steps = {s.finding.check: s for s in p.human}
    assert {"pcie.bar", "pcie.link.speed"} <= set(steps)
    bar = steps["pcie.bar"]
    assert bar.finding.subject == "0000:01:00.0"
    assert any("Above 4G" in str(row) for row in bar.bios)
    assert any("0000:01:00.0" in cmd for cmd in bar.prove)
    assert "BIOS" in steps["pcie.link.speed"].finding.summary  # the capped slot is named
    assert p.tags["rig"] == ()  # nothing for Ansible to do: hardware only
