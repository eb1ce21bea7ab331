"""Container readiness on a real lab host (issue 31): the rocmprov_containers role installs the
toolkit from AMD's repository layout (tests/lab/ctkrepo.py: a stand-in package at AMD's path),
generates the CDI spec for the device nodes made in the host, keeps foreign files, is
idempotent; Debian 12's real Podman starts containers with those nodes; the audit catches a
stale spec and a missing group.

What the lab cannot have (docs/containers.md): a GPU (the nodes are mknod'ed: opening one gives
ENXIO, which also proves the permission check passed), amdgpu (the preinst's
/sys/module/amdgpu/drivers is a tmpfs made in the host's mount namespace), kernel uevents
(the udev rule cannot fire in a container: the test starts the service the rule starts).
Nested Podman in nspawn needs vfs storage, no keyring, no default sysctls and no cgroups
(a lab-only containers.conf).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.lab import Lab, LabHost, ctkrepo
from tests.test_apply_lab import apply
from tests.test_releases_lab import sh

pytestmark = [pytest.mark.lab, pytest.mark.long]  # minutes in CI: scheduled first

FOREIGN_SPEC = ('{"cdiVersion": "0.5.0", "kind": "vendor.com/device", "devices": [{"name": '
                '"dev0", "containerEdits": {"deviceNodes": [{"path": "/dev/null"}]}}]}\n')
DAEMON = {"features": {"containerd-snapshotter": True}, "log-driver": "local"}
# Podman nested in systemd-nspawn (docs/containers.md, "The lab"): not for real hosts.
LAB_PODMAN = """[containers]
netns = "none"
keyring = false
default_sysctls = []
cgroups = "disabled"
[engine]
runtime = "crun"
"""
LAB_STORAGE = """[storage]
driver = "vfs"
runroot = "/run/containers/storage"
graphroot = "/var/lib/containers/storage"
"""
SYSMOD = "/sys/module/amdgpu/drivers/pci:amdgpu/0000:c1:00.0/drm"


def put(h: LabHost, path: str, text: str) -> None:
    """A file in the host's root, written from outside (root-owned, 0644)."""
    target = h.root / path.lstrip("/")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text)


def fake_gpu(lab: Lab, h: LabHost, render: int) -> None:
    """amdgpu as AMD's preinst and amd-ctk see it, and one GPU's nodes (card1, renderD<N>)."""
    sh(lab, h, f"mountpoint -q /sys/module || mount -t tmpfs -o mode=0755 tmpfs /sys/module; "
               f"rm -rf {SYSMOD}; mkdir -p {SYSMOD}/card1 {SYSMOD}/renderD{render}; "
               "rm -rf /dev/dri; mkdir -p /dev/dri; "
               "[ -e /dev/kfd ] || mknod -m 0660 /dev/kfd c 238 0; "
               f"mknod -m 0660 /dev/dri/card1 c 226 1; "
               f"mknod -m 0660 /dev/dri/renderD{render} c 226 {render}; "
               "getent group render >/dev/null || groupadd -r render; "
               "chgrp render /dev/kfd /dev/dri/renderD*; chgrp video /dev/dri/card1")


def audit(inv: Path, tmp: Path) -> dict[str, list[dict[str, Any]]]:
    cp = subprocess.run([sys.executable, "-m", "rocmprov", "audit", str(inv), "--format", "json",
                         "--gpu-user", "admin"], capture_output=True, text=True, timeout=300,
                        env={**os.environ, "XDG_STATE_HOME": str(tmp / "state")},
                        check=False)  # fmt: skip
    assert cp.stdout.startswith("{"), cp.stderr[-3000:]
    doc = json.loads(cp.stdout)
    out: dict[str, list[dict[str, Any]]] = {}
    for f in doc["hosts"][0]["findings"]:
        if f["check"].startswith("container."):
            out.setdefault(f["check"], []).append(f)
    return out


def worst(fs: dict[str, list[dict[str, Any]]], check: str) -> str:
    order = ["ok", "skipped", "unknown", "warning", "critical"]
    return max((f["severity"] for f in fs.get(check, [])), key=order.index, default="none")


