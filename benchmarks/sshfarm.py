"""Many SSH hosts on loopback addresses, served by a few asyncssh processes (benchmarks only).

    python benchmarks/sshfarm.py serve --spec DIR/farm.json --part 0   # one server process

`SSHFarm(n, workdir)` (a context manager) generates, for N hosts on 127.20.x.y port 2222:
one ed25519 host key per address, a client key, `known_hosts` (every address with its key),
`ssh_config`, `inventory.ini` and `hosts` (one address a line, for pdsh); then starts one
server process per `per_process` addresses (`python sshfarm.py serve`), and stops them by pid.

Each server is a real SSH server (asyncssh): key exchange, host key signature, public key
authentication of root against the client key only (anything else is refused). An exec
request whose command or stdin is rocmprov's probe script (it carries the line
`M=@@rocmprov-<nonce>`) is answered with a real bundle's recorded probe outputs, in the
script's own marker format with the script's nonce, for exactly the probe ids the script
asks for (an id the bundle lacks answers rc 127, "not recorded"), after `delay` seconds (the
time a real host's probe script takes: ~1 s for a full audit in docs/benchmarks.md's
health_quick table). Any other command is refused with rc 127: nothing is run on this machine.
Traffic stays on 127.0.0.0/8.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

from _bench import HostFarm

PORT = 2222
BUNDLE = (
    Path(__file__).resolve().parent.parent / "tests" / "data" / "h200-vm-bundle-2026-12-01.tar.gz"
)
_NONCE = re.compile(rb"@@rocmprov-([0-9a-f]{16,64})")
_BEGIN = re.compile(rb'echo "\$M begin ([A-Za-z0-9._-]+)"')


def address(k: int) -> str:
    """The k-th host's address (k from 0): 127.20.0.1 ... 127.20.7.250 for 2,000 hosts."""
    return f"127.20.{k // 250}.{k % 250 + 1}"


