"""rocmprov apply against the lab's real systemd hosts over real SSH (no mocks).

Kept few and small (2 cores, ~0.5 s CPU per host per task): torch is off except in the AMD-path
test (a local fake wheel), the distro package list is cut to rocminfo + rocm-smi.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.lab import Lab, LabHost
from tests.lab.amdrepo import Served

pytestmark = [pytest.mark.lab, pytest.mark.long]  # minutes in CI: scheduled first

SMALL_DISTRO = json.dumps(
    {
        "rocmprov_packages_distro": ["rocminfo", "rocm-smi"],
        "rocmprov_torch_enabled": False,
        "rocmprov_gpu_users": ["admin"],
    }
)


def inventory_for(lab: Lab, hosts: list[LabHost], tmp: Path) -> Path:
    """An inventory of just `hosts`, with the lab's connection vars (checked host keys)."""
    text = lab.inventory.read_text()
    group_vars = text[text.index("[lab:vars]") :]
    lines = ["[lab]"] + [f"{h.name} ansible_host={h.address}" for h in hosts] + ["", group_vars]
    inv = tmp / f"inv-{len(hosts)}-{time.monotonic_ns()}.ini"
    inv.write_text("\n".join(lines) + "\n")
    return inv


def apply(
    inv: Path, tmp: Path, *args: str, timeout: float = 900
) -> tuple[int, dict[str, Any], float]:
    env = {**os.environ, "XDG_STATE_HOME": str(tmp / "state")}
    start = time.monotonic()
    cp = subprocess.run(
        [
            sys.executable,
            "-m",
            "rocmprov",
            "apply",
            str(inv),
            "--format",
            "json",
            "--no-audit",
            "-q",
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        check=False,
    )
    took = time.monotonic() - start
    try:
        doc = json.loads(cp.stdout)
    except json.JSONDecodeError:
        pytest.fail(
            f"no JSON document (rc {cp.returncode}): {cp.stdout[-2000:]} {cp.stderr[-2000:]}"
        )
    print(f"apply {' '.join(args)}: rc={cp.returncode} {took:.1f}s totals={doc.get('totals')}")
    return cp.returncode, doc, took


def by_host(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {h["host"]: h for h in doc["hosts"]}


def state_of(lab: Lab, h: LabHost) -> dict[str, str]:
    """Packages, unit files, groups, users and every file under /etc (size + mtime)."""

    def out(argv: list[str]) -> str:
        return lab.exec(h, argv, timeout=60).stdout

    return {
        "packages": out(["dpkg-query", "-W", "-f", "${Package} ${Version} ${Status}\\n"]),
        # the SSH login's session-N.scope is transient, not a change of the host
        "units": "\n".join(
            ln
            for ln in out(
                ["systemctl", "list-unit-files", "--no-legend", "--no-pager"]
            ).splitlines()
            if "transient" not in ln
        ),
        "groups": out(["getent", "group"]),
        "passwd": out(["getent", "passwd"]),
        "etc": out(["find", "/etc", "-xdev", "-printf", "%p %s %T@ %m\\n"]),
    }


def test_check_mode_changes_nothing_on_fresh_hosts(lab: Lab, tmp_path: Path) -> None:
    hosts = [lab.reset(h) for h in lab.hosts[:2]]
    before = {h.name: state_of(lab, h) for h in hosts}
    rc, doc, _took = apply(
        inventory_for(lab, hosts, tmp_path),
        tmp_path,
        "--check",
        "--diff",
        "-e",
        SMALL_DISTRO,
        "-e",
        "rocmprov_repo_source=distro",
    )
    assert rc == 0, json.dumps(doc["hosts"])
    assert doc["check"] is True and doc["status"] == "successful"
    # check mode reports what it would change, naming the packages it would install...
    assert all(h["changed"] > 0 for h in doc["hosts"]), doc["hosts"]
    for h in doc["hosts"]:
        would = [c for c in h["changes"] if c.startswith("Would install packages")]
        assert would and {"rocminfo", "rocm-smi"} <= set(would[0].split()), h["changes"]
    # ...and changes nothing.
    for h in hosts:
        after = state_of(lab, h)
        changed = [k for k, v in before[h.name].items() if after[k] != v]
        assert changed == [], f"{h.name}: {changed} changed in check mode"


def test_distro_apply_converges_and_a_broken_source_fails_one_host(
    lab: Lab, tmp_path: Path
) -> None:
    hosts = [lab.reset(h) for h in lab.hosts[:4]]
    inv = inventory_for(lab, hosts, tmp_path)
    extra = ["-e", SMALL_DISTRO, "-e", "rocmprov_repo_source=distro"]
    rc, first, t1 = apply(inv, tmp_path, *extra)
    assert rc == 0, first
    assert len(first["hosts"]) == 4
    assert all(h["status"] == "changed" and h["failed"] == 0 for h in first["hosts"])
    rc, second, t2 = apply(inv, tmp_path, *extra)
    assert rc == 0, second
    assert [h["changed"] for h in second["hosts"]] == [0, 0, 0, 0], second["hosts"]
    print(f"distro apply on 4 fresh hosts: {t1:.1f}s, again: {t2:.1f}s (changed=0)")
    for h in hosts:
        groups = lab.exec(h, ["id", "-nG", "admin"]).stdout.split()
        assert {"render", "video"} <= set(groups)
        assert lab.exec(h, ["getent", "group", "render"]).returncode == 0
        assert lab.exec(h, ["dpkg-query", "-W", "rocminfo"], check=False).returncode == 0
        assert lab.exec(h, ["dpkg-query", "-W", "fwupd"], check=False).returncode == 0

    # (e) one host with a broken apt source: reported failed with task + message, others finish.
    broken = hosts[0]
    lab.exec(
        broken,
        [
            "sh",
            "-c",
            f"echo 'deb http://{lab.gateway}:1/nothing bookworm main' "
            "> /etc/apt/sources.list.d/broken.list",
        ],
    )
    rc, doc, _ = apply(
        inv,
        tmp_path,
        *extra,
        "--tags",
        "rocmprov_packages",
        "-e",
        "rocmprov_packages_cache_valid_time=0",
        "-e",
        "rocmprov_packages_update_cache_retries=1",  # a dead source fails at once, not in 60 s
    )
    assert rc == 2, doc
    res = by_host(doc)
    bad = res[broken.name]
    assert bad["status"] == "failed"
    assert bad["failed_task"]["task"] == "Install the ROCm packages (apt)"
    assert bad["failed_task"]["message"], bad
    print("broken source:", bad["failed_task"])
    for h in hosts[1:]:
        assert res[h.name]["failed"] == 0 and res[h.name]["status"] == "ok", res[h.name]


def legacy_row() -> dict[str, Any]:
    """The newest legacy release of the table with all three repositories (rocm, amdgpu,
    graphics) and a Debian 12 suite: the lab hosts are Debian 12."""
    from tests.test_releases_lab import legacy_full

    row = legacy_full()
    assert "debian-12" in (row["apt"].get("suites") or {}), row["version"]
    return row


DEBIAN_12 = {"distribution": "Debian", "distribution_version": "12", "os_family": "Debian"}


def kernel_headers_source(lab: Lab, host: LabHost, tmp: Path) -> None:
    """The lab's kernel is this machine's: its headers come from a small lab repository."""
    import platform

    from tests.lab.amdrepo import kernel_headers_repo

    repo = kernel_headers_repo(tmp / "kernel-headers", platform.release())
    (host.root / "etc/apt/sources.list.d/lab-kernel-headers.sources").write_text(
        repo.deb822(lab.serve_dir(repo.root))
    )


@pytest.fixture
def torch_wheels(lab: Lab, tmp_path_factory: pytest.TempPathFactory) -> str:
    """A stand-in ROCm torch wheel for the legacy row's first torch version, served."""
    from rocmprov.knowledge import releases
    from tests.lab.pyindex import torch_wheel

    row = legacy_row()
    plan = releases.resolve(row["version"], DEBIAN_12)
    minor = ".".join(str(row["version"]).split(".")[:2])
    out = tmp_path_factory.mktemp("wheels")
    torch_wheel(out, f"{plan['torch_version']}+rocm{minor}", f"{minor}.43482")
    return lab.serve_dir(out) + "/"


def test_amd_source_with_key_deb822_pin_driver_and_torch(
    lab: Lab, clean_host: LabHost, amd_mirror: Served, torch_wheels: str, tmp_path: Path
) -> None:
    from rocmprov.knowledge import releases

    row = legacy_row()
    plan = releases.resolve(row["version"], DEBIAN_12, amd_mirror.mirrors)
    inv = inventory_for(lab, [clean_host], tmp_path)
    extra = json.dumps(
        {
            "rocmprov_repo_source": "amd",
            "rocmprov_mirrors": amd_mirror.mirrors,
            "rocmprov_rocm_version": row["version"],
            "rocmprov_driver_force": True,  # no GPU in the lab: exercise the driver path anyway
            "rocmprov_torch_enabled": True,
            "rocmprov_torch_wheel_dir": torch_wheels,
            "rocmprov_firmware_refresh": False,
        }
    )
    kernel_headers_source(lab, clean_host, tmp_path)
    # an old one-line source as AMD's older instructions left it (AMD's host: rocmprov sets it
    # aside; a file naming another host would be the admin's and stay, docs/apply.md)
    lab.exec(
        clean_host,
        [
            "sh",
            "-c",
            "echo 'deb [arch=amd64] https://repo.radeon.com/rocm/apt/5.7 jammy main'"
            " > /etc/apt/sources.list.d/rocm.list",
        ],
    )
    rc, doc, t1 = apply(inv, tmp_path, "-e", extra)
    assert rc == 0, json.dumps(doc["hosts"])
    host = doc["hosts"][0]
    assert host["changed"] > 0
    torch = f"torch {plan['torch_version']}+rocm"
    assert any(n.startswith(torch) and " hip " in n for n in host["notes"]), host
    assert any("reboot required" in n for n in host["notes"]), host
    r = clean_host.root

    def sh(cmd: str) -> str:
        return lab.exec(clean_host, ["sh", "-c", cmd]).stdout

    assert not (r / "etc/apt/sources.list.d/rocm.list").exists()
    sources = (r / "etc/apt/sources.list.d/rocm.sources").read_text()
    assert f"URIs: {plan['rocm_url']}" in sources
    assert "Signed-By: /etc/apt/keyrings/rocmprov-legacy.asc" in sources
    assert f"Suites: {plan['suite']}" in sources
    pin = (r / "etc/apt/preferences.d/rocmprov-rocm-pin").read_text()
    assert "Pin-Priority: 600" in pin and f"o={plan['pin_origin']}" in pin
    # the pin applies: AMD's packages come from the lab's copy of repo.radeon.com at 600
    policy = sh(f"apt-cache policy {plan['packages'][0]}")
    assert f"600 {plan['rocm_url']} " in policy, policy
    installed = sh(f"dpkg-query -W -f '${{Version}}' {plan['packages'][0]}")
    assert installed.startswith(f"{row['version']}."), installed
    dkms = plan["dkms_package"]
    assert sh(f"dpkg-query -W -f '${{Status}}' {dkms}") == "install ok installed"
    assert sh("cat /opt/rocm/.info/version").startswith(row["version"])
    rc, again, t2 = apply(inv, tmp_path, "-e", extra)
    assert rc == 0 and again["hosts"][0]["changed"] == 0, again["hosts"][0].get("changes")
    print(f"amd source on 1 host: {t1:.1f}s, again {t2:.1f}s changed=0")


def test_interrupted_apply_then_rerun_converges(
    lab: Lab, clean_host: LabHost, tmp_path: Path
) -> None:
    inv = inventory_for(lab, [clean_host], tmp_path)
    env = {**os.environ, "XDG_STATE_HOME": str(tmp_path / "state")}
    args = [
        sys.executable,
        "-m",
        "rocmprov",
        "apply",
        str(inv),
        "--format",
        "json",
        "--no-audit",
        "-e",
        SMALL_DISTRO,
        "-e",
        "rocmprov_repo_source=distro",
    ]
    proc = subprocess.Popen(
        args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )
    assert proc.stderr is not None
    deadline = time.monotonic() + 300
    seen = ""
    try:
        for line in proc.stderr:  # plain progress lines (stderr is not a TTY)
            seen += line
            if "Install the ROCm packages (apt)" in line or time.monotonic() > deadline:
                time.sleep(2)  # let apt get going
                proc.send_signal(signal.SIGINT)
                break
        out, _ = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, (proc.returncode, seen[-2000:])
    doc = json.loads(out)
    assert doc["status"] == "canceled" and doc["exit_code"] == 130
    rc, doc, _ = apply(inv, tmp_path, "-e", SMALL_DISTRO, "-e", "rocmprov_repo_source=distro")
    assert rc == 0, [(h["host"], h["failed_task"], h["notes"]) for h in doc["hosts"]]
    assert lab.exec(clean_host, ["dpkg-query", "-W", "rocminfo"], check=False).returncode == 0
    assert lab.exec(clean_host, ["dpkg", "--audit"]).stdout.strip() == ""


def test_dkms_build_failure_is_reported_with_the_kernel(
    lab: Lab, clean_host: LabHost, tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """amdgpu-dkms whose build fails on the running kernel: the host fails on the driver role
    with the kernel named and the build error quoted, not buried."""
    import platform

    from tests.lab import amdrepo

    kernel = platform.release()
    row = legacy_row()
    failing = (
        "#!/bin/sh\necho 'Building module: amdgpu (lab)'\n"
        f"echo 'Error! Bad return status for module build on kernel: {kernel} (x86_64)' >&2\n"
        "exit 10\n"
    )
    repos = amdrepo.build(
        tmp_path_factory.mktemp("badrepo") / "root", versions=[row["version"]],
        dkms_postinst=failing,
    )
    served = amdrepo.serve(lab, repos)
    kernel_headers_source(lab, clean_host, tmp_path)
    inv = inventory_for(lab, [clean_host], tmp_path)
    extra = json.dumps(
        {
            "rocmprov_repo_source": "amd",
            "rocmprov_mirrors": served.mirrors,
            "rocmprov_rocm_version": row["version"],
            "rocmprov_driver_force": True,
        }
    )
    rc, doc, _ = apply(inv, tmp_path, "-e", extra, "--tags", "rocmprov_repo,rocmprov_driver")
    assert rc == 2, doc
    host = doc["hosts"][0]
    failed = host["failed_task"]
    assert failed["role"] == "rocmprov_driver", failed
    assert f"amdgpu-dkms failed on kernel {kernel}" in failed["message"]
    assert "Bad return status for module build" in failed["message"]


@pytest.mark.parametrize("strategy", ["mitogen", "linear"])
def test_apply_checks_host_keys(lab: Lab, tmp_path: Path, strategy: str) -> None:
    """ansible-runner turns host key checking off unless told: apply must refuse a host whose
    key is not in the inventory's known_hosts, with Mitogen's connection as with ssh's own."""
    host = lab.hosts[0]
    empty = tmp_path / "known_hosts"
    empty.write_text("")
    inv = tmp_path / "inv.ini"
    inv.write_text(
        f"[lab]\n{host.name} ansible_host={host.address}\n\n[lab:vars]\nansible_user=root\n"
        f"ansible_ssh_private_key_file={lab.key_file}\n"
        f"ansible_ssh_common_args='-o UserKnownHostsFile={empty}'\n"
    )
    rc, doc, _ = apply(inv, tmp_path, "--check", "--tags", "rocmprov_users", "--strategy", strategy)
    assert rc == 3, doc
    (result,) = doc["hosts"]
    assert result["status"] == "unreachable"
    # ssh's own words: under Mitogen the unreachable host is run again with linear
    # (provision/fallback.py), which refuses it the same way
    assert "Host key verification failed" in json.dumps(result)
    if strategy != "linear":  # Mitogen's own refusal, kept in the run's message
        assert "ran again with Ansible's linear strategy" in result["notes"]
        assert "SSH reported an unrecognized or mismatching host key" in doc["message"]
    assert empty.read_text() == ""