def podman(lab: Lab, h: LabHost, args: str, user: str = "") -> subprocess.CompletedProcess[str]:
    cmd = f"cd /tmp && timeout 120 podman run --rm --network none {args} localhost/bb:1 " \
          "/bin/sh -c 'ls -ln /dev/kfd /dev/dri; cat /dev/kfd'"
    if user:
        cmd = f"su - {user} -c {json.dumps(cmd)}"
    return sh(lab, h, cmd + " 2>&1", check=False)


def test_containers_role_cdi_podman_and_audit(lab: Lab, clean_host: LabHost,
                                               tmp_path: Path) -> None:  # fmt: skip
    h = clean_host
    url = lab.serve_dir(ctkrepo.build(tmp_path / "ctk"))
    text = lab.inventory.read_text()
    inv = tmp_path / "inv.ini"
    inv.write_text(f"[lab]\n{h.name} ansible_host={h.address}\n\n"
                   + text[text.index("[lab:vars]"):])  # fmt: skip
    extra = json.dumps({"rocmprov_mirrors": ctkrepo.mirrors(url), "rocmprov_containers_docker":
                        True, "rocmprov_containers_podman_keep_groups": True})  # fmt: skip
    # What another vendor and the admin left: must stay.
    put(h, "/etc/cdi/vendor.json", FOREIGN_SPEC)
    put(h, "/etc/docker/daemon.json", json.dumps(DAEMON))
    put(h, "/etc/containers/containers.conf", LAB_PODMAN)
    put(h, "/etc/containers/storage.conf", LAB_STORAGE)
    # Debian 12's own Podman through the lab's apt proxy; a tiny image made from busybox.
    sh(lab, h, "DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "
               "-o Dpkg::Options::=--force-confold podman crun uidmap busybox-static >/dev/null && "
               "mkdir -p /tmp/img/bin && cp /bin/busybox /tmp/img/bin/ && "
               "for c in sh ls cat id; do ln -sf busybox /tmp/img/bin/$c; done && "
               "tar -C /tmp/img -cf /tmp/img.tar . && chmod 0644 /tmp/img.tar && "
               "podman import -q /tmp/img.tar localhost/bb:1 >/dev/null && "
               "su - admin -c 'podman import -q /tmp/img.tar localhost/bb:1' >/dev/null")

    # 0. Check mode on the fresh host: no error, nothing written.
    rc, doc, _ = apply(inv, tmp_path, "--tags", "containers", "--check", "-e", extra)
    assert rc == 0, json.dumps(doc["hosts"], indent=1)
    assert sh(lab, h, "ls /etc/apt/sources.list.d /etc/docker").stdout.count("rocmprov") == 0
    assert json.loads(sh(lab, h, "cat /etc/docker/daemon.json").stdout) == DAEMON

    # 1. No amdgpu: AMD's package would refuse to install; the role says so and does the rest.
    rc, doc, _ = apply(inv, tmp_path, "--tags", "containers", "-e", extra)
    assert rc == 0, json.dumps(doc["hosts"], indent=1)
    assert sh(lab, h, "dpkg-query -W amd-container-toolkit", check=False).returncode != 0
    assert any("amdgpu is not loaded" in n for n in doc["hosts"][0]["notes"]), doc["hosts"]
    merged = json.loads(sh(lab, h, "cat /etc/docker/daemon.json").stdout)
    assert merged["features"] == {"containerd-snapshotter": True, "cdi": True}
    assert merged["log-driver"] == "local" and "runtimes" not in merged
    assert sh(lab, h, "ls /etc/docker").stdout.count("daemon.json.") == 1  # the backup

    # 2. amdgpu "loaded", one GPU: toolkit installed from the AMD-layout repo, spec generated.
    fake_gpu(lab, h, 128)
    rc, doc, _ = apply(inv, tmp_path, "--tags", "containers", "-e", extra)
    assert rc == 0, json.dumps(doc["hosts"], indent=1)
    assert "1.3.0~22.04" in sh(lab, h, "dpkg-query -W amd-container-toolkit").stdout
    spec = json.loads(sh(lab, h, "cat /etc/cdi/amd.json").stdout)
    assert spec["kind"] == "amd.com/gpu" and [d["name"] for d in spec["devices"]] == ["0", "all"]
    nodes = {n["path"]: (n["major"], n.get("minor", 0)) for n in
             spec["devices"][-1]["containerEdits"]["deviceNodes"]}
    assert nodes == {"/dev/dri/card1": (226, 1), "/dev/dri/renderD128": (226, 128),
                     "/dev/kfd": (238, 0)}
    assert sh(lab, h, "cat /etc/cdi/vendor.json").stdout == FOREIGN_SPEC  # foreign spec kept
    merged = json.loads(sh(lab, h, "cat /etc/docker/daemon.json").stdout)
    assert merged["runtimes"] == {"amd": {"path": "amd-container-runtime", "args": []}}
    assert merged["features"]["containerd-snapshotter"] is True and merged["log-driver"] == "local"
    assert sh(lab, h, "systemctl is-enabled rocmprov-cdi-refresh.service").stdout.strip() == \
        "enabled"

    # 3. Idempotent.
    rc, doc, _ = apply(inv, tmp_path, "--tags", "containers", "-e", extra)
    assert rc == 0 and sum(x["changed"] for x in doc["hosts"]) == 0, doc["hosts"]

    # 4. The audit: toolkit and spec seen; Debian 12's podman 4.3.1 cannot read cdiVersion 0.6.0,
    #    and the admin (not in render) would lose /dev/kfd in a rootless container.
    fs = audit(inv, tmp_path)
    assert worst(fs, "container.toolkit") == "ok" and worst(fs, "container.cdi.stale") == "ok"
    assert worst(fs, "container.cdi.spec") == "critical", fs["container.cdi.spec"]
    assert "podman 4.3.1" in fs["container.cdi.spec"][0]["summary"]
    user = fs["container.user"][0]
    assert user["severity"] == "warning" and "not in render" in user["summary"], user
    assert worst(fs, "container.podman.groups") == "ok"  # the drop-in keeps the groups

    # ... and Podman agrees: the spec as amd-ctk writes it is unresolvable here,
    out = podman(lab, h, "--device amd.com/gpu=all")
    assert "unresolvable CDI devices amd.com/gpu=all" in out.stdout, out.stdout
    # the same spec at cdiVersion 0.5.0 gives the container the nodes (ENXIO: no driver
    # behind them, but the open got past the permissions),
    sh(lab, h, "sed -i 's/\"cdiVersion\": \"0.6.0\"/\"cdiVersion\": \"0.5.0\"/' /etc/cdi/amd.json")
    out = podman(lab, h, "--device amd.com/gpu=all")
    assert "226, 128" in out.stdout and "238,   0" in out.stdout, out.stdout
    assert "No such device or address" in out.stdout, out.stdout
    # and the plain device flags work for a rootless user once in render (keep-groups drop-in).
    sh(lab, h, "usermod -aG render,video admin")
    out = podman(lab, h, "--device /dev/kfd --device /dev/dri", user="admin")
    assert "No such device or address" in out.stdout, out.stdout
    fs = audit(inv, tmp_path)
    assert worst(fs, "container.user") == "ok", fs["container.user"]

    # 5. The GPU changes (renderD128 -> renderD129) and nothing regenerates: the audit says stale.
    sh(lab, h, "systemctl start rocmprov-cdi-refresh.service")  # back to what amd-ctk writes
    fake_gpu(lab, h, 129)
    fs = audit(inv, tmp_path)
    stale = fs["container.cdi.stale"][0]
    assert stale["severity"] == "critical" and "/dev/dri/renderD128" in stale["summary"], stale
    # What the udev rule starts on a real host regenerates it.
    sh(lab, h, "systemctl start rocmprov-cdi-refresh.service")
    assert "renderD129" in sh(lab, h, "cat /etc/cdi/amd.json").stdout
    fs = audit(inv, tmp_path)
    assert worst(fs, "container.cdi.stale") == "ok", fs["container.cdi.stale"]
    assert sh(lab, h, "ls -A /etc/cdi").stdout.split() == ["amd.json", "vendor.json"]

    # 6. verify --container over SSH: the configured method (CDI: a spec is there) fails the
    #    way the audit said (podman 4.3.1), with the explain table's cause; the device flags
    #    reach the image (busybox has no python3); no /dev/kfd: said plainly, nothing run.
    doc = verify(inv, tmp_path, "localhost/bb:1")
    assert (doc["engine"], doc["method"]) == ("podman", "cdi"), doc
    assert "unresolvable CDI devices" in doc["smoke"]["error"], doc
    assert "container.cdi-device-unresolvable" in doc["smoke"]["causes"], doc
    doc = verify(inv, tmp_path, "localhost/bb:1", "--method", "devices")
    assert doc["method"] == "devices" and "python3" in doc["smoke"]["error"], doc
    sh(lab, h, "rm -f /dev/kfd")
    doc = verify(inv, tmp_path, "localhost/bb:1")
    assert doc["severity"] == "unknown" and "no AMD GPU" in doc["note"], doc