def reply_parts(bundle_path: Path = BUNDLE) -> dict[str, bytes]:
    """Per probe id, the script's output block for it (with {N} for the nonce's mark)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from rocmprov.collect.bundle import read_bundle

    bundle = read_bundle(bundle_path)
    parts: dict[str, bytes] = {}
    for pid, out in bundle.outputs.items():
        block = (
            f"@@M begin {pid}\n@@M out {pid}\n{out.stdout}\n@@M err {pid}\n{out.stderr}\n"
            f"@@M end {pid} {out.rc} 100.00 {100 + out.duration:.2f}\n"
        )
        parts[pid] = block.encode()
    return parts


class SSHFarm(HostFarm):
    def __init__(self, n: int, workdir: Path, *, per_process: int = 250, delay: float = 1.0):
        self.n, self.workdir, self.delay = n, workdir, delay
        self.per_process = per_process
        self.procs: list[subprocess.Popen[bytes]] = []
        self.inventory = workdir / "inventory.ini"
        self.known_hosts = workdir / "known_hosts"
        self.ssh_config = workdir / "ssh_config"
        self.hosts_file = workdir / "hosts"
        self.client_key = workdir / "id_ed25519"

    def start(self) -> None:
        import asyncssh

        self.workdir.mkdir(parents=True, exist_ok=True)
        keydir = self.workdir / "hostkeys"
        keydir.mkdir(exist_ok=True)
        client = asyncssh.generate_private_key("ssh-ed25519")
        client.write_private_key(str(self.client_key))
        os.chmod(self.client_key, 0o600)
        client.write_public_key(str(self.client_key) + ".pub")
        known, inv, hosts = [], ["[farm]"], []
        for k in range(self.n):
            addr = address(k)
            key = asyncssh.generate_private_key("ssh-ed25519")
            key.write_private_key(str(keydir / addr))
            pub = key.export_public_key("openssh").decode().split()[:2]
            known.append(f"[{addr}]:{PORT} {' '.join(pub)}")
            inv.append(f"h{k:04d} ansible_host={addr}")
            hosts.append(addr)
        self.known_hosts.write_text("\n".join(known) + "\n")
        self.hosts_file.write_text("\n".join(hosts) + "\n")
        common = f"-F {self.ssh_config} -o UserKnownHostsFile={self.known_hosts}"
        inv += [
            "",
            "[farm:vars]",
            f"ansible_port={PORT}",
            "ansible_user=root",
            f"ansible_ssh_private_key_file={self.client_key}",
            f"ansible_ssh_common_args='{common}'",
            "ansible_python_interpreter=/usr/bin/python3",
        ]
        self.inventory.write_text("\n".join(inv) + "\n")
        self.ssh_config.write_text(
            "Host 127.20.*\n"
            f"  Port {PORT}\n  User root\n  IdentityFile {self.client_key}\n"
            "  IdentitiesOnly yes\n  StrictHostKeyChecking yes\n"
            f"  UserKnownHostsFile {self.known_hosts}\n  GlobalKnownHostsFile /dev/null\n"
            "  BatchMode yes\n  LogLevel ERROR\n"
        )
        spec = self.workdir / "farm.json"
        parts = {k: v.decode() for k, v in reply_parts().items()}
        spec.write_text(
            json.dumps(
                {
                    "n": self.n,
                    "per_process": self.per_process,
                    "keydir": str(keydir),
                    "client_pub": str(self.client_key) + ".pub",
                    "delay": self.delay,
                    "parts": parts,
                }
            )
        )
        log_dir = self.workdir / "logs"
        log_dir.mkdir(exist_ok=True)
        for part in range((self.n + self.per_process - 1) // self.per_process):
            ready = self.workdir / f"ready.{part}"
            ready.unlink(missing_ok=True)
            self.procs.append(
                subprocess.Popen(
                    [sys.executable, __file__, "serve", "--spec", str(spec), "--part", str(part)],
                    stdin=subprocess.DEVNULL,
                    stdout=open(log_dir / f"serve.{part}.log", "wb"),  # noqa: SIM115
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
            )
        deadline = time.monotonic() + 120
        for part, proc in enumerate(self.procs):
            while not (self.workdir / f"ready.{part}").exists():
                if proc.poll() is not None:
                    raise RuntimeError(f"sshfarm server {part} exited {proc.returncode}")
                if time.monotonic() > deadline:
                    raise RuntimeError(f"sshfarm server {part} not ready in 120 s")
                time.sleep(0.1)

    def subset(self, n: int) -> tuple[Path, Path]:
        """An inventory and a pdsh host file of the first n hosts."""
        lines = self.inventory.read_text().splitlines()
        hosts = [ln for ln in lines if ln.startswith("h")][:n]
        rest = lines[lines.index("") :]
        inv = self.workdir / f"inventory-{n}.ini"
        inv.write_text("\n".join(["[farm]", *hosts, *rest]) + "\n")
        hf = self.workdir / f"hosts-{n}"
        hf.write_text("\n".join(self.hosts_file.read_text().split()[:n]) + "\n")
        return inv, hf

    def stop(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)  # the process we started, by its pid
        for proc in self.procs:
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=10)
        self.procs.clear()


# -- the server process ---------------------------------------------------------------------


async def serve(spec_path: Path, part: int) -> None:
    import asyncssh

    spec = json.loads(spec_path.read_text())
    parts = {k: v.encode() for k, v in spec["parts"].items()}
    delay = float(spec["delay"])
    client = asyncssh.import_public_key(Path(spec["client_pub"]).read_text()).public_data

    def reply(script: bytes) -> bytes | None:
        m = _NONCE.search(script)
        if m is None:
            return None
        mark = b"@@rocmprov-" + m.group(1)
        out = [b"@@M start 100.00\n"]
        for pid in _BEGIN.findall(script):
            block = parts.get(pid.decode())
            if block is None:
                block = (
                    b"@@M begin %s\n@@M out %s\n\n@@M err %s\nnot recorded\n\n"
                    b"@@M end %s 127 100.00 100.00\n" % (pid, pid, pid, pid)
                )
            out.append(block)
        out.append(b"@@M done\n")
        return b"".join(out).replace(b"@@M", mark)

    async def handle(process: asyncssh.SSHServerProcess) -> None:
        command = process.command or ""
        command = command.encode() if isinstance(command, str) else command
        script = command
        if command.strip() == b"/bin/sh -s":
            script = await process.stdin.read()
        answer = reply(script)
        if answer is None:
            process.stderr.write(b"sshfarm: only rocmprov's probe script is served\n")
            process.exit(127)
            return
        await asyncio.sleep(delay)
        process.stdout.write(answer)
        await process.stdout.drain()
        process.exit(0)

    class Server(asyncssh.SSHServer):
        def begin_auth(self, username: str) -> bool:
            return True

        def public_key_auth_supported(self) -> bool:
            return True

        def validate_public_key(self, username: str, key: asyncssh.SSHKey) -> bool:
            return username == "root" and key.public_data == client

        def password_auth_supported(self) -> bool:
            return False

    first = part * spec["per_process"]
    last = min(spec["n"], first + spec["per_process"])
    keydir = Path(spec["keydir"])
    servers = []
    for k in range(first, last):
        addr = address(k)
        servers.append(
            await asyncssh.listen(
                addr,
                PORT,
                server_factory=Server,
                server_host_keys=[str(keydir / addr)],
                authorized_client_keys=None,
                process_factory=handle,
                encoding=None,
                allow_scp=False,
                line_editor=False,
                reuse_address=True,
            )
        )
    (spec_path.parent / f"ready.{part}").write_text(str(os.getpid()))
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    for server in servers:
        server.close()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("serve")
    s.add_argument("--spec", type=Path, required=True)
    s.add_argument("--part", type=int, required=True)
    args = ap.parse_args()
    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    asyncio.run(serve(args.spec, args.part))
    return 0


if __name__ == "__main__":
    sys.exit(main())
