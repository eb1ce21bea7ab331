"""Regressions of the review's role findings (../shared/review r15, r17), with plain
ansible-playbook on localhost against files in a temp dir: the health role never replaces a
site's HealthCheckProgram (NHC is chained, NHC first), the release role never prints a
mirror's password."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
SITE_CONF = """ClusterName=prod
HealthCheckProgram=/usr/sbin/nhc
HealthCheckInterval=60
HealthCheckNodeState=ANY,CYCLE
NodeName=gpu[01-64] CPUs=128
"""
NHC_CONF = "# NHC\n* || check_fs_mount_rw -f /\n* || check_ps_service -u root -S sshd\n"


def _play(tmp: Path, role: str, role_vars: dict, *flags: str, facts: bool = False) -> str:
    play = [{"hosts": "localhost", "connection": "local", "gather_facts": facts,
             "roles": [{"role": role, "vars": role_vars}]}]  # fmt: skip
    if facts:
        play[0]["gather_subset"] = ["min"]
    (tmp / "play.yml").write_text(json.dumps(play))
    env = {**os.environ, "ANSIBLE_ROLES_PATH": str(REPO / "playbooks/roles"),
           "ANSIBLE_FILTER_PLUGINS": str(REPO / "playbooks/filter_plugins"),
           "ANSIBLE_NOCOLOR": "1", "PATH": f"{BIN}:{os.environ['PATH']}"}  # fmt: skip
    done = subprocess.run(
        [str(BIN / "ansible-playbook"), "-i", "localhost,", "-e",
         f"ansible_python_interpreter={sys.executable}", *flags, str(tmp / "play.yml")],
        capture_output=True, text=True, timeout=300, check=False, env=env,
    )  # fmt: skip
    return done.stdout + done.stderr


def _health_vars(tmp: Path, **more: object) -> dict:
    (tmp / "sbin").mkdir(exist_ok=True)
    return {
        "rocmprov_health_slurm_conf": str(tmp / "slurm.conf"),
        "rocmprov_health_nhc_conf": str(tmp / "nhc.conf"),
        "rocmprov_health_program": str(tmp / "sbin/rocmprov-health-check"),
        "rocmprov_health_defaults_file": str(tmp / "default-rocmprov-health"),
        "rocmprov_health_bundle_dir": str(tmp / "bundles"),
        "rocmprov_health_reconfigure": False,
        **more,
    }


def test_nhc_stays_the_health_check_and_runs_the_gate_last(tmp_path: Path) -> None:
    (tmp_path / "slurm.conf").write_text(SITE_CONF)
    (tmp_path / "nhc.conf").write_text(NHC_CONF)
    out = _play(tmp_path, "rocmprov_health", _health_vars(tmp_path))
    assert "failed=0" in out, out[-3000:]
    assert (tmp_path / "slurm.conf").read_text() == SITE_CONF  # program, interval, states kept
    nhc = (tmp_path / "nhc.conf").read_text()
    assert nhc.startswith(NHC_CONF)  # NHC's own checks first, unchanged
    gate = f"* || check_cmd_status -t 25 -r 0 {tmp_path}/sbin/rocmprov-health-check\n"
    assert gate in nhc.removeprefix(NHC_CONF)
    settings = (tmp_path / "default-rocmprov-health").read_text()
    assert "ROCMPROV_HEALTH_TIMEOUT=22\n" in settings  # inside NHC's 25 s for the check
    assert "--deadline 10 --timeout 5 " in settings  # probes + 2 scontrol calls fit in 22 s
    again = _play(tmp_path, "rocmprov_health", _health_vars(tmp_path))
    assert "changed=0" in again and (tmp_path / "nhc.conf").read_text() == nhc


def test_nhc_without_its_config_stops_the_role_and_changes_nothing(tmp_path: Path) -> None:
    (tmp_path / "slurm.conf").write_text(SITE_CONF)
    out = _play(tmp_path, "rocmprov_health", _health_vars(tmp_path), "--check", "--diff")
    assert "HealthCheckProgram=/usr/sbin/nhc (NHC), which the role keeps" in out
    assert "-HealthCheckProgram=/usr/sbin/nhc" not in out
    assert (tmp_path / "slurm.conf").read_text() == SITE_CONF


def test_another_site_program_is_refused_or_chained_first(tmp_path: Path) -> None:
    site = SITE_CONF.replace("/usr/sbin/nhc", "/opt/site/bin/node-check")
    (tmp_path / "slurm.conf").write_text(site)
    out = _play(tmp_path, "rocmprov_health", _health_vars(tmp_path))
    assert "the role does not replace it" in out and "failed=1" in out
    assert (tmp_path / "slurm.conf").read_text() == site
    out = _play(
        tmp_path, "rocmprov_health", _health_vars(tmp_path, rocmprov_health_chain_other=True)
    )
    assert "failed=0" in out, out[-3000:]
    conf = (tmp_path / "slurm.conf").read_text()
    assert f"HealthCheckProgram={tmp_path}/sbin/rocmprov-health-check\n" in conf
    assert "HealthCheckInterval=60\n" in conf and "HealthCheckNodeState=ANY,CYCLE\n" in conf
    settings = (tmp_path / "default-rocmprov-health").read_text()
    assert "ROCMPROV_HEALTH_CHAIN=/opt/site/bin/node-check\n" in settings


def test_wrapper_runs_the_chained_program_first_and_keeps_its_verdict(tmp_path: Path) -> None:
    ran = tmp_path / "ran"
    site = tmp_path / "site-check"
    site.write_text(f"#!/bin/sh\necho site >> {ran}\nexit ${{SITE_RC:-0}}\n")
    fake = tmp_path / "rocmprov"
    fake.write_text(f'#!/bin/sh\necho "rocmprov $*" >> {ran}\n')
    for f in (site, fake):
        f.chmod(0o755)
    wrapper = (REPO / "playbooks/roles/rocmprov_health/files/rocmprov-health-check").read_text()
    wrapper = wrapper.replace("/etc/default/rocmprov-health", str(tmp_path / "defaults"))
    (tmp_path / "wrapper").write_text(wrapper)
    (tmp_path / "defaults").write_text(
        f"ROCMPROV={fake}\nROCMPROV_HEALTH_ARGS='--drain=gpu.*'\nROCMPROV_HEALTH_CHAIN={site}\n"
        f"ROCMPROV_HEALTH_LOG={tmp_path}/log\n"
    )
    (tmp_path / "gpu.x").write_text("")  # a pattern is never a file name
    run = subprocess.run(["sh", str(tmp_path / "wrapper")], cwd=tmp_path, check=False)
    assert run.returncode == 0
    assert ran.read_text().splitlines() == [
        "site",
        f"rocmprov health --slurm --log {tmp_path}/log --drain=gpu.*",
    ]
    ran.unlink()
    env = {**os.environ, "SITE_RC": "1"}
    run = subprocess.run(["sh", str(tmp_path / "wrapper")], cwd=tmp_path, env=env, check=False)
    assert run.returncode == 1 and ran.read_text() == "site\n"  # its verdict; gate skipped


def test_release_role_never_prints_a_mirror_password(tmp_path: Path) -> None:
    mirrors = {"https://repo.radeon.com": "https://ops:Mirr0r-S3cret@mirror.example/radeon"}
    extra = json.dumps({"rocmprov_rocm_version": "7.2", "rocmprov_mirrors": mirrors})
    out = _play(tmp_path, "rocmprov_release", {}, "-v", "-e", extra, facts=True)
    assert "failed=0" in out, out[-3000:]
    assert "https://***@mirror.example/radeon/rocm/apt/" in out  # the line is still there
    assert "Mirr0r-S3cret" not in out


def test_a_timeout_past_slurmds_60_s_is_refused(tmp_path: Path) -> None:
    """review r11/r13: slurmd kills a HealthCheckProgram after 60 s; the wrapper allowed 120."""
    (tmp_path / "slurm.conf").write_text("ClusterName=prod\n")
    out = _play(tmp_path, "rocmprov_health", _health_vars(tmp_path, rocmprov_health_timeout=90))
    assert "slurmd kills a HealthCheckProgram after 60 s" in out and "failed=1" in out
    out = _play(tmp_path, "rocmprov_health", _health_vars(tmp_path))
    assert "failed=0" in out, out[-3000:]
    settings = (tmp_path / "default-rocmprov-health").read_text()
    assert "ROCMPROV_HEALTH_TIMEOUT=50\n" in settings and "--deadline 28 --timeout 10 " in settings
    conf = (tmp_path / "slurm.conf").read_text()
    assert f"HealthCheckProgram={tmp_path}/sbin/rocmprov-health-check\n" in conf