def verify(inv: Path, tmp: Path, image: str, *args: str) -> dict[str, Any]:
    cp = subprocess.run([sys.executable, "-m", "rocmprov", "verify", str(inv), "--container",
                         image, "--format", "json", *args], capture_output=True, text=True,
                        timeout=300, env={**os.environ, "XDG_STATE_HOME": str(tmp / "state")},
                        check=False)  # fmt: skip
    assert cp.stdout.startswith("{"), cp.stderr[-3000:]
    return json.loads(cp.stdout)["hosts"][0]


# The admin's own daemon.json, in the admin's own layout (restored byte for byte).
ADMIN_DAEMON = '{\n  "log-driver": "local",\n  "features": {"containerd-snapshotter": true}\n}\n'
GONE = ("/etc/udev/rules.d/70-rocmprov-cdi-refresh.rules",
        "/etc/systemd/system/rocmprov-cdi-refresh.service", "/usr/local/sbin/rocmprov-cdi-refresh",
        "/etc/containers/containers.conf.d/50-rocmprov-gpu-groups.conf",
        "/etc/apt/sources.list.d/rocmprov-amd-container-toolkit.sources",
        "/etc/apt/keyrings/rocmprov-amd-container-toolkit.asc", "/etc/cdi/amd.json",
        "/var/lib/rocmprov/containers")  # fmt: skip


