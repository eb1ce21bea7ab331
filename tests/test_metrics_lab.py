"""The rocmprov_metrics role on a real systemd host: its timer runs the quick audit and writes
rocmprov.prom into node_exporter's textfile directory, atomically, again and again (issue 15).

The lab host runs this checkout's rocmprov with its pure-Python dependencies copied in (the
lab cannot reach PyPI): the same code, the host's own python3 (3.11, as here) and systemd.
"""

from __future__ import annotations

import json
import shutil
import sys
import time
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.lab import Lab, LabHost
from tests.test_apply_lab import apply
from tests.test_releases_lab import sh

pytestmark = pytest.mark.lab

REPO = Path(__file__).resolve().parent.parent
DEPS = (
    "yaml",
    "_yaml",
    "rich",
    "markdown_it",
    "mdurl",
    "pygments",
    "distro",
    "pyudev",
    "packaging",
    "prometheus_client",
)
TEXTFILE = "/var/lib/prometheus/node-exporter"


def install_rocmprov(host: LabHost) -> str:
    """This checkout's rocmprov and its runtime dependencies under /opt/rocmprov-test."""
    dest = host.root / "opt/rocmprov-test"
    shutil.copytree(
        REPO / "rocmprov", dest / "rocmprov", ignore=shutil.ignore_patterns("__pycache__")
    )
    shutil.copytree(
        REPO / "playbooks", dest / "playbooks", ignore=shutil.ignore_patterns("__pycache__")
    )
    site = Path(next(p for p in sys.path if p.endswith("site-packages")))
    for name in DEPS:
        if (site / name).exists():
            shutil.copytree(site / name, dest / name, ignore=shutil.ignore_patterns("__pycache__"))
    return "/usr/bin/env PYTHONPATH=/opt/rocmprov-test /usr/bin/python3 -m rocmprov"


def metrics(lab: Lab, host: LabHost) -> dict[str, float]:
    text = sh(lab, host, f"cat {TEXTFILE}/rocmprov.prom").stdout
    out = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            out[sample.name] = sample.value
    return out


def test_the_timer_writes_the_textfile_again_and_again(
    lab: Lab, clean_host: LabHost, tmp_path: Path
) -> None:
    command = install_rocmprov(clean_host)
    text = lab.inventory.read_text()
    inv = tmp_path / "inv.ini"
    inv.write_text(
        f"[lab]\n{clean_host.name} ansible_host={clean_host.address}\n\n"
        + text[text.index("[lab:vars]") :]
    )
    extra = json.dumps({"rocmprov_metrics_command": command, "rocmprov_metrics_interval": "3s"})
    rc, doc, _ = apply(inv, tmp_path, "--tags", "metrics", "-e", extra)
    assert rc == 0, json.dumps(doc["hosts"], indent=1)
    assert (
        sh(lab, clean_host, "systemctl is-active rocmprov-metrics.timer").stdout.strip() == "active"
    )

    seen: list[float] = []
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline and len(set(seen)) < 2:  # bounded: two distinct runs
        got = sh(lab, clean_host, f"stat -c %Y.%s {TEXTFILE}/rocmprov.prom", check=False)
        if got.returncode == 0:
            seen.append(float(got.stdout.split(".")[0]))
        time.sleep(2)
    assert len(set(seen)) >= 2, sh(
        lab, clean_host, "journalctl -u rocmprov-metrics -n 20 --no-pager", check=False
    ).stdout
    values = metrics(lab, clean_host)
    assert values["rocmprov_host_audited"] == 1
    assert "rocmprov_host_status" in values and "rocmprov_check_status" in values
    # atomic: only the finished file is in the directory, never a temp file left behind
    listing = sh(lab, clean_host, f"ls -A {TEXTFILE}").stdout.split()
    assert listing == ["rocmprov.prom"], listing

    rc, doc, _ = apply(inv, tmp_path, "--tags", "metrics", "-e", extra)
    assert rc == 0 and sum(h["changed"] for h in doc["hosts"]) == 0, doc["hosts"]
