"""Change only what rocmprov owns (issue 26), the health and metrics roles on the session lab's
clean host: a slurm.conf that is a link to the cluster's shared copy is never written through
(r06), the HealthCheck lines rocmprov changes are recorded and put back by uninstall, an existing
node_exporter textfile directory keeps its owner and mode (r07), and `apply --check --tags
metrics` works on a host that never had the metrics role (r16)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.lab import Lab, LabHost
from tests.test_apply_lab import apply
from tests.test_owns_lab import inventory, sh

pytestmark = pytest.mark.lab

# A cluster's shared slurm.conf without a health check of its own (slurm.conf(5): the
# HealthCheck* parameters are optional; https://slurm.schedmd.com/slurm.conf.html).
SHARED = (
    "ClusterName=prod\nSlurmctldHost=ctl01\n"
    "NodeName=gpu[01-64] CPUs=128 Gres=gpu:8\nPartitionName=batch Nodes=ALL Default=YES\n"
)
NO_RECONFIGURE = json.dumps({"rocmprov_health_reconfigure": False})


def test_health_never_writes_through_a_linked_slurm_conf(
    lab: Lab, clean_host: LabHost, tmp_path: Path
) -> None:
    h = clean_host
    shared = h.root / "srv/shared/slurm/slurm.conf"
    shared.parent.mkdir(parents=True)
    shared.write_text(SHARED)
    sh(lab, h, "mkdir -p /etc/slurm && ln -s /srv/shared/slurm/slurm.conf /etc/slurm/slurm.conf")
    inv = inventory(lab, tmp_path, h, {})
    rc, doc, _ = apply(inv, tmp_path, "--tags", "health", "-e", NO_RECONFIGURE)
    assert rc != 0, json.dumps(doc["hosts"], indent=1)
    failed = doc["hosts"][0]["failed_task"]
    assert "link" in failed["message"] and "/srv/shared/slurm/slurm.conf" in failed["message"]
    assert shared.read_text() == SHARED, "the shared slurm.conf was rewritten"
    assert (h.root / "etc/slurm/slurm.conf").is_symlink()
    assert not (h.root / "usr/local/sbin/rocmprov-health-check").exists()


def test_health_uninstall_puts_back_the_sites_slurm_conf_lines(
    lab: Lab, clean_host: LabHost, tmp_path: Path
) -> None:
    h = clean_host
    site = SHARED + "HealthCheckInterval=60\nHealthCheckNodeState=ANY,CYCLE\n"
    conf = h.root / "etc/slurm/slurm.conf"
    conf.parent.mkdir(parents=True, exist_ok=True)
    conf.write_text(site)
    inv = inventory(lab, tmp_path, h, {})
    rc, doc, _ = apply(inv, tmp_path, "--tags", "health", "-e", NO_RECONFIGURE)
    assert rc == 0, json.dumps(doc["hosts"], indent=1)
    now = conf.read_text()
    assert "HealthCheckProgram=/usr/local/sbin/rocmprov-health-check" in now
    assert "HealthCheckInterval=300" in now and "HealthCheckInterval=60" not in now
    record = "/var/lib/rocmprov/health/slurm-conf.json"
    assert sh(lab, h, f"stat -c %a {record}").strip() == "600"
    assert json.loads((h.root / record.lstrip("/")).read_text())["lines"] == {
        "HealthCheckProgram": None,
        "HealthCheckInterval": "HealthCheckInterval=60",
        "HealthCheckNodeState": "HealthCheckNodeState=ANY,CYCLE",
    }
    # a second apply keeps the first record (what the site had, not rocmprov's own lines)
    rc, doc, _ = apply(inv, tmp_path, "--tags", "health", "-e", NO_RECONFIGURE)
    assert rc == 0, json.dumps(doc["hosts"], indent=1)
    rc, doc, _ = apply(inv, tmp_path, "--tags", "uninstall", "-e", NO_RECONFIGURE)
    assert rc == 0, json.dumps(doc["hosts"], indent=1)
    assert conf.read_text() == site
    assert not (h.root / "usr/local/sbin/rocmprov-health-check").exists()
    assert not (h.root / record.lstrip("/")).exists()


TEXTFILE = "/var/lib/prometheus/node-exporter"


def test_metrics_keeps_an_existing_textfile_directory_and_check_mode_works(
    lab: Lab, clean_host: LabHost, tmp_path: Path
) -> None:
    h = clean_host
    inv = inventory(lab, tmp_path, h, {})
    # r16: a host that never had the role (systemd does not know the timer yet)
    rc, doc, _ = apply(inv, tmp_path, "--check", "--tags", "metrics")
    assert rc == 0, json.dumps(doc["hosts"], indent=1)
    assert not (h.root / "etc/systemd/system/rocmprov-metrics.timer").exists()
    # r07: the site's collectors write into a setgid group directory (node_exporter's textfile
    # collector reads *.prom there: https://github.com/prometheus/node_exporter#textfile-collector)
    sh(
        lab,
        h,
        f"groupadd nodeexp && mkdir -p {TEXTFILE} && chown root:nodeexp {TEXTFILE} "
        f"&& chmod 2775 {TEXTFILE} && echo 'site_disk_ok 1' > {TEXTFILE}/site.prom",
    )
    rc, doc, _ = apply(inv, tmp_path, "--tags", "metrics")
    assert rc == 0, json.dumps(doc["hosts"], indent=1)
    assert sh(lab, h, f"stat -c %U:%G:%a {TEXTFILE}").strip() == "root:nodeexp:2775"
    assert sh(lab, h, "systemctl is-enabled rocmprov-metrics.timer").strip() == "enabled"
    rc, doc, _ = apply(inv, tmp_path, "--tags", "uninstall")
    assert rc == 0, json.dumps(doc["hosts"], indent=1)
    assert not (h.root / "etc/systemd/system/rocmprov-metrics.timer").exists()
    assert (h.root / TEXTFILE.lstrip("/") / "site.prom").read_text() == "site_disk_ok 1\n"
    assert sh(lab, h, f"stat -c %U:%G:%a {TEXTFILE}").strip() == "root:nodeexp:2775"


def test_metrics_uninstall_removes_the_textfile_directory_it_created(
    lab: Lab, clean_host: LabHost, tmp_path: Path
) -> None:
    h = clean_host
    inv = inventory(lab, tmp_path, h, {})
    assert not (h.root / TEXTFILE.lstrip("/")).exists()
    rc, doc, _ = apply(inv, tmp_path, "--tags", "metrics")
    assert rc == 0, json.dumps(doc["hosts"], indent=1)
    assert (h.root / TEXTFILE.lstrip("/")).is_dir()
    rc, doc, _ = apply(inv, tmp_path, "--tags", "uninstall")
    assert rc == 0, json.dumps(doc["hosts"], indent=1)
    assert not (h.root / TEXTFILE.lstrip("/")).exists()
    assert not (h.root / "var/lib/rocmprov/metrics").exists()