def installed(lab: Lab, h: LabHost, pkg: str) -> bool:
    cp = sh(lab, h, f"dpkg-query -W -f '${{db:Status-Abbrev}}' {pkg}", check=False)
    return cp.returncode == 0 and cp.stdout[1:2] == "i"


def docker_members(lab: Lab, h: LabHost) -> set[str]:
    """The docker group's members (getent group: name:x:gid:member,member)."""
    members = sh(lab, h, "getent group docker").stdout.strip().split(":")[3]
    return set(filter(None, members.split(",")))


def test_containers_uninstall_is_the_inverse(lab: Lab, clean_host: LabHost,
                                             tmp_path: Path) -> None:  # fmt: skip
    """apply --tags containers, then --tags uninstall: the host as it was (issue 26's rule)."""
    h = clean_host
    url = lab.serve_dir(ctkrepo.build(tmp_path / "ctk"))
    text = lab.inventory.read_text()
    inv = tmp_path / "inv.ini"
    inv.write_text(f"[lab]\n{h.name} ansible_host={h.address}\n\n"
                   + text[text.index("[lab:vars]"):])  # fmt: skip
    users = ["alice", "bob", "nobody-here"]
    extra = json.dumps({"rocmprov_mirrors": ctkrepo.mirrors(url), "rocmprov_containers_docker":
                        True, "rocmprov_containers_podman_keep_groups": True,
                        "rocmprov_containers_docker_users": users})  # fmt: skip
    # Docker's group as its packages leave it; bob is in it by the admin's hand, alice not yet.
    sh(lab, h, "groupadd --system docker && useradd -M alice && useradd -M -G docker bob")
    put(h, "/etc/cdi/other.json", FOREIGN_SPEC)  # another vendor's spec
    put(h, "/etc/docker/daemon.json", ADMIN_DAEMON)
    fake_gpu(lab, h, 128)
    assert not installed(lab, h, "amd-container-toolkit")
    jq_before = installed(lab, h, "jq")  # the stand-in toolkit depends on jq
    etc_containers = sh(lab, h, "test -e /etc/containers", check=False).returncode == 0

    rc, doc, _ = apply(inv, tmp_path, "--tags", "containers", "-e", extra)
    assert rc == 0, json.dumps(doc["hosts"], indent=1)
    assert installed(lab, h, "amd-container-toolkit") and installed(lab, h, "jq")
    for path in GONE:
        sh(lab, h, f"test -e {path}")  # all there now
    assert json.loads(sh(lab, h, "cat /etc/docker/daemon.json").stdout)["features"]["cdi"] is True
    assert sh(lab, h, "ls /etc/docker").stdout.count("daemon.json.") == 1  # the backup beside
    # The record: root-only directory, files 0600.
    modes = sh(lab, h, "stat -c '%a %U %n' /var/lib/rocmprov/containers "
                       "/var/lib/rocmprov/containers/daemon.json.before").stdout.split("\n")
    assert modes[0].startswith("700 root") and modes[1].startswith("600 root"), modes
    assert docker_members(lab, h) == {"alice", "bob"}  # nobody-here is not created
    assert sh(lab, h, "ls /var/lib/rocmprov/containers/docker-users").stdout.split() == ["alice"]

    rc, doc, _ = apply(inv, tmp_path, "--tags", "uninstall")
    assert rc == 0, json.dumps(doc["hosts"], indent=1)
    assert not installed(lab, h, "amd-container-toolkit")
    assert installed(lab, h, "jq") == jq_before  # what only the toolkit needed went with it
    assert sh(lab, h, "cat /etc/docker/daemon.json").stdout == ADMIN_DAEMON
    assert sh(lab, h, "ls -A /etc/docker").stdout.split() == ["daemon.json"]
    assert sh(lab, h, "ls -A /etc/cdi").stdout.split() == ["other.json"]
    assert sh(lab, h, "cat /etc/cdi/other.json").stdout == FOREIGN_SPEC
    for path in GONE:
        assert sh(lab, h, f"test -e {path}", check=False).returncode != 0, path
    assert (sh(lab, h, "test -e /etc/containers", check=False).returncode == 0) == etc_containers
    out = sh(lab, h, "systemctl list-unit-files 'rocmprov-cdi*'", check=False).stdout
    assert "rocmprov-cdi-refresh" not in out, out
    assert "containers: taken back" in doc["hosts"][0]["notes"], doc["hosts"]
    assert docker_members(lab, h) == {"bob"}  # the admin's membership stays
    assert sh(lab, h, "getent passwd nobody-here", check=False).returncode != 0

    # Again, and the admin edits daemon.json after apply: left as it is, and the run says so.
    rc, doc, _ = apply(inv, tmp_path, "--tags", "containers", "-e", extra)
    assert rc == 0, json.dumps(doc["hosts"], indent=1)
    edited = json.loads(sh(lab, h, "cat /etc/docker/daemon.json").stdout)
    edited["debug"] = True
    put(h, "/etc/docker/daemon.json", json.dumps(edited))
    rc, doc, _ = apply(inv, tmp_path, "--tags", "uninstall")
    assert rc == 0, json.dumps(doc["hosts"], indent=1)
    assert json.loads(sh(lab, h, "cat /etc/docker/daemon.json").stdout) == edited
    assert any("daemon.json left as it is" in n for n in doc["hosts"][0]["notes"]), doc["hosts"]
    assert sh(lab, h, "cat /var/lib/rocmprov/containers/daemon.json.before").stdout == ADMIN_DAEMON
    assert not installed(lab, h, "amd-container-toolkit")
    assert sh(lab, h, "ls -A /etc/cdi").stdout.split() == ["other.json"]
