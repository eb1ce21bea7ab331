"""The lab itself: real hosts, real SSH with checked host keys, apt, systemd, reboot, cleanup."""

from __future__ import annotations

import os
import shlex
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlsplit

import paramiko
import pytest

from tests.lab import Lab, LabHost
from tests.lab.aptrepo import DebSpec, build_repo
from tests.lab.lab import ssh_banner

pytestmark = pytest.mark.lab
ROOT = Path(__file__).resolve().parent.parent


def sh(client: paramiko.SSHClient, cmd: str, timeout: float = 300) -> tuple[int, str, str]:
    """Run cmd over SSH; (rc, stdout, stderr)."""
    _in, out, err = client.exec_command(cmd, timeout=timeout)
    rc = out.channel.recv_exit_status()
    return rc, out.read().decode(), err.read().decode()


def ok(client: paramiko.SSHClient, cmd: str, timeout: float = 300) -> str:
    rc, out, err = sh(client, cmd, timeout)
    assert rc == 0, f"{cmd!r} -> {rc}: {err}{out}"
    return out


def ansible_bin() -> str:
    found = shutil.which("ansible") or str(Path(sys.executable).parent / "ansible")
    assert Path(found).exists(), "ansible not found (pip install ansible-core)"
    return found


def run_ansible(lab: Lab, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "ANSIBLE_HOST_KEY_CHECKING": "True", "ANSIBLE_NOCOLOR": "1",
           "ANSIBLE_FORCE_COLOR": "0"}
    return subprocess.run([ansible_bin(), "all", "-i", str(lab.inventory), *args],
                          capture_output=True, text=True, timeout=300, env=env, check=False)


def test_hosts_answer_ssh_as_root_and_sudo_user(lab: Lab) -> None:
    assert len(lab.hosts) >= 4
    machine_ids = set()
    for h in lab.hosts:
        with lab.connect(h) as root:
            assert ok(root, "hostname").strip() == h.name
            machine_ids.add(ok(root, "cat /etc/machine-id").strip())
            assert ok(root, "systemctl is-system-running").strip() == "running"
            assert f"inet {h.address}/24" in ok(root, "ip -4 addr show eth0")
        with lab.connect(h, user="admin") as admin:
            assert ok(admin, "id -un").strip() == "admin"
            assert ok(admin, "sudo -n id -u").strip() == "0"
    assert len(machine_ids) == len(lab.hosts)


def test_wrong_or_unknown_host_key_is_refused(lab: Lab, tmp_path: Path) -> None:
    h0, h1 = lab.hosts[0], lab.hosts[1]
    wrong = tmp_path / "known_hosts"
    h1_keys = Path(h1.dir, "identity", "ssh_host_ed25519_key.pub").read_text().split()
    wrong.write_text(f"{h0.address} {h1_keys[0]} {h1_keys[1]}\n")
    for known, error in ((wrong, paramiko.BadHostKeyException), (None, paramiko.SSHException)):
        client = paramiko.SSHClient()
        if known:
            client.load_host_keys(str(known))
        client.set_missing_host_key_policy(paramiko.RejectPolicy())
        with pytest.raises(error):
            client.connect(h0.address, username="root", key_filename=str(lab.key_file),
                           look_for_keys=False, allow_agent=False, timeout=10)
        client.close()


def test_ansible_ping_with_host_key_checking(lab: Lab) -> None:
    cp = run_ansible(lab, "-m", "ansible.builtin.ping")
    assert cp.returncode == 0, cp.stdout + cp.stderr
    for h in lab.hosts:
        assert f"{h.name} | SUCCESS" in cp.stdout
    cp = run_ansible(lab, "-u", "admin", "--become", "-m", "ansible.builtin.command",
                     "-a", "id -u")
    assert cp.returncode == 0, cp.stdout + cp.stderr
    assert cp.stdout.count("CHANGED | rc=0 >>\n0\n") == len(lab.hosts), cp.stdout


def test_nothing_is_routed_off_this_machine(lab: Lab) -> None:
    rules = subprocess.run(["ip", "rule", "list"], capture_output=True, text=True,
                           check=True).stdout
    assert f"iif {lab.bridge} prohibit" in rules
    h = lab.hosts[0]
    lookup = ["ip", "route", "get", "iif", lab.bridge, "from", h.address]
    outside = subprocess.run([*lookup[:3], "192.0.2.1", *lookup[3:]],  # TEST-NET, no packet sent
                             capture_output=True, text=True, check=False)
    assert outside.returncode != 0, outside.stdout
    inside = subprocess.run([*lookup[:3], lab.gateway, *lookup[3:]], capture_output=True,
                            text=True, check=False)
    assert inside.returncode == 0 and inside.stdout.startswith("local"), inside.stderr


