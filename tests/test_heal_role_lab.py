"""The rocmprov_heal role on a real systemd host with a real Slurm: its timer runs this checkout's
`rocmprov heal` against the node's own slurmctld, again and again; bad settings change nothing;
a second apply changes nothing; --tags uninstall takes the units back and keeps heal's journal.

The host is its own controller and Slurm node (slurmctld + slurmd, munge, scontrol from
Debian's packages; paramiko and ansible-inventory from python3-paramiko and ansible-core);
rocmprov's pure-Python dependencies are copied in as for the metrics timer (the lab cannot
reach PyPI).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.lab import Lab, LabHost
from tests.test_apply_lab import apply
from tests.test_gate_slurm_lab import PACKAGES, Node, slurm_conf
from tests.test_metrics_lab import install_rocmprov
from tests.test_releases_lab import sh

pytestmark = pytest.mark.lab

UNITS = ("/etc/systemd/system/rocmprov-heal.service", "/etc/systemd/system/rocmprov-heal.timer")
TEXTFILE = "/var/lib/prometheus/node-exporter"


@pytest.fixture
def controller(lab: Lab) -> Iterator[Node]:
    """A pristine lab host running slurmctld and slurmd for itself, IDLE."""
    host = lab.reset(lab.hosts[-1])
    n = Node(lab, host)
    n.install([*PACKAGES, "slurm-client", "python3-paramiko", "ansible-core"])
    n.configure_slurm(slurm_conf(n, [n]))
    n.sh("systemctl", "restart", "munge")
    n.sh("systemctl", "restart", "slurmctld", "slurmd")
    n.wait_state(lambda s: s[0] == "IDLE", "slurmd to register", timeout=60)
    yield n
    lab.reset(host)


def controller_inventory(lab: Lab, host: LabHost, tmp: Path) -> Path:
    text = lab.inventory.read_text()
    inv = tmp / "controller.ini"
    inv.write_text(f"[lab]\n{host.name} ansible_host={host.address}\n\n"
                   + text[text.index("[lab:vars]"):])  # fmt: skip
    return inv


def unit_result(lab: Lab, host: LabHost) -> dict[str, str]:
    out = sh(lab, host, "systemctl show rocmprov-heal.service -p Result -p ExecMainStatus "
                        "-p ExecMainExitTimestampMonotonic -p ExecStart").stdout  # fmt: skip
    return dict(line.split("=", 1) for line in out.splitlines() if "=" in line)


def test_the_timer_runs_heal_against_slurm_and_uninstall_takes_it_back(
    lab: Lab, controller: Node, tmp_path: Path
) -> None:
    host = controller.host
    command = install_rocmprov(host)
    # the GPU nodes' inventory on the controller: here the node itself
    controller.put("/etc/rocmprov/nodes.ini", f"[gpu]\n{controller.name} ansible_host=127.0.0.1\n")
    controller.sh("install", "-d", TEXTFILE)
    inv = controller_inventory(lab, host, tmp_path)
    good = {
        "rocmprov_heal_command": command,
        "rocmprov_heal_inventory": "/etc/rocmprov/nodes.ini",
        "rocmprov_heal_drain": ["gpu.*", "user.groups"],
        "rocmprov_heal_metrics_dir": TEXTFILE,
        "rocmprov_heal_interval": "3s",
    }

    # Bad settings: one clear message, and nothing written on the host.
    for bad in ({"rocmprov_heal_inventory": "nodes.ini"},
                {"rocmprov_heal_drain": ["gpu.*; touch /tmp/pwned"]},
                {"rocmprov_heal_hook": "/usr/local/bin/hook %n"}):  # fmt: skip
        rc, doc, _ = apply(inv, tmp_path, "--tags", "heal", "-e", json.dumps({**good, **bad}))
        assert rc != 0, doc["hosts"]
        assert "rocmprov_heal:" in json.dumps(doc["hosts"]), doc["hosts"]
        for unit in UNITS:
            assert sh(lab, host, f"test -e {unit}", check=False).returncode != 0, unit

    rc, doc, _ = apply(inv, tmp_path, "--tags", "heal", "-e", json.dumps(good))
    assert rc == 0, json.dumps(doc["hosts"], indent=1)
    assert sh(lab, host, "systemctl is-active rocmprov-heal.timer").stdout.strip() == "active"
    args = unit_result(lab, host)["ExecStart"]
    assert "heal /etc/rocmprov/nodes.ini" in args and "--drain gpu.* --drain user.groups" in args

    # Two runs of heal by the timer, each finding the node IDLE (nothing to heal: exit 0) and
    # writing its metrics.
    runs: set[str] = set()
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and len(runs) < 2:  # bounded: two distinct runs
        res = unit_result(lab, host)
        if res.get("ExecMainExitTimestampMonotonic", "0") != "0":
            assert res["Result"] == "success" and res["ExecMainStatus"] == "0", (
                res,
                sh(lab, host, "journalctl -u rocmprov-heal -n 30 --no-pager").stdout,
            )
            runs.add(res["ExecMainExitTimestampMonotonic"])
        time.sleep(1)
    assert len(runs) >= 2, sh(lab, host, "journalctl -u rocmprov-heal -n 30 --no-pager").stdout
    assert "rocmprov_heal" in sh(lab, host, f"cat {TEXTFILE}/rocmprov_heal.prom").stdout
    assert controller.show() == ("IDLE", "")  # a healthy node is left as it is
    assert sh(lab, host, "stat -c %a /var/lib/rocmprov-heal").stdout.strip() == "700"

    rc, doc, _ = apply(inv, tmp_path, "--tags", "heal", "-e", json.dumps(good))
    assert rc == 0 and sum(h["changed"] for h in doc["hosts"]) == 0, doc["hosts"]

    rc, doc, _ = apply(inv, tmp_path, "--tags", "uninstall")
    assert rc == 0, json.dumps(doc["hosts"], indent=1)
    for unit in UNITS:
        assert sh(lab, host, f"test -e {unit}", check=False).returncode != 0, unit
    state = sh(lab, host, "systemctl is-active rocmprov-heal.timer", check=False).stdout.strip()
    assert state != "active", state
    # heal's journal is kept: apply did not write it, and the caps count what it says
    assert sh(lab, host, "test -d /var/lib/rocmprov-heal/heal", check=False).returncode == 0
