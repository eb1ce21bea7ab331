"""The collection rocmprov.rocm on the lab's real hosts (issue 17): installed from its tarball
into a fresh collections path, playbooks that name only FQCNs install rocmprov on the nodes
(the rocmprov_node role, from a wheel of this checkout, its dependencies from Debian's
packages through the lab's proxy), converge the hosts with the same roles `rocmprov apply`
runs (a second run changes nothing), and return the audit's findings from each host.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.lab import Lab, LabHost
from tests.test_apply_lab import SMALL_DISTRO, inventory_for
from tests.test_collection import BIN, FQ, REPO, ansible_env, installed, run, tarball

pytestmark = [pytest.mark.lab, pytest.mark.long]  # minutes in CI: scheduled first
__all__ = ["installed", "tarball"]  # session fixtures from tests/test_collection.py

RECAP = re.compile(r"^(\S+)\s+: ok=(\d+)\s+changed=(\d+)\s+unreachable=(\d+)\s+failed=(\d+)", re.M)


def play(
    installed: Path, inv: Path, book: str, tmp: Path, *args: str, timeout: float = 1200
) -> tuple[int, dict[str, dict[str, int]], str]:
    """ansible-playbook on a collection playbook (FQCN) or a file; rc, recap per host, output."""
    env = ansible_env(installed, ANSIBLE_PIPELINING="True", ANSIBLE_FORKS="8")
    cp = run(
        [str(BIN / "ansible-playbook"), "-i", str(inv), book, *args],
        env=env,
        cwd=tmp,
        timeout=timeout,
    )
    recap = {
        m.group(1): {
            "ok": int(m.group(2)),
            "changed": int(m.group(3)),
            "unreachable": int(m.group(4)),
            "failed": int(m.group(5)),
        }
        for m in RECAP.finditer(cp.stdout)
    }
    return cp.returncode, recap, cp.stdout + cp.stderr


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A wheel of this checkout (what a site copies to its nodes when they have no index)."""
    out = tmp_path_factory.mktemp("wheel")
    cp = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(out), str(REPO)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert cp.returncode == 0, cp.stderr[-2000:]
    (found,) = out.glob("rocmprov-*.whl")
    return found


def audit_book(tmp: Path, out: Path, **params: Any) -> Path:
    """An FQCN-only playbook: the audit and facts modules on each host, results to `out`."""
    tasks = [
        {"name": "Audit", f"{FQ}.audit": params, "register": "audit", "ignore_errors": True},
        {"name": "Facts", f"{FQ}.facts": {"gpu_user": params.get("gpu_user", "")}},
        {
            "name": "Keep the results on the controller",
            "ansible.builtin.copy": {
                "content": "{{ {'audit': audit, 'facts': ansible_facts.rocmprov} | to_json }}",
                "dest": f"{out}/{{{{ inventory_hostname }}}}.json",
                "mode": "0600",
            },
            "delegate_to": "localhost",
            "become": False,
        },
    ]
    book = tmp / f"audit-{len(list(tmp.glob('audit-*.yml')))}.yml"
    book.write_text(
        yaml.safe_dump(
            [
                {
                    "name": "Audit with the collection",
                    "hosts": "all",
                    "become": True,
                    "gather_facts": False,
                    "tasks": tasks,
                }
            ]
        )
    )
    return book


def test_fqcn_playbooks_install_rocmprov_converge_and_audit_lab_hosts(
    lab: Lab, installed: Path, wheel: Path, tmp_path: Path
) -> None:
    hosts: list[LabHost] = [lab.reset(h) for h in lab.hosts[:2]]
    inv = inventory_for(lab, hosts, tmp_path)
    names = sorted(h.name for h in hosts)

    # 1. rocmprov on the nodes: the collection's node playbook, twice (the second changes nothing)
    node = ["-e", f"rocmprov_node_wheel={wheel}", "-e", "rocmprov_node_system_deps=true"]
    rc, recap, out = play(installed, inv, f"{FQ}.node", tmp_path, *node)
    assert rc == 0, out[-4000:]
    assert sorted(recap) == names and all(r["changed"] > 0 for r in recap.values()), recap
    rc, recap, out = play(installed, inv, f"{FQ}.node", tmp_path, *node)
    assert rc == 0 and all(r["changed"] == 0 for r in recap.values()), (recap, out[-3000:])
    for h in hosts:
        version = lab.exec(h, ["/usr/local/bin/rocmprov", "--version"]).stdout
        assert version.strip().startswith("rocmprov "), version

    # 2. the site playbook by FQCN (the roles of `rocmprov apply`), then again: changed=0
    site = ["-e", SMALL_DISTRO, "-e", "rocmprov_repo_source=distro"]
    rc, first, out = play(installed, inv, f"{FQ}.site", tmp_path, *site)
    assert rc == 0, out[-4000:]
    assert sorted(first) == names and all(
        r["changed"] > 0 and r["failed"] == 0 for r in first.values()
    )
    assert "TASK [rocmprov.rocm.rocmprov_release : Pick the release for this host]" in out
    rc, second, out = play(installed, inv, f"{FQ}.site", tmp_path, *site)
    assert rc == 0 and [r["changed"] for r in second.values()] == [0, 0], (second, out[-3000:])
    for h in hosts:
        groups = lab.exec(h, ["id", "-nG", "admin"]).stdout.split()
        assert {"render", "video"} <= set(groups)
        assert lab.exec(h, ["dpkg-query", "-W", "rocminfo"], check=False).returncode == 0

    # 3. the audit module on each host: findings as rocmprov.audit/1, facts as ansible_facts
    results = tmp_path / "results"
    results.mkdir()
    rc, recap, out = play(
        installed,
        inv,
        str(audit_book(tmp_path, results, gpu_user="admin", profile="full")),
        tmp_path,
    )
    assert rc == 0, out[-4000:]
    for h in hosts:
        doc: dict[str, Any] = json.loads((results / f"{h.name}.json").read_text())
        audit, facts = doc["audit"], doc["facts"]
        assert not audit.get("failed"), audit
        assert audit["audit"]["schema"] == "rocmprov.audit/1"
        host = audit["audit"]["hosts"][0]
        by_check = {f["check"]: f for f in audit["findings"]}
        assert host["findings"] == audit["findings"]
        # the lab hosts have no GPU: CRITICAL, with AMD's requirement as the expectation
        assert by_check["gpu.amd.present"]["severity"] == "critical"
        assert audit["severity"] == "critical" and audit["exit_code"] == 2
        # what the converge did is what the audit sees: admin in render and video
        assert by_check["user.groups"]["severity"] == "ok", by_check["user.groups"]
        assert facts["os"] == "debian 12" and facts["gpu_user"] == "admin"
        assert {"render", "video"} <= set(facts["gpu_user_groups"])
        assert facts["kernel"] == os.uname().release  # the lab hosts run this machine's kernel

    # 4. the collection's audit playbook: findings never fail it, unless asked to on CRITICAL
    rc, recap, out = play(installed, inv, f"{FQ}.audit", tmp_path)
    assert rc == 0 and all(r["failed"] == 0 for r in recap.values()), out[-3000:]
    assert out.count("CRITICAL: gpu.amd.present") == 2, out[-3000:]
    rc, recap, out = play(
        installed, inv, f"{FQ}.audit", tmp_path, "-e", "rocmprov_audit_fail_on_critical=true"
    )
    assert rc == 2 and all(r["failed"] == 1 for r in recap.values()), (recap, out[-3000:])
    assert "CRITICAL findings: gpu.amd.present" in out