PROXY_PROBE = """
import http.client, sys
def status(method, target):
    c = http.client.HTTPConnection(sys.argv[1], int(sys.argv[2]), timeout=10)
    c.request(method, target)
    return c.getresponse().status
print(status("GET", "http://example.com/"), status("GET", "http://deb.debian.org:8080/"),
      status("POST", "http://deb.debian.org/debian/"), status("CONNECT", "deb.debian.org:443"),
      status("HEAD", "http://deb.debian.org/debian/dists/bookworm/Release"))
"""


def test_proxy_forwards_only_get_and_head_to_the_mirror(lab: Lab) -> None:
    with lab.connect(lab.hosts[0]) as c:
        cmd = f"python3 -c {shlex.quote(PROXY_PROBE)} {lab.gateway} {urlsplit(lab.proxy_url).port}"
        assert ok(c, cmd).split() == ["403", "403", "405", "405", "200"]


def test_apt_install_from_debian_through_the_proxy(lab: Lab, clean_host: LabHost) -> None:
    with lab.connect(clean_host) as c:
        ok(c, "apt-get update -q")
        ok(c, "DEBIAN_FRONTEND=noninteractive apt-get install -y -q hello")
        assert ok(c, "hello").strip() == "Hello, world!"
    log = lab.proxy_log.read_text()
    assert f'{clean_host.address} "GET http://' in log
    assert "/pool/main/h/hello/hello_" in log


def test_apt_install_from_a_signed_local_repository(lab: Lab, clean_host: LabHost,
                                                    tmp_path: Path) -> None:
    pkg = DebSpec("rocmprov-lab-dummy", "1.0",
                  files={"/usr/share/rocmprov-lab-dummy/ok": "from the local repo\n"})
    repo = build_repo(tmp_path / "repo", [pkg], suite="lab", component="main")
    assert repo.keyring is not None
    url = lab.serve_dir(repo.root)
    assert url.startswith(f"http://{lab.gateway}:")
    keyring = "/etc/apt/keyrings/rocmprov-lab.gpg"
    (clean_host.root / keyring.lstrip("/")).parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(repo.keyring, clean_host.root / keyring.lstrip("/"))
    (clean_host.root / "etc/apt/sources.list.d/lab.sources").write_text(repo.deb822(url, keyring))
    only_local = "-o Dir::Etc::SourceList=/dev/null -o APT::Get::List-Cleanup=0"
    with lab.connect(clean_host, user="admin") as c:
        ok(c, f"sudo -n apt-get update -q {only_local}")
        ok(c, "sudo -n DEBIAN_FRONTEND=noninteractive apt-get install -y -q rocmprov-lab-dummy")
        assert ok(c, "cat /usr/share/rocmprov-lab-dummy/ok") == "from the local repo\n"
        assert ok(c, "dpkg-query -W -f '${Version}' rocmprov-lab-dummy") == "1.0"
        # with another key in Signed-By the repository is refused
        other = build_repo(tmp_path / "other", [pkg], suite="lab")
        assert other.keyring is not None
        shutil.copyfile(other.keyring, clean_host.root / keyring.lstrip("/"))
        _rc, out, err = sh(c, f"sudo -n apt-get update -q {only_local}")  # rc 0: old lists kept
        assert "NO_PUBKEY" in out + err and "is not updated" in out + err, out + err


def test_systemctl_mask_is_real(lab: Lab, clean_host: LabHost) -> None:
    with lab.connect(clean_host) as c:
        ok(c, "systemctl mask systemd-networkd.service")
        _rc, out, _err = sh(c, "systemctl is-enabled systemd-networkd.service")
        assert out.strip() == "masked"
        ok(c, "systemctl unmask systemd-networkd.service")
        _rc, out, _err = sh(c, "systemctl is-enabled systemd-networkd.service")
        assert out.strip() != "masked"


