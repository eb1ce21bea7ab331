"""The default path as a new user meets it (issue 24): `rocmprov apply` of the release table's
default release on fresh lab hosts, through a site mirror over http and over https and with a
wheel directory, then a second apply that changes nothing, then `rocmprov audit` finding
nothing that apply was meant to fix.

The repositories are served laid out as AMD publishes them (tests/lab/amdrepo.py), the torch
index as a PEP 503 index at the path of the release's own index (tests/lab/pyindex.py); the
hosts log in as the sudo user `admin` with become, as an admin's inventory usually does, so the
default GPU user (the login user) is a real account. The lab has no GPU: the driver path is
forced (`rocmprov_driver_force`), and the audit's hardware findings are not apply's.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.lab import Lab, LabHost
from tests.lab.amdrepo import AmdRepos, Served
from tests.test_apply_lab import DEBIAN_12, kernel_headers_source

pytestmark = pytest.mark.lab

# Findings apply is meant to make right on any host, GPU or not (docs/apply.md).
APPLY_OWNS = ("user.groups", "repo.", "rocm.installed", "rocm.packages", "torch.rocm",
              "service.gpu-manager", "driver.dkms")  # fmt: skip
BAD = {"critical", "warning"}


def rocmprov(*args: str, state: Path, timeout: float = 1500) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "XDG_STATE_HOME": str(state), "XDG_CACHE_HOME": str(state / "cache")}
    return subprocess.run([sys.executable, "-m", "rocmprov", *args], capture_output=True,
                          text=True, timeout=timeout, env=env, check=False)  # fmt: skip


@pytest.fixture(scope="module")
def default_plan() -> dict[str, Any]:
    from rocmprov.knowledge import releases

    plan = releases.resolve("", DEBIAN_12)
    assert plan["torch_index"] and plan["torch_version"], plan
    return plan


@pytest.fixture(scope="module")
def wheels(lab: Lab, amd_repos: AmdRepos, default_plan: dict[str, Any],
           tmp_path_factory: pytest.TempPathFactory) -> str:  # fmt: skip
    """The default release's torch wheel: in a PEP 503 index at the release's index path
    (served with the repositories), and in a plain directory served on its own."""
    from tests.lab.pyindex import add_index, torch_wheel

    version = default_plan["version"]
    out = tmp_path_factory.mktemp("default-wheels")
    wheel = torch_wheel(out, f"{default_plan['torch_version']}+rocm{version}", f"{version}-lab")
    add_index(amd_repos.root, default_plan["torch_index"], [wheel])
    return lab.serve_dir(out) + "/"


def test_default_release_http_https_and_wheel_dir_then_audit(
    lab: Lab, amd_repos: AmdRepos, amd_mirror: Served, wheels: str,
    default_plan: dict[str, Any], tmp_path: Path,
) -> None:  # fmt: skip
    https_url = lab.serve_dir(amd_repos.root, tls=True)
    hosts = [lab.reset(h) for h in lab.hosts[1:4]]
    setups: dict[str, dict[str, Any]] = {
        hosts[0].name: {"rocmprov_mirrors": amd_mirror.mirrors},  # torch from the http index
        hosts[1].name: {"rocmprov_mirrors": amd_repos.mirrors(https_url)},  # all over https
        hosts[2].name: {
            "rocmprov_mirrors": amd_mirror.mirrors,
            "rocmprov_torch_wheel_dir": wheels,
        },
    }
    lab.trust_lab_ca(hosts[1])  # a site mirror's CA, installed by the admin beforehand
    for h in hosts:
        kernel_headers_source(lab, h, tmp_path / h.name)
    inv = inventory(lab, hosts, setups, tmp_path)
    common = json.dumps({"rocmprov_driver_force": True, "rocmprov_firmware_refresh": False})
    state = tmp_path / "state"

    first = rocmprov("apply", str(inv), "--format", "json", "--no-audit", "-q", "-e", common,
                     state=state)  # fmt: skip
    doc = _doc(first)
    assert first.returncode == 0, _failures(doc) or first.stderr[-3000:]
    torch = f"torch {default_plan['torch_version']}+rocm{default_plan['version']}"
    for h in doc["hosts"]:
        assert any(n.startswith(torch) and " hip " in n for n in h["notes"]), h
    for h in hosts:
        out = lab.exec(h, ["dpkg-query", "-W", "-f", "${Status}",
                           default_plan["dkms_package"]], check=False).stdout  # fmt: skip
        assert out == "install ok installed", f"{h.name}: no {default_plan['dkms_package']}"
        groups = lab.exec(h, ["id", "-nG", "admin"]).stdout.split()
        assert {"render", "video"} <= set(groups), f"{h.name}: admin in {groups}"

    second = rocmprov("apply", str(inv), "--format", "json", "--no-audit", "-q", "-e", common,
                      "--strategy", "linear", state=state)  # fmt: skip
    again = _doc(second)
    assert second.returncode == 0, _failures(again)
    assert {h["host"]: h["changed"] for h in again["hosts"]} == {h.name: 0 for h in hosts}, again

    audit = rocmprov("audit", str(inv), "--format", "json", state=state, timeout=600)
    report = _doc(audit)
    for host in report["hosts"]:
        owned_bad = [
            f"{f['check']} {f['severity']}: {f.get('summary')}"
            for f in host["findings"]
            if f["severity"] in BAD and f["check"].startswith(APPLY_OWNS)
        ]
        assert owned_bad == [], f"{host['host']}: {owned_bad}"
        torch_finding = next(f for f in host["findings"] if f["check"] == "torch.rocm")
        assert default_plan["torch_version"] in json.dumps(torch_finding), torch_finding


def inventory(lab: Lab, hosts: list[LabHost], setups: dict[str, dict[str, Any]],
              tmp: Path) -> Path:  # fmt: skip
    """An inventory directory: the lab's connection vars, login as `admin` with become, and
    each host's own mirror settings in host_vars/ (as an admin's inventory has them)."""
    text = lab.inventory.read_text()
    group_vars = text[text.index("[lab:vars]"):].replace("ansible_user=root", "ansible_user=admin")
    d = tmp / f"inv-{time.monotonic_ns()}"
    (d / "host_vars").mkdir(parents=True)
    lines = ["[lab]"] + [f"{h.name} ansible_host={h.address}" for h in hosts]
    (d / "hosts.ini").write_text("\n".join(lines) + "\n\n" + group_vars + "ansible_become=true\n")
    for name, hv in setups.items():
        (d / "host_vars" / f"{name}.yml").write_text(yaml.safe_dump(hv))
    return d / "hosts.ini"


def _doc(cp: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    try:
        return json.loads(cp.stdout)
    except json.JSONDecodeError:
        pytest.fail(f"no JSON (rc {cp.returncode}): {cp.stdout[-1500:]} {cp.stderr[-1500:]}")


def _failures(doc: dict[str, Any]) -> list[str]:
    return [f"{h['host']}: {h.get('failure')}" for h in doc.get("hosts", []) if h.get("failed")]
