"""Fleet audit over real SSH on the lab: the same facts as `rocmprov audit --local` on each host,
the inventory's own SSH settings honoured, JSON and exit codes right."""

from __future__ import annotations

import json
import shutil
import site
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.helpers import rocmprov
from tests.lab import Lab

pytestmark = pytest.mark.lab

REPO = Path(__file__).resolve().parent.parent
# pure-python (or cp311, the lab's Python) packages `rocmprov audit --local` needs on a host
RUNTIME = ("rich", "markdown_it", "mdurl", "pygments", "pyudev", "distro", "yaml", "packaging")


def _install_rocmprov(root: Path) -> str:
    """Copy rocmprov and its runtime packages into a lab host's file system; -> PYTHONPATH."""
    target = root / "opt" / "rocmprov-site"
    if target.exists():
        return "/opt/rocmprov-site"
    target.mkdir(parents=True)
    shutil.copytree(
        REPO / "rocmprov", target / "rocmprov", ignore=shutil.ignore_patterns("__pycache__")
    )
    shutil.copytree(
        REPO / "playbooks",
        target / "rocmprov" / "playbooks",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    for name in RUNTIME:
        for base in site.getsitepackages():
            if (Path(base) / name).is_dir():
                shutil.copytree(
                    Path(base) / name, target / name, ignore=shutil.ignore_patterns("__pycache__")
                )
                break
        else:
            pytest.fail(f"{name} not found in this venv")
    return "/opt/rocmprov-site"


def test_fleet_audit_of_8_hosts_matches_local_audit_on_each(make_lab: Callable[[int], Lab]) -> None:
    lab = make_lab(8)
    run = rocmprov("audit", str(lab.inventory), "--format", "json")
    doc = json.loads(run.stdout)
    assert doc["schema"] == "rocmprov.audit/1"
    assert run.rc == doc["exit_code"] == 2  # no AMD GPU in the lab: CRITICAL, said plainly
    remote = {h["host"]: h for h in doc["hosts"]}
    assert sorted(remote) == sorted(h.name for h in lab.hosts)
    for host in lab.hosts:
        assert remote[host.name]["status"] == "audited"
        pythonpath = _install_rocmprov(host.root)
        local = lab.exec(
            host,
            [
                "env",
                f"PYTHONPATH={pythonpath}",
                "python3",
                "-m",
                "rocmprov",
                "audit",
                "--local",
                "--format",
                "json",
            ],
            check=False,
        )
        local_doc = json.loads(local.stdout)
        (local_host,) = local_doc["hosts"]
        assert local_host["facts"] == remote[host.name]["facts"], host.name
        # The kernel log is this machine's (the hosts share its kernel) and moves between the
        # two audits: its findings are compared by presence, not content; every other finding
        # must be the same.
        strip = [f for f in local_host["findings"] if not _kernel_log(f)]
        # the fleet audit adds what only a fleet has: drift against the other hosts (all equal
        # here, so OK); every other finding is the host's own, as the local audit gives it
        fleet = [f for f in remote[host.name]["findings"] if f["check"].startswith("fleet.")]
        own = [f for f in remote[host.name]["findings"] if not f["check"].startswith("fleet.")]
        assert strip == [f for f in own if not _kernel_log(f)], host.name
        assert any(map(_kernel_log, local_host["findings"])) == any(map(_kernel_log, own))
        assert [(f["check"], f["severity"]) for f in fleet] == [("fleet.drift", "ok")]
        assert local_host["facts"]["os"] == "debian 12"
        assert local_host["facts"]["amd_gpus"] == []


def _kernel_log(finding: dict) -> bool:
    """A finding judged from the kernel log: `dmesg`, `dmesg.<family>` (checks/dmesg.py) or a
    troubleshooting-table match on it (`log.cause`, checks/logs.py)."""
    return finding["check"].split(".")[0] == "dmesg" or finding["check"] == "log.cause"


def test_inventory_ssh_args_are_honoured_and_limit_works(lab: Lab) -> None:
    # the lab inventory names its known_hosts only in ansible_ssh_common_args, as Ansible users do
    first = lab.hosts[0].name
    run = rocmprov("audit", str(lab.inventory), "--limit", first, "--format", "json")
    doc = json.loads(run.stdout)
    assert [h["host"] for h in doc["hosts"]] == [first]
    assert doc["hosts"][0]["status"] == "audited"


def test_unknown_host_key_is_refused_and_nothing_written(lab: Lab, tmp_path: Path) -> None:
    empty = tmp_path / "known_hosts"
    empty.write_text("")
    run = rocmprov("audit", str(lab.inventory), "--known-hosts", str(empty), "--format", "json")
    doc = json.loads(run.stdout)
    assert run.rc == 3
    assert {h["status"] for h in doc["hosts"]} == {"hostkey-unknown"}
    assert empty.read_text() == ""
    assert doc["summary"][0]["count"] == len(lab.hosts)
    run = rocmprov(
        "audit", str(lab.inventory), "--known-hosts", str(empty), "--accept-new", "--format", "json"
    )
    assert {h["status"] for h in json.loads(run.stdout)["hosts"]} == {"audited"}
    assert len(empty.read_text().splitlines()) >= len(lab.hosts)


def test_collect_inventory_writes_a_bundle_per_host(lab: Lab, tmp_path: Path) -> None:
    run = rocmprov("collect", str(lab.inventory), "-o", str(tmp_path / "b"))
    assert run.rc == 0, run.stderr
    dirs = sorted(p.name for p in (tmp_path / "b").iterdir())
    assert dirs == sorted(h.name for h in lab.hosts)
    again = json.loads(
        rocmprov("audit", "--bundle", str(tmp_path / "b" / dirs[0]), "--format", "json").stdout
    )
    assert again["hosts"][0]["facts"]["os"] == "debian 12"


def test_hosts_reachable_only_through_a_jump_host_are_audited(lab: Lab, tmp_path: Path) -> None:
    import subprocess

    jump, targets = lab.hosts[0], lab.hosts[1:3]
    table = "rocmprov_test_jump"
    rules = (
        f"table inet {table} {{\n chain input {{\n"
        "  type filter hook input priority 0; policy accept;\n"
        f"  ip saddr {lab.gateway} tcp dport 22 drop\n }}\n}}\n"
    )
    config = tmp_path / "ssh_config"
    lines = [
        f"Host bastion\n  HostName {jump.address}\n  User root\n  IdentityFile {lab.key_file}\n"
    ]
    lines += [
        f"Host {t.name}\n  HostName {t.address}\n  User root\n"
        f"  IdentityFile {lab.key_file}\n  ProxyJump bastion\n"
        for t in targets
    ]
    config.write_text("\n".join(lines))
    inventory = tmp_path / "inventory.ini"
    inventory.write_text("[behind]\n" + "\n".join(t.name for t in targets) + "\n")
    for t in targets:  # the controller (the bridge address) can no longer reach them
        subprocess.run(
            ["ip", "netns", "exec", t.netns, "nft", "-f", "-"], input=rules, text=True, check=True
        )
    try:
        by_address = tmp_path / "direct.ini"
        by_address.write_text(
            "[behind]\n"
            + "\n".join(f"{t.name} ansible_host={t.address} ansible_user=root" for t in targets)
            + f"\n\n[behind:vars]\nansible_ssh_private_key_file={lab.key_file}\n"
        )
        direct = json.loads(
            rocmprov(
                "audit", str(by_address), "--known-hosts", str(lab.known_hosts), "--format", "json"
            ).stdout
        )
        assert {h["status"] for h in direct["hosts"]} == {"timeout"}, direct["hosts"]
        via = rocmprov(
            "audit",
            str(inventory),
            "--known-hosts",
            str(lab.known_hosts),
            "--ssh-config",
            str(config),
            "--format",
            "json",
        )
        doc = json.loads(via.stdout)
        assert {h["host"]: h["status"] for h in doc["hosts"]} == {
            t.name: "audited" for t in targets
        }
        assert all(h["facts"]["os"] == "debian 12" for h in doc["hosts"])
    finally:
        for t in targets:
            subprocess.run(
                ["ip", "netns", "exec", t.netns, "nft", "delete", "table", "inet", table],
                check=False,
            )
