"""Change only what rocmprov owns (issue 26), whole-host snapshots on the session lab's clean
host, prepared as an admin's host: an own apt source (a site mirror), a package installed by
hand, a venv, a cluster slurm.conf and a node_exporter textfile directory other collectors
write to. `apply --check` changes nothing there (packages, files of /etc /opt /usr/local /srv
and rocmprov's state, unit states); apply + `--tags uninstall` gives the host back as it was."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.lab import Lab, LabHost
from tests.lab.amdrepo import Served
from tests.test_apply_lab import apply, kernel_headers_source, legacy_row, torch_wheels
from tests.test_owns_lab import inventory, sh

pytestmark = [pytest.mark.lab, pytest.mark.long]  # minutes in CI: scheduled first
__all__ = ["torch_wheels"]  # the fixture, used by name

SNAP = (
    "dpkg-query -W -f '${Package} ${Version} ${db:Status-Abbrev}\\n' | sed 's/^/pkg /'; "
    'getent group | awk -F: \'{print "group", $1":"$4}\'; '
    "getent passwd | awk -F: '{print \"user\", $1, $3, $7}'; "
    "find /etc /opt /usr/local /srv /var/lib/rocmprov /var/lib/prometheus -xdev "
    "\\( -path /etc/ssh -o -path /etc/ld.so.cache \\) -prune -o "
    "-printf 'path %p %m %u:%g %l\\n' 2>/dev/null; "
    "find /etc /opt /usr/local /srv -xdev \\( -path /etc/ssh -o -path /etc/ld.so.cache \\) "
    "-prune -o -type f -exec sha256sum {} + 2>/dev/null "
    "| grep -Ev ' /etc/(passwd|shadow|group|gshadow)-?$' | sed 's/^/sha /'; "
    "systemctl list-unit-files --no-legend --no-pager | awk '{print \"unit\", $1, $2}'; "
    "systemctl list-units --no-legend --no-pager --plain --state=active "
    "| awk '$1 !~ /[.](scope|device|mount|swap)$|^user@|^session-/ {print \"active\", $1}'; true"
)
SITE_CONF = (
    "ClusterName=prod\nSlurmctldHost=ctl01\n"
    "NodeName=gpu[01-64] CPUs=128 Gres=gpu:8\nPartitionName=batch Nodes=ALL Default=YES\n"
)
TEXTFILE = "/var/lib/prometheus/node-exporter"


def _admins_host(lab: Lab, h: LabHost, tmp: Path, linked_slurm_conf: bool) -> None:
    kernel_headers_source(lab, h, tmp)
    # the site's own mirror of ROCm, one-line (commented: the lab has no such mirror)
    (h.root / "etc/apt/sources.list.d/rocm.list").write_text(
        "# site mirror of ROCm\n"
        "# deb [arch=amd64] http://mirror.corp.invalid/rocm/apt/6.1 jammy main\n"
    )
    conf = h.root / ("srv/shared/slurm/slurm.conf" if linked_slurm_conf else "etc/slurm/slurm.conf")
    conf.parent.mkdir(parents=True, exist_ok=True)
    conf.write_text(SITE_CONF)
    out = sh(
        lab,
        h,
        "set -e; apt-get update >/dev/null 2>&1; "
        "apt-get install -y lm-sensors python3-venv >/dev/null 2>&1; "
        "python3 -m venv /opt/ml && mkdir -p /opt/ml/runs && echo 1 > /opt/ml/runs/results.csv; "
        + (
            "mkdir -p /etc/slurm && ln -s /srv/shared/slurm/slurm.conf /etc/slurm/slurm.conf; "
            if linked_slurm_conf
            else ""
        )
        + f"groupadd nodeexp && mkdir -p {TEXTFILE} && chown root:nodeexp {TEXTFILE} "
        f"&& chmod 2775 {TEXTFILE} && echo 'site_disk_ok 1' > {TEXTFILE}/site.prom && echo ready",
    )
    assert out.strip().endswith("ready"), out


def _vars(amd_mirror: Served, torch_wheels: str) -> dict[str, object]:
    return {
        "rocmprov_repo_source": "amd",
        "rocmprov_mirrors": amd_mirror.mirrors,
        "rocmprov_rocm_version": str(legacy_row()["version"]),
        "rocmprov_driver_force": True,  # no GPU in the lab: the driver path anyway
        "rocmprov_torch_wheel_dir": torch_wheels,
        "rocmprov_firmware_refresh": False,
        "rocmprov_gpu_users": ["admin"],
        "rocmprov_health_reconfigure": False,
    }


# the test's own ssh login (logind's per-user units and the session scope), not the run's
SESSION = ("unit user-", "unit user@", "unit session-", "active user-", "active user@")


def _diff(before: set[str], after: set[str]) -> tuple[list[str], list[str]]:
    def kept(lines: set[str]) -> list[str]:
        return sorted(x for x in lines if not x.startswith(SESSION))

    return kept(before - after), kept(after - before)


def test_check_mode_changes_nothing_on_an_admins_host(
    lab: Lab, clean_host: LabHost, amd_mirror: Served, torch_wheels: str, tmp_path: Path
) -> None:
    h = clean_host
    _admins_host(lab, h, tmp_path, linked_slurm_conf=True)
    sh(lab, h, "apt-get install -y fwupd >/dev/null 2>&1; systemctl stop fwupd.service")
    before = set(sh(lab, h, SNAP).splitlines())
    inv = inventory(lab, tmp_path, h, _vars(amd_mirror, torch_wheels))
    rc, doc, _ = apply(inv, tmp_path, "--check", "--diff", "--tags", "all,metrics")
    assert rc == 0, json.dumps(doc["hosts"], indent=1)
    # the health role in check mode on the linked slurm.conf: refused, as apply would be
    rc, doc, _ = apply(inv, tmp_path, "--check", "--tags", "health")
    assert rc != 0 and "link" in doc["hosts"][0]["failed_task"]["message"]
    gone, new = _diff(before, set(sh(lab, h, SNAP).splitlines()))
    assert (gone, new) == ([], []), "apply --check changed the host"


def test_apply_then_uninstall_gives_the_host_back(
    lab: Lab, clean_host: LabHost, amd_mirror: Served, torch_wheels: str, tmp_path: Path
) -> None:
    h = clean_host
    _admins_host(lab, h, tmp_path, linked_slurm_conf=False)
    before = set(sh(lab, h, SNAP).splitlines())
    inv = inventory(lab, tmp_path, h, _vars(amd_mirror, torch_wheels))
    rc, doc, _ = apply(inv, tmp_path, "--tags", "all,health,metrics", timeout=1800)
    assert rc == 0, json.dumps(doc["hosts"], indent=1)
    assert "ii" in sh(lab, h, "dpkg-query -W -f '${db:Status-Abbrev}' fwupd")
    rc, doc, _ = apply(inv, tmp_path, "--tags", "uninstall", timeout=1800)
    assert rc == 0, json.dumps(doc["hosts"], indent=1)
    gone, new = _diff(before, set(sh(lab, h, SNAP).splitlines()))

    # the accounts files are compared as accounts (above): system accounts that packages'
    # maintainer scripts made (fwupd-refresh, tss) stay, as apt's purge leaves them: empty
    # groups, and system users without a login shell
    def maintainer_account(x: str) -> bool:
        if x.startswith("group "):
            return x.endswith(":")
        f = x.split()
        return f[0] == "user" and int(f[2]) < 1000 and f[3].endswith(("nologin", "false"))

    new = [x for x in new if not maintainer_account(x)]
    print("gone:", *gone, "new:", *new, sep="\n")
    assert (gone, new) == ([], []), "apply + uninstall did not give the host back"