def wait_for(pred, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    for _ in range(int(timeout / 0.25) + 1):
        if pred():
            return
        if time.monotonic() > deadline:
            break
        time.sleep(0.25)
    pytest.fail(f"timed out waiting for {what}")


def test_reboot_inside_a_host_comes_back(lab: Lab, clean_host: LabHost) -> None:
    h = clean_host
    with lab.connect(h) as c:
        ok(c, "touch /run/before-reboot /var/tmp/kept")
        pid1_start = ok(c, "cut -d' ' -f22 /proc/1/stat").strip()
        c.exec_command("systemctl reboot")
    wait_for(lambda: not ssh_banner(h.address), 60, f"{h.name} to go down")
    wait_for(lambda: ssh_banner(h.address), 120, f"{h.name} to answer SSH again")
    with lab.connect(h) as c:
        ok(c, "systemctl is-system-running --wait")
        assert sh(c, "test -e /run/before-reboot")[0] == 1  # /run is new: it really booted
        ok(c, "test -e /var/tmp/kept")  # the disk is kept
        assert ok(c, "cut -d' ' -f22 /proc/1/stat").strip() != pid1_start
    reboot = run_ansible(lab, "--limit", h.name, "-m", "ansible.builtin.reboot")
    assert reboot.returncode == 0 and '"rebooted": true' in reboot.stdout, reboot.stdout


def refused(h: LabHost) -> bool:
    try:
        socket.create_connection((h.address, h.port), timeout=2).close()
    except ConnectionRefusedError:
        return True
    except OSError:
        return False
    return False


def timed_out(h: LabHost) -> bool:
    try:
        socket.create_connection((h.address, h.port), timeout=1).close()
    except TimeoutError:
        return True
    except OSError:
        return False
    return False


def test_fault_helpers(lab: Lab, clean_host: LabHost) -> None:
    h = clean_host
    lab.firewall(h, "drop")
    assert timed_out(h)
    lab.firewall(h, "reject")
    assert refused(h)
    lab.unfirewall(h)
    assert ssh_banner(h.address)
    lab.kill_sshd(h)
    assert refused(h)
    lab.start_sshd(h)
    wait_for(lambda: ssh_banner(h.address), 20, "sshd back")
    lab.break_sudo(h)
    with lab.connect(h, user="admin") as c:
        rc, _out, err = sh(c, "sudo -n true")
        assert rc != 0 and "password" in err
    lab.fix_sudo(h)
    lab.stop_host(h)
    assert not ssh_banner(h.address)
    lab.start_host(h)
    with lab.connect(h) as c:
        assert ok(c, "hostname").strip() == h.name


@pytest.mark.usefixtures("lab_available")
def test_up_and_down_from_another_process_leave_nothing(tmp_path: Path) -> None:
    workdir = tmp_path / "cli-lab"
    cli = [sys.executable, "-m", "tests.lab"]
    up = subprocess.run([*cli, "up", "2", "--workdir", str(workdir)], cwd=ROOT,
                        capture_output=True, text=True, timeout=300, check=False)
    lab = Lab(workdir)
    try:
        assert up.returncode == 0, up.stderr
        assert len(lab.hosts) == 2
        for h in lab.hosts:
            with lab.connect(h) as c:
                assert ok(c, "hostname").strip() == h.name
        snap = lab.snapshot()
        assert len(snap[2]) > 2 * 5  # proxy, supervisors and the hosts' processes
    finally:
        down = subprocess.run([*cli, "down", "--workdir", str(workdir)], cwd=ROOT,
                              capture_output=True, text=True, timeout=300, check=False)
    assert down.returncode == 0, down.stderr
    assert Lab(workdir).leftovers(*snap) == []
    assert not (workdir / "lab.json").exists()


@pytest.mark.lab_scale
def test_sixteen_hosts_start_answer_and_stop(make_lab: Callable[[int], Lab]) -> None:
    t0 = time.monotonic()
    lab = make_lab(16)
    started = time.monotonic() - t0
    cp = run_ansible(lab, "-m", "ansible.builtin.ping", "--forks", "16")
    assert cp.returncode == 0, cp.stdout + cp.stderr
    assert cp.stdout.count("| SUCCESS") == 16
    rss = sum(lab.memory_bytes(h) for h in lab.hosts) / 16 / 2**20
    print(f"\nlab scale: 16 hosts started in {started:.1f}s, rss per host {rss:.1f} MiB")
    # make_lab stops it and checks that nothing is left
