"""Change only what rocmprov owns (issue 26), units, groups and packages on the session lab's
clean host: gpu-manager's earlier state is recorded and given back by uninstall, and a host with
a display manager keeps it (r10); uninstall takes back the group memberships, groups and fwupd
that apply added (r11); `apply --check` starts no fwupd (r12)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.lab import Lab, LabHost
from tests.test_apply_lab import apply
from tests.test_owns_lab import inventory, sh

pytestmark = pytest.mark.lab

# A stand-in for Ubuntu's gpu-manager.service (the lab runs Debian, which has none): what the
# role reads is only the unit's name and systemd's enabled/masked state.
GPU_MANAGER = (
    "[Unit]\nDescription=stand-in for Ubuntu's gpu-manager\n[Service]\nType=oneshot\n"
    "ExecStart=/bin/true\n[Install]\nWantedBy=multi-user.target\n"
)


def _gpu_manager(lab: Lab, h: LabHost) -> None:
    (h.root / "usr/lib/systemd/system/gpu-manager.service").write_text(GPU_MANAGER)
    sh(lab, h, "systemctl daemon-reload && systemctl enable gpu-manager.service")


def _state(lab: Lab, h: LabHost, unit: str) -> str:
    return sh(lab, h, f"systemctl is-enabled {unit}").strip()


def test_gpu_manager_state_is_recorded_and_given_back(
    lab: Lab, clean_host: LabHost, tmp_path: Path
) -> None:
    h = clean_host
    _gpu_manager(lab, h)
    assert _state(lab, h, "gpu-manager.service") == "enabled"
    inv = inventory(lab, tmp_path, h, {})
    rc, doc, _ = apply(inv, tmp_path, "--tags", "gpu_manager")
    assert rc == 0, json.dumps(doc["hosts"], indent=1)
    assert _state(lab, h, "gpu-manager.service") == "masked"
    record = json.loads((h.root / "var/lib/rocmprov/gpu-manager.json").read_text())
    assert record == {"unit": "gpu-manager.service", "enabled": "enabled"}
    rc, doc, _ = apply(inv, tmp_path, "--tags", "uninstall")
    assert rc == 0, json.dumps(doc["hosts"], indent=1)
    assert _state(lab, h, "gpu-manager.service") == "enabled"
    assert not (h.root / "var/lib/rocmprov/gpu-manager.json").exists()


def test_gpu_manager_is_kept_on_a_host_with_a_display_manager(
    lab: Lab, clean_host: LabHost, tmp_path: Path
) -> None:
    h = clean_host
    _gpu_manager(lab, h)
    # display-manager.service: the alias a display manager's unit installs (systemd.special(7))
    (h.root / "usr/lib/systemd/system/standin-dm.service").write_text(
        "[Unit]\nDescription=stand-in display manager\n[Service]\nExecStart=/bin/sleep infinity\n"
        "[Install]\nAlias=display-manager.service\n"
    )
    sh(lab, h, "systemctl daemon-reload && systemctl enable standin-dm.service")
    inv = inventory(lab, tmp_path, h, {})
    rc, doc, _ = apply(inv, tmp_path, "--tags", "gpu_manager")
    assert rc == 0, json.dumps(doc["hosts"], indent=1)
    assert _state(lab, h, "gpu-manager.service") == "enabled"


SNAP = (
    "dpkg-query -W -f '${Package} ${db:Status-Abbrev}\\n' | awk '$2 ~ /^.i/ {print \"pkg\", $1}'; "
    'getent group | awk -F: \'{print "group", $1":"$4}\'; '
    "find /etc /var/lib/rocmprov -xdev -path /etc/ssh -prune -o -printf 'file %p %m\\n' "
    "2>/dev/null; true"
)


def test_uninstall_takes_back_groups_and_fwupd_apply_added(
    lab: Lab, clean_host: LabHost, tmp_path: Path
) -> None:
    h = clean_host
    sh(lab, h, "useradd -m alice && apt-get update >/dev/null 2>&1")
    assert "fwupd" not in sh(lab, h, "dpkg-query -W -f '${db:Status-Abbrev}' fwupd 2>/dev/null")
    before = set(sh(lab, h, SNAP).splitlines())
    inv = inventory(
        lab, tmp_path, h, {"rocmprov_gpu_users": ["alice"], "rocmprov_firmware_refresh": False}
    )
    rc, doc, _ = apply(inv, tmp_path, "--tags", "users,firmware", timeout=1500)
    assert rc == 0, json.dumps(doc["hosts"], indent=1)
    groups = sh(lab, h, "id -nG alice").split()
    assert {"render", "video"} <= set(groups)
    assert "ii" in sh(lab, h, "dpkg-query -W -f '${db:Status-Abbrev}' fwupd")
    rc, doc, _ = apply(inv, tmp_path, "--tags", "uninstall", timeout=1500)
    assert rc == 0, json.dumps(doc["hosts"], indent=1)
    after = set(sh(lab, h, SNAP).splitlines())
    # system groups made by the packages' maintainer scripts (fwupd-refresh, tss) stay, as apt
    # purge leaves them (files may still belong to them); empty, and none of the GPU groups
    made = sorted(after - before)
    left = [x for x in made if not (x.startswith("group ") and x.endswith(":"))]
    assert left == [], ("left by apply after uninstall", made)
    assert not [x for x in made if x.startswith(("group render", "group video"))]
    assert sorted(before - after) == [], ("taken by apply + uninstall", sorted(before - after))


def test_check_mode_starts_no_fwupd(lab: Lab, clean_host: LabHost, tmp_path: Path) -> None:
    h = clean_host
    sh(lab, h, "apt-get update >/dev/null 2>&1; apt-get install -y fwupd >/dev/null 2>&1")
    sh(lab, h, "systemctl stop fwupd.service")
    assert sh(lab, h, "systemctl is-active fwupd.service").strip() != "active"
    snap = (
        "find /etc/fwupd /var/lib/fwupd /var/cache/fwupd -printf '%p %m %s\\n' 2>/dev/null | sort"
    )
    before = sh(lab, h, snap)
    inv = inventory(lab, tmp_path, h, {})
    rc, doc, _ = apply(inv, tmp_path, "--check", "--tags", "firmware")
    assert rc == 0, json.dumps(doc["hosts"], indent=1)
    assert sh(lab, h, "systemctl is-active fwupd.service").strip() != "active"
    assert sh(lab, h, snap) == before
