"""Many SSH "hosts" on this machine: one sshd per loopback address 127.0.1.k (k = 1..N).

Each has its own host key (ed25519), listens on 127.0.1.k:PORT only, lets root in with one
client key (no PAM, no passwords), and is described by a generated known_hosts, ssh_config and
Ansible inventory, so every client checks host keys for real. Traffic stays on 127.0.0.0/8.
The probes then run on this machine itself: fine for the controller side (wall time at large N
then also holds the hosts' own work, sharing the same cores).

Each sshd runs in a mount namespace of its own (unshare -m) where root's ~/.bashrc is Debian's
stock one (/usr/share/base-files/dot.bashrc, comments only): bash reads ~/.bashrc for every
command sshd runs, and this machine's own root .bashrc (pyenv init and the like) would add
hundreds of ms of host-side work to every SSH command, unlike a server's stock root account.
Nothing outside those namespaces changes.

    with LoopHosts(100, Path("/tmp/loop")) as hosts:
        hosts.inventory, hosts.ssh_config, hosts.known_hosts, hosts.names

Every sshd is started here and stopped by its pid (SIGTERM, then SIGKILL after 5 s).
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from pathlib import Path

from _bench import HostFarm

PORT = 22022
MAX_HOSTS = 250
SSHD = "/usr/sbin/sshd"
SFTP = "/usr/lib/openssh/sftp-server"
STOCK_BASHRC = Path("/usr/share/base-files/dot.bashrc")


def address(k: int) -> str:
    return f"127.0.1.{k}"


class LoopHosts(HostFarm):
    def __init__(self, n: int, workdir: Path, port: int = PORT) -> None:
        if not 1 <= n <= MAX_HOSTS:
            raise ValueError(f"1..{MAX_HOSTS} loopback hosts, not {n}")
        self.n = n
        self.port = port
        self.workdir = workdir
        self.procs: list[subprocess.Popen[bytes]] = []
        self.names = [f"loop{k:03d}" for k in range(1, n + 1)]
        self.inventory = workdir / "inventory.ini"
        self.ssh_config = workdir / "ssh_config"
        self.known_hosts = workdir / "known_hosts"
        self.key = workdir / "id_ed25519"

    def start(self) -> None:
        if not Path(SSHD).is_file():
            raise SystemExit("benchmark: /usr/sbin/sshd missing (apt-get install openssh-server)")
        Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)  # sshd's privilege separation dir
        if self.workdir.exists():
            shutil.rmtree(self.workdir)
        self.workdir.mkdir(parents=True, mode=0o700)
        keys = self.workdir / "hostkeys"
        keys.mkdir()
        _keygen(self.key, "bench-client")
        (self.workdir / "authorized_keys").write_text(Path(f"{self.key}.pub").read_text())
        (self.workdir / "authorized_keys").chmod(0o600)
        known, config, inv = [], [], ["[loop]"]
        for k, name in enumerate(self.names, 1):
            hk = keys / f"{name}_ed25519"
            _keygen(hk, name)
            pub = Path(f"{hk}.pub").read_text().split()
            known.append(f"[{address(k)}]:{self.port} {pub[0]} {pub[1]}")
            config += [
                f"Host {name}",
                f"  HostName {address(k)}",
                f"  Port {self.port}",
                "  User root",
                f"  IdentityFile {self.key}",
                "  IdentitiesOnly yes",
                f"  UserKnownHostsFile {self.known_hosts}",
                "  GlobalKnownHostsFile /dev/null",
                "  StrictHostKeyChecking yes",
                "  ConnectTimeout 10",
                "  LogLevel ERROR",
                "",
            ]
            inv.append(f"{name} ansible_host={address(k)} ansible_port={self.port}")
            cfg = self.workdir / f"sshd_{name}.conf"
            cfg.write_text(
                "\n".join(
                    [
                        f"ListenAddress {address(k)}:{self.port}",
                        f"HostKey {hk}",
                        "PidFile none",
                        f"AuthorizedKeysFile {self.workdir / 'authorized_keys'}",
                        "PermitRootLogin prohibit-password",
                        "PubkeyAuthentication yes",
                        "PasswordAuthentication no",
                        "KbdInteractiveAuthentication no",
                        "UsePAM no",
                        "StrictModes no",
                        "UseDNS no",
                        "MaxStartups 200:30:400",
                        "MaxSessions 100",
                        "LogLevel ERROR",
                        "AcceptEnv LANG LC_*",
                        f"Subsystem sftp {SFTP}",
                        "",
                    ]
                )
            )
        self.known_hosts.write_text("\n".join(known) + "\n")
        self.ssh_config.write_text("\n".join(config))
        inv += [
            "",
            "[loop:vars]",
            "ansible_user=root",
            f"ansible_ssh_private_key_file={self.key}",
            f"ansible_ssh_common_args='-F {self.ssh_config} "
            f"-o UserKnownHostsFile={self.known_hosts} -o StrictHostKeyChecking=yes'",
            "ansible_python_interpreter=/usr/bin/python3",
            "",
        ]
        self.inventory.write_text("\n".join(inv))
        bashrc = self.workdir / "root.bashrc"
        bashrc.write_text(STOCK_BASHRC.read_text() if STOCK_BASHRC.is_file() else "")
        home = Path.home()
        for name in self.names:
            cfg = self.workdir / f"sshd_{name}.conf"
            inner = (
                f"mount --bind {bashrc} {home / '.bashrc'} 2>/dev/null || true; "
                f"exec {SSHD} -D -e -f {cfg}"
            )
            argv = ["unshare", "--mount", "--propagation", "private", "sh", "-c", inner]
            log = open(self.workdir / f"sshd_{name}.log", "wb")  # noqa: SIM115
            self.procs.append(
                subprocess.Popen(
                    argv if (home / ".bashrc").is_file() else [SSHD, "-D", "-e", "-f", str(cfg)],
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=log,
                    start_new_session=True,
                )
            )
            log.close()
        self._wait_listening(30.0)

    def _wait_listening(self, timeout: float) -> None:
        end = time.monotonic() + timeout
        pending = {k for k in range(1, self.n + 1)}
        while pending and time.monotonic() < end:
            for k in sorted(pending):
                proc = self.procs[k - 1]
                if proc.poll() is not None:
                    log = (self.workdir / f"sshd_{self.names[k - 1]}.log").read_text()
                    raise SystemExit(f"benchmark: sshd on {address(k)} exited: {log[-500:]}")
                try:
                    with socket.create_connection((address(k), self.port), timeout=1) as s:
                        s.settimeout(2)
                        if s.recv(4).startswith(b"SSH-"):
                            pending.discard(k)
                except OSError:
                    pass
            if pending:
                time.sleep(0.1)
        if pending:
            raise SystemExit(f"benchmark: {len(pending)} loopback sshd not listening")

    def stop(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                proc.terminate()  # by its pid
        end = time.monotonic() + 5
        for proc in self.procs:
            try:
                proc.wait(timeout=max(0.1, end - time.monotonic()))
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=5)
        self.procs.clear()


def _keygen(path: Path, comment: str) -> None:
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", comment, "-f", str(path)],
        check=True,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        timeout=30,
    )
