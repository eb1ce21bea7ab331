"""The lab: real Debian 12 systemd hosts on this machine, reachable over real SSH.

Each host is a systemd-nspawn container booted with systemd as PID 1, on an overlayfs over a
shared, cached base root (tests/lab/prepare.sh builds it), in a network namespace of its own
with a veth on a private bridge. Nothing from the lab is routed off this machine; apt in the
hosts goes through a small proxy on the bridge that only forwards to this machine's Debian
mirror. All state lives in the work directory (lab.json), so another process can stop a lab.
See README.md beside this file for the facts behind the choices.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

HERE = Path(__file__).resolve().parent
CACHE_DIR = Path(os.environ.get("ROCMPROV_LAB_CACHE", "/var/cache/rocmprov-lab"))
INDEX_LOCK = Path("/run/rocmprov-lab.lock")
NET_PREFIX = "10.213"  # lab number k uses 10.213.k.0/24, bridge rpvlab<k>
BRIDGE_PREFIX = "rpvlab"
MAX_LABS = 16
MAX_HOSTS = 200
FIRST_HOST_OCTET = 11
PROXY_PORT = 3142
SERVE_PORTS = range(8100, 8200)
RULE_PREF = 90  # before "lookup main" (32766), after "lookup local" (0)
CGROUP_FS = Path("/sys/fs/cgroup")
CGROUP_HIERARCHIES = ("systemd", "unified", "memory")
CGROUP_TOP = "rocmprov-lab"
SUDO_USER = "admin"
NFT_TABLE = "rocmprov_lab_fault"
INOTIFY_LIMITS = {"max_user_instances": 8192, "max_user_watches": 524288}
REQUIRED_TOOLS = ("systemd-nspawn", "nsenter", "ip", "ssh-keygen", "mount", "umount", "tar",
                  "zstd", "nft")
STOP_TIMEOUT_S = 30.0
READY_TIMEOUT_S = 120.0
POLL_S = 0.2
SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


class LabError(RuntimeError):
    """The lab could not do what was asked; the message says why."""


@dataclass
class Proc:
    """A process the lab started, remembered with its start time so a reused pid is not hit."""

    pid: int
    start: int
    what: str = ""


@dataclass
class LabHost:
    """One lab host. `name` is its hostname, inventory name and ssh_config alias."""

    name: str
    index: int
    address: str
    netns: str
    veth: str
    dir: str
    key_file: str
    known_hosts: str
    ssh_config: str
    user: str = "root"
    sudo_user: str = SUDO_USER
    port: int = 22
    supervisor: Proc | None = None

    @property
    def root(self) -> Path:
        """The host's root file system as mounted on this machine (the overlay)."""
        return Path(self.dir, "root")

    @property
    def upper(self) -> Path:
        return Path(self.dir, "upper")

    @property
    def console_log(self) -> Path:
        return Path(self.dir, "console.log")

    def ssh_argv(self, user: str | None = None) -> list[str]:
        """argv prefix for OpenSSH to this host, host key checked against the lab known_hosts."""
        return ["ssh", "-F", self.ssh_config, "-l", user or self.user, self.name]


# ---------------------------------------------------------------- small helpers


def run(argv: Sequence[str], check: bool = True, timeout: float = 120,
        input: str | None = None) -> subprocess.CompletedProcess[str]:
    """Run argv (never through a shell); raise LabError with its stderr when check fails."""
    cp = subprocess.run(list(argv), capture_output=True, text=True, timeout=timeout, input=input,
                        check=False)
    if check and cp.returncode != 0:
        raise LabError(f"{' '.join(argv)} -> rc {cp.returncode}: {cp.stderr.strip()[-2000:]}")
    return cp


def proc_start(pid: int) -> int | None:
    """Start time (clock ticks since boot) of pid, or None if it is gone or a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat[stat.rindex(")") + 2:].split()
    if fields[0] in ("Z", "X"):
        with contextlib.suppress(ChildProcessError, OSError):
            os.waitpid(pid, os.WNOHANG)  # reap it if it is our child
        return None
    return int(fields[19])


def alive(p: Proc | None) -> bool:
    return p is not None and proc_start(p.pid) == p.start


def spawn(argv: Sequence[str], log: Path, what: str, cwd: Path | None = None) -> Proc:
    """Start a detached process (own session, survives this one) logging to log."""
    with open(log, "ab") as out:
        child = subprocess.Popen(list(argv), stdin=subprocess.DEVNULL, stdout=out, cwd=cwd,
                                 stderr=subprocess.STDOUT, start_new_session=True, close_fds=True)
    start = proc_start(child.pid)
    if start is None:
        raise LabError(f"{what} exited at once; see {log}")
    return Proc(child.pid, start, what)


def signal_proc(p: Proc | None, sig: int) -> None:
    if alive(p):
        assert p is not None
        with contextlib.suppress(ProcessLookupError):
            os.kill(p.pid, sig)


def wait_until(pred: Any, timeout: float, what: str, poll: float = POLL_S) -> None:
    """Poll pred() until true; bounded in time and in count; LabError on timeout."""
    deadline = time.monotonic() + timeout
    for _ in range(int(timeout / poll) + 2):
        if pred():
            return
        if time.monotonic() > deadline:
            break
        time.sleep(poll)
    raise LabError(f"timed out after {timeout:.0f}s waiting for {what}")


def terminate(p: Proc | None, timeout: float = 10) -> None:
    """SIGTERM, wait, then SIGKILL: by pid, checked against the start time."""
    if not alive(p):
        return
    signal_proc(p, signal.SIGTERM)
    with contextlib.suppress(LabError):
        wait_until(lambda: not alive(p), timeout, f"{p.what if p else ''} to exit")
        return
    signal_proc(p, signal.SIGKILL)
    wait_until(lambda: not alive(p), 10, "killed process to go")


def mounted(path: Path) -> bool:
    target = str(path)
    with open("/proc/self/mountinfo") as f:
        return any(line.split()[4] == target for line in f)


def port_open(address: str, port: int, timeout: float = 1.0) -> bool:
    with contextlib.suppress(OSError), socket.create_connection((address, port), timeout):
        return True
    return False


def ssh_banner(address: str, port: int = 22, timeout: float = 1.0) -> bool:
    with contextlib.suppress(OSError), socket.create_connection((address, port), timeout) as s:
        s.settimeout(timeout)
        return s.recv(64).startswith(b"SSH-")
    return False


def apt_mirror_hosts() -> list[str]:
    """Host names of the http mirrors this machine's apt uses (sources.list and .sources)."""
    files = [Path("/etc/apt/sources.list"), *sorted(Path("/etc/apt/sources.list.d").glob("*"))]
    hosts: set[str] = set()
    for f in files:
        if f.suffix not in (".list", ".sources") or not f.is_file():
            continue
        for line in f.read_text(errors="replace").splitlines():
            line = line.split("#", 1)[0]
            for word in re.findall(r"https?://[^\s\]]+", line):
                if host := urlsplit(word).hostname:
                    hosts.add(host.lower())
    return sorted(hosts) or ["deb.debian.org"]


def base_tarball() -> Path | None:
    """The newest cached base (prepare.sh names them base-<suite>-v<N>.tar.zst)."""
    def version(p: Path) -> int:
        m = re.search(r"-v(\d+)\.tar\.zst$", p.name)
        return int(m.group(1)) if m else -1
    found = sorted(CACHE_DIR.glob("base-*.tar.zst"), key=version)
    return found[-1] if found else None


def unavailable_reason() -> str | None:
    """One line saying why the lab cannot run here, or None when it can."""
    if os.geteuid() != 0:
        return "lab needs root"
    missing = [t for t in REQUIRED_TOOLS if shutil.which(t) is None]
    if missing:
        return f"lab needs {', '.join(missing)}: run tests/lab/prepare.sh as root"
    if base_tarball() is None:
        return f"no lab base in {CACHE_DIR}: run tests/lab/prepare.sh as root"
    return None


@contextlib.contextmanager
def file_lock(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def ensure_base(tarball: Path) -> Path:
    """Unpack the cached base tarball once (beside it) and return the root directory.

    The directory is named after the tarball and its mtime, so a rebuilt tarball never
    replaces a root that running hosts use as their lower layer (prepare.sh prunes old ones)."""
    dest = tarball.parent / f"{tarball.name.removesuffix('.tar.zst')}.{tarball.stat().st_mtime_ns}"
    stamp = dest.with_name(dest.name + ".unpacked")
    with file_lock(tarball.parent / ".unpack.lock"):
        if stamp.exists():
            return dest
        if dest.exists():  # a half-done unpack
            shutil.rmtree(dest)
        dest.mkdir(parents=True)
        run(["tar", "--zstd", "--xattrs", "--xattrs-include=*", "--acls", "--numeric-owner",
             "-xpf", str(tarball), "-C", str(dest)], timeout=600)
        stamp.touch()
    return dest


def cgroup_dirs(rel: str) -> list[Path]:
    return [CGROUP_FS / h / rel for h in CGROUP_HIERARCHIES if (CGROUP_FS / h).is_dir()]


def cgroup_pids(rel: str) -> list[int]:
    pids: set[int] = set()
    for top in cgroup_dirs(rel):
        for dirpath, _dirs, _files in os.walk(top):  # walk ignores dirs that vanish meanwhile
            with contextlib.suppress(OSError):
                pids.update(int(x) for x in Path(dirpath, "cgroup.procs").read_text().split())
    return sorted(pids)


def remove_cgroups(rel: str, timeout: float = 180.0) -> None:
    """Kill what is left in the cgroups (by pid), then remove them bottom-up. A killed process
    inside a system call that ends only with its I/O (writing back its overlay, a sync() on a
    loaded machine) leaves only when the call returns: waited for up to `timeout`, then
    LabError names the survivors."""
    deadline = time.monotonic() + timeout
    pids = cgroup_pids(rel)
    for _ in range(int(timeout / POLL_S) + 1):
        if not pids or time.monotonic() > deadline:
            break
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(POLL_S)
        pids = cgroup_pids(rel)
    if pids:
        raise LabError(f"cgroup {rel}: still running after SIGKILL: {_describe(pids)}")
    for _ in range(50):  # a cgroup whose last process just died can be busy for a moment
        left = [top for top in cgroup_dirs(rel) if top.is_dir()]
        if not left:
            return
        for top in left:
            for dirpath, _dirs, _files in os.walk(top, topdown=False):  # children first
                with contextlib.suppress(OSError):
                    os.rmdir(dirpath)
        time.sleep(POLL_S if any(top.is_dir() for top in left) else 0)


def _describe(pids: Sequence[int]) -> str:
    """`pid (comm) state` of each, for an error message."""
    out = []
    for pid in pids[:8]:
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
            comm, state = stat[stat.index("(") : stat.rindex(")") + 1], stat[stat.rindex(")") + 2]
            out.append(f"{pid} {comm} {state}")
        except (OSError, ValueError, IndexError):
            out.append(f"{pid} (gone)")
    return ", ".join(out)


def nspawn_locks(h: LabHost) -> list[Path]:
    """The lock files systemd-nspawn takes on a host's root directory: `.#root.lck` beside it and
    /run/systemd/nspawn/locks/inode-DEV:INO of the (mounted) directory it booted."""
    locks = [Path(h.dir, ".#root.lck")]
    with contextlib.suppress(OSError):
        st = os.stat(h.root)
        locks.append(Path(f"/run/systemd/nspawn/locks/inode-{st.st_dev}:{st.st_ino}"))
    return locks


def ip_families() -> list[str]:
    return ["-4", "-6"] if Path("/proc/net/if_inet6").exists() else ["-4"]


def raise_inotify_limits() -> None:
    """Every container's systemd draws on one per-user inotify pool (docs/lab.md): raise it."""
    for key, want in INOTIFY_LIMITS.items():
        f = Path("/proc/sys/fs/inotify", key)
        if int(f.read_text()) < want:
            f.write_text(str(want))


def make_cgroup(d: Path) -> None:
    """mkdir -p, retried: another lab's stop may remove the shared top dir in between."""
    for _ in range(5):
        with contextlib.suppress(FileNotFoundError):
            d.mkdir(parents=True, exist_ok=True)
            return
    d.mkdir(parents=True, exist_ok=True)


def write_file(path: Path, text: str, mode: int = 0o644, owner: tuple[int, int] = (0, 0)) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
    path.write_text(text)
    os.chown(path, *owner)
    os.chmod(path, mode)


def passwd_ids(root: Path, user: str) -> tuple[int, int, str]:
    for line in (root / "etc/passwd").read_text().splitlines():
        f = line.split(":")
        if f[0] == user:
            return int(f[2]), int(f[3]), f[5]
    raise LabError(f"user {user} missing from the base (rebuild it with prepare.sh)")


# ---------------------------------------------------------------- the lab


class Lab:
    """A set of lab hosts with their bridge, proxy and files, all kept under workdir."""

    def __init__(self, workdir: str | os.PathLike[str], base: Path | None = None) -> None:
        self.workdir = Path(workdir).resolve()
        self.base_tar = base
        self.number: int | None = None
        self.hosts: list[LabHost] = []
        self.proxy: Proc | None = None
        self.servers: list[Proc] = []
        self._load()

    # ---- paths and names
    @property
    def state_file(self) -> Path:
        return self.workdir / "lab.json"

    @property
    def key_file(self) -> Path:
        return self.workdir / "id_ed25519"

    @property
    def known_hosts(self) -> Path:
        return self.workdir / "known_hosts"

    @property
    def ssh_config(self) -> Path:
        return self.workdir / "ssh_config"

    @property
    def inventory(self) -> Path:
        return self.workdir / "inventory.ini"

    @property
    def bridge(self) -> str:
        return f"{BRIDGE_PREFIX}{self._num()}"

    @property
    def gateway(self) -> str:
        return f"{NET_PREFIX}.{self._num()}.1"

    @property
    def proxy_url(self) -> str:
        return f"http://{self.gateway}:{PROXY_PORT}"

    @property
    def proxy_log(self) -> Path:
        return self.workdir / "proxy.log"

    @property
    def cgroup(self) -> str:
        return f"{CGROUP_TOP}/lab{self._num()}"

    def _num(self) -> int:
        if self.number is None:
            raise LabError("lab not started")
        return self.number

    def host_cgroup(self, h: LabHost) -> str:
        return f"{self.cgroup}/{h.name}"

    # ---- state
    def _load(self) -> None:
        if not self.state_file.exists():
            return
        st = json.loads(self.state_file.read_text())
        self.number = st["number"]
        self.proxy = Proc(**st["proxy"]) if st.get("proxy") else None
        self.servers = [Proc(**s) for s in st.get("servers", [])]
        self.hosts = []
        for h in st.get("hosts", []):
            sup = h.pop("supervisor", None)
            self.hosts.append(LabHost(**h, supervisor=Proc(**sup) if sup else None))

    def _save(self) -> None:
        st = {"number": self.number, "proxy": asdict(self.proxy) if self.proxy else None,
              "servers": [asdict(s) for s in self.servers],
              "hosts": [asdict(h) for h in self.hosts]}
        tmp = self.state_file.with_suffix(".tmp")
        tmp.write_text(json.dumps(st, indent=1))
        tmp.replace(self.state_file)

    # ---- start
    def start(self, n: int) -> list[LabHost]:
        """Start n fresh hosts in parallel and wait until each answers SSH."""
        if self.hosts or self.number is not None:
            raise LabError(f"a lab is already running in {self.workdir}; stop it first")
        if not 1 <= n <= MAX_HOSTS:
            raise LabError(f"host count must be 1..{MAX_HOSTS}")
        if reason := unavailable_reason():
            raise LabError(reason)
        self.workdir.mkdir(parents=True, exist_ok=True)
        raise_inotify_limits()
        tar = self.base_tar or base_tarball()
        assert tar is not None
        base = ensure_base(tar)
        try:
            self._claim_number()
            self._client_key()
            self.hosts = [self._new_host(i) for i in range(1, n + 1)]
            self._save()
            self._bridge_up()
            self._proxy_up()
            with ThreadPoolExecutor(max_workers=min(n, 8)) as pool:
                list(pool.map(self._identity, self.hosts))
                self._write_client_files()
                list(pool.map(self._netns_up, self.hosts))
                list(pool.map(self._boot, self.hosts, [base] * n))
                self._save()
                list(pool.map(self._wait_ready, self.hosts))
        except BaseException:
            self.stop()
            raise
        return self.hosts

    def _claim_number(self) -> None:
        with file_lock(INDEX_LOCK):
            netns = set(os.listdir("/run/netns")) if os.path.isdir("/run/netns") else set()
            links = set(os.listdir("/sys/class/net"))
            for k in range(MAX_LABS):
                prefix = f"rpv{k}-"
                taken = any(x.startswith(prefix) for x in netns | links)
                if taken or f"{BRIDGE_PREFIX}{k}" in links:
                    continue
                if any(p.exists() for p in cgroup_dirs(f"{CGROUP_TOP}/lab{k}")):
                    continue
                self.number = k
                self._save()
                run(["ip", "link", "add", self.bridge, "type", "bridge"])  # claims k
                return
        raise LabError(f"all {MAX_LABS} lab numbers are in use (stale labs? see README)")

    def _client_key(self) -> None:
        if not self.key_file.exists():
            run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "rocmprov-lab",
                 "-f", str(self.key_file)])

    def _new_host(self, i: int) -> LabHost:
        name = f"rpv{self._num()}-h{i:02d}"
        d = self.workdir / "hosts" / name
        d.mkdir(parents=True, exist_ok=True)
        address = f"{NET_PREFIX}.{self._num()}.{FIRST_HOST_OCTET + i - 1}"
        return LabHost(name=name, index=i, address=address,
                       netns=name, veth=name, dir=str(d), key_file=str(self.key_file),
                       known_hosts=str(self.known_hosts), ssh_config=str(self.ssh_config))

    def _bridge_up(self) -> None:
        br = self.bridge
        no_v6 = Path(f"/proc/sys/net/ipv6/conf/{br}/disable_ipv6")
        if no_v6.exists():
            no_v6.write_text("1")
        run(["ip", "addr", "add", f"{self.gateway}/24", "dev", br])
        run(["ip", "link", "set", br, "up"])
        for fam in ip_families():
            run(["ip", fam, "rule", "add", "pref", str(RULE_PREF), "iif", br, "prohibit"])

    def _proxy_up(self) -> None:
        argv = [sys.executable, str(HERE / "proxy.py"), "--listen", self.gateway,
                "--port", str(PROXY_PORT)]
        for host in apt_mirror_hosts():
            argv += ["--allow", host]
        self.proxy = spawn(argv, self.proxy_log, "proxy")
        self._save()
        wait_until(lambda: port_open(self.gateway, PROXY_PORT, 0.5) or not alive(self.proxy),
                   20, "the lab proxy")
        if not alive(self.proxy):
            raise LabError(f"lab proxy failed; see {self.proxy_log}")

    def _identity(self, h: LabHost) -> None:
        """Per-host SSH host keys and machine-id, made once and kept across resets."""
        ident = Path(h.dir, "identity")
        ident.mkdir(exist_ok=True)
        for kind in ("ed25519", "ecdsa"):
            key = ident / f"ssh_host_{kind}_key"
            if not key.exists():
                run(["ssh-keygen", "-q", "-t", kind, "-N", "", "-C", f"root@{h.name}",
                     "-f", str(key)])
        mid = ident / "machine-id"
        if not mid.exists():
            mid.write_text(secrets.token_hex(16) + "\n")

    def _write_client_files(self) -> None:
        lines = []
        for h in self.hosts:
            for kind in ("ed25519", "ecdsa"):
                pub = Path(h.dir, "identity", f"ssh_host_{kind}_key.pub").read_text().split()
                lines.append(f"{h.name},{h.address} {pub[0]} {pub[1]}")
        self.known_hosts.write_text("\n".join(lines) + "\n")
        cfg = [f"# rocmprov lab {self._num()}: ssh -F {self.ssh_config} <host>", ""]
        for h in self.hosts:
            cfg += [f"Host {h.name} {h.address}", f"  HostName {h.address}", "  User root",
                    f"  IdentityFile {self.key_file}", "  IdentitiesOnly yes",
                    f"  UserKnownHostsFile {self.known_hosts}", "  GlobalKnownHostsFile /dev/null",
                    "  StrictHostKeyChecking yes", "  ConnectTimeout 10", "  LogLevel ERROR", ""]
        self.ssh_config.write_text("\n".join(cfg))
        ssh_args = (f"-F {self.ssh_config} -o UserKnownHostsFile={self.known_hosts}"
                    " -o StrictHostKeyChecking=yes")
        inv = ["[lab]"] + [f"{h.name} ansible_host={h.address}" for h in self.hosts] + [
            "", "[lab:vars]", "ansible_user=root",
            f"ansible_ssh_private_key_file={self.key_file}",
            f"ansible_ssh_common_args='{ssh_args}'",
            "ansible_python_interpreter=/usr/bin/python3", ""]
        self.inventory.write_text("\n".join(inv))

    def _netns_up(self, h: LabHost) -> None:
        run(["ip", "netns", "add", h.netns])
        run(["ip", "link", "add", h.veth, "type", "veth", "peer", "name", "eth0",
             "netns", h.netns])
        run(["ip", "link", "set", h.veth, "master", self.bridge, "up"])
        ns = ["ip", "-n", h.netns]
        run([*ns, "link", "set", "lo", "up"])
        run([*ns, "addr", "add", f"{h.address}/24", "dev", "eth0"])
        run([*ns, "link", "set", "eth0", "up"])
        run([*ns, "route", "add", "default", "via", self.gateway])

    def _mount_root(self, h: LabHost, base: Path) -> None:
        for sub in ("upper", "work", "root"):
            Path(h.dir, sub).mkdir(exist_ok=True)
        if not mounted(h.root):
            opts = f"lowerdir={base},upperdir={h.dir}/upper,workdir={h.dir}/work"
            run(["mount", "-t", "overlay", "overlay", "-o", opts, str(h.root)])

    def _personalize(self, h: LabHost) -> None:
        """Write the host's identity, keys, sudo rule and apt proxy into its root."""
        r, ident = h.root, Path(h.dir, "identity")
        write_file(r / "etc/machine-id", (ident / "machine-id").read_text(), 0o444)
        write_file(r / "etc/hostname", h.name + "\n")
        others = "".join(f"{o.address}\t{o.name}\n" for o in self.hosts if o is not h)
        write_file(r / "etc/hosts", f"127.0.0.1\tlocalhost\n{h.address}\t{h.name}\n{others}"
                   "::1\tlocalhost ip6-localhost ip6-loopback\n")
        for f in ident.glob("ssh_host_*"):
            mode = 0o644 if f.suffix == ".pub" else 0o600
            write_file(r / "etc/ssh" / f.name, f.read_text(), mode)
        pub = Path(str(self.key_file) + ".pub").read_text()
        write_file(r / "root/.ssh/authorized_keys", pub, 0o600)
        os.chmod(r / "root/.ssh", 0o700)
        uid, gid, home = passwd_ids(r, SUDO_USER)
        ssh_dir = r / home.lstrip("/") / ".ssh"
        write_file(ssh_dir / "authorized_keys", pub, 0o600, (uid, gid))
        os.chown(ssh_dir, uid, gid)
        os.chmod(ssh_dir, 0o700)
        write_file(r / f"etc/sudoers.d/{SUDO_USER}", f"{SUDO_USER} ALL=(ALL:ALL) NOPASSWD: ALL\n",
                   0o440)
        write_file(r / "etc/apt/apt.conf.d/01rocmprov-lab-proxy",
                   f'Acquire::http::Proxy "{self.proxy_url}";\n'
                   f'Acquire::http::Proxy::{self.gateway} "DIRECT";\n')

    def _boot(self, h: LabHost, base: Path | None = None) -> None:
        self._mount_root(h, base or self._base_root())
        self._personalize(h)
        for d in cgroup_dirs(self.host_cgroup(h)):
            make_cgroup(d)
        argv = [sys.executable, str(HERE / "supervise.py"), "--name", h.name,
                "--netns", h.netns, "--root", str(h.root)]
        for d in cgroup_dirs(self.host_cgroup(h)):
            argv += ["--cgroup", str(d)]
        h.supervisor = spawn(argv, h.console_log, f"supervisor of {h.name}")

    def _base_root(self) -> Path:
        tar = self.base_tar or base_tarball()
        if tar is None:
            raise LabError("no lab base; run tests/lab/prepare.sh")
        return ensure_base(tar)

    def _wait_ready(self, h: LabHost, timeout: float = READY_TIMEOUT_S) -> None:
        """Wait for sshd's banner, then for systemd to finish booting (running/degraded)."""
        def up() -> bool:
            if not alive(h.supervisor):
                raise LabError(f"{h.name} stopped while booting; see {h.console_log}")
            return ssh_banner(h.address)
        wait_until(up, timeout, f"SSH on {h.name}")
        cp = self.exec(h, ["systemctl", "is-system-running", "--wait"], check=False,
                       timeout=timeout)
        if cp.stdout.strip() not in ("running", "degraded"):
            raise LabError(f"{h.name}: systemd says {cp.stdout.strip()!r} {cp.stderr.strip()}")

    # ---- running things inside a host without SSH
    def leader_pid(self, h: LabHost) -> int:
        """This machine's pid of the host's PID 1 (systemd)."""
        for pid in cgroup_pids(self.host_cgroup(h)):
            with contextlib.suppress(OSError):
                for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                    if line.startswith("NSpid:"):
                        ids = line.split()[1:]
                        if len(ids) > 1 and ids[-1] == "1":
                            return pid
        raise LabError(f"{h.name} is not running")

    def exec(self, h: LabHost, argv: Sequence[str], check: bool = True,
             timeout: float = 120, input: str | None = None
             ) -> subprocess.CompletedProcess[str]:
        """Run argv as root inside the host (all its namespaces), not through SSH."""
        pid = str(self.leader_pid(h))
        return run(["nsenter", "-t", pid, "-m", "-u", "-i", "-n", "-p", "-r", "-w", "--",
                    "/usr/bin/env", "-i", f"PATH={SYSTEM_PATH}", "HOME=/root", "LANG=C.UTF-8",
                    *argv], check=check, timeout=timeout, input=input)

    # ---- stop, reset, power
    def _stop_container(self, h: LabHost, clean: bool = True) -> None:
        """Power the host off, unmount its root, drop its cgroups. `clean`: a poweroff the host
        runs itself (for a disk that is kept); else every process is killed at once, for a disk
        thrown away: a clean poweroff ends in systemd-shutdown's sync(), which waits for every
        file system of this machine, minutes on a loaded CI machine (seen in CI, stop 43)."""
        if alive(h.supervisor) and clean:
            signal_proc(h.supervisor, signal.SIGTERM)
            with contextlib.suppress(LabError):
                wait_until(lambda: not alive(h.supervisor), STOP_TIMEOUT_S, f"{h.name} to stop")
        if alive(h.supervisor):
            signal_proc(h.supervisor, signal.SIGKILL)
        remove_cgroups(self.host_cgroup(h))
        wait_until(lambda: not alive(h.supervisor), 10, f"supervisor of {h.name} to go")
        h.supervisor = None
        locks = nspawn_locks(h)  # nspawn removes them on a clean exit, not when killed
        for _ in range(25):
            if not mounted(h.root):
                break
            run(["umount", str(h.root)], check=False)
            time.sleep(POLL_S if mounted(h.root) else 0)
        if mounted(h.root):
            raise LabError(f"cannot unmount {h.root}")
        for leftover in (f"/run/systemd/nspawn/propagate/{h.name}",
                         f"/run/systemd/nspawn/unix-export/{h.name}"):
            shutil.rmtree(leftover, ignore_errors=True)
        for lock in locks:
            lock.unlink(missing_ok=True)

    def stop_host(self, h: LabHost) -> None:
        """Power a host off, keeping its disk (start_host boots it again as it was)."""
        self._stop_container(h)
        self._save()

    def start_host(self, h: LabHost, timeout: float = READY_TIMEOUT_S) -> None:
        """Boot a host stopped with stop_host (its disk kept) and wait for SSH."""
        self._boot(h)
        self._save()
        self._wait_ready(h, timeout)

    def reset(self, h: LabHost) -> LabHost:
        """Stop the host, throw its changes away, boot it pristine (same address and keys)."""
        self._stop_container(h, clean=False)
        for sub in ("upper", "work"):
            shutil.rmtree(Path(h.dir, sub), ignore_errors=True)
        self.start_host(h)
        return h

    def stop(self) -> None:
        """Stop everything this lab made: hosts, netns, mounts, cgroups, servers, bridge."""
        if self.number is None:
            return
        errors: list[str] = []
        with ThreadPoolExecutor(max_workers=8) as pool:
            for h, err in zip(self.hosts, pool.map(self._stop_one, self.hosts), strict=True):
                if err:
                    errors.append(f"{h.name}: {err}")
        for p in [*self.servers, self.proxy]:
            terminate(p)
        self.servers, self.proxy = [], None
        self._bridge_down()
        try:
            remove_cgroups(self.cgroup)
        except LabError as exc:
            errors.append(str(exc))
        for d in cgroup_dirs(CGROUP_TOP):  # shared by all labs: removed once empty
            with contextlib.suppress(OSError):
                d.rmdir()
        if not errors:
            self.hosts, self.number = [], None
            self.state_file.unlink(missing_ok=True)
        else:
            self._save()
            raise LabError("lab stop left things behind: " + "; ".join(errors))

    def _stop_one(self, h: LabHost) -> str | None:
        try:
            self._stop_container(h, clean=False)  # its disk goes with the lab
            if os.path.exists(f"/run/netns/{h.netns}"):
                run(["ip", "netns", "del", h.netns])
            if os.path.exists(f"/sys/class/net/{h.veth}"):  # goes with the netns, a bit later
                run(["ip", "link", "del", h.veth], check=False)
            wait_until(lambda: not os.path.exists(f"/sys/class/net/{h.veth}"), 10,
                       f"link {h.veth} to go")
            for sub in ("upper", "work", "root"):
                shutil.rmtree(Path(h.dir, sub), ignore_errors=True)
        except (LabError, OSError, subprocess.SubprocessError) as exc:
            return str(exc)
        return None

    def _bridge_down(self) -> None:
        br = self.bridge
        for fam in ip_families():
            for _ in range(5):  # also drops duplicates a crashed run may have left
                if run(["ip", fam, "rule", "del", "pref", str(RULE_PREF), "iif", br, "prohibit"],
                       check=False).returncode != 0:
                    break
        if os.path.exists(f"/sys/class/net/{br}"):
            run(["ip", "link", "del", br])

    # ---- what is left (for tests of stop)
    def leftovers(self, number: int, hosts: Sequence[LabHost], procs: Sequence[Proc]) -> list[str]:
        """Anything of lab `number` (its hosts and processes) that still exists on this machine."""
        left: list[str] = []
        netns = set(os.listdir("/run/netns")) if os.path.isdir("/run/netns") else set()
        prefix = f"rpv{number}-"
        left += [f"netns {n}" for n in netns if n.startswith(prefix)]
        left += [f"link {n}" for n in os.listdir("/sys/class/net")
                 if n.startswith(prefix) or n == f"{BRIDGE_PREFIX}{number}"]
        with open("/proc/self/mountinfo") as f:
            left += [f"mount {line.split()[4]}" for line in f
                     if str(self.workdir) in line or f"/netns/{prefix}" in line]
        left += [f"process {p.pid} ({p.what})" for p in procs if alive(p)]
        left += [f"cgroup {d}" for d in cgroup_dirs(f"{CGROUP_TOP}/lab{number}") if d.exists()]
        left += [f"dir {d}" for h in hosts for d in (f"/run/systemd/nspawn/propagate/{h.name}",)
                 if os.path.exists(d)]
        left += [f"lock {f}" for h in hosts for f in nspawn_locks(h) if f.exists()]
        rules = run(["ip", "rule", "list"], check=False).stdout
        left += [f"rule {r.strip()}" for r in rules.splitlines()
                 if f"iif {BRIDGE_PREFIX}{number} " in r + " "]
        return left

    def snapshot(self) -> tuple[int, list[LabHost], list[Proc]]:
        """What leftovers() needs, taken while the lab runs."""
        procs = [p for p in [self.proxy, *self.servers] if p]
        procs += [h.supervisor for h in self.hosts if h.supervisor]
        for h in self.hosts:
            for pid in cgroup_pids(self.host_cgroup(h)):
                if (start := proc_start(pid)) is not None:
                    procs.append(Proc(pid, start, f"{h.name} pid"))
        return self._num(), list(self.hosts), procs

    # ---- serving files to the hosts
    def serve_dir(self, path: str | os.PathLike[str], *, tls: bool = False) -> str:
        """Serve a directory over HTTP (or HTTPS with the lab's own CA, `tls`) on the bridge
        address; returns the URL hosts can use. Hosts trust that CA after trust_lab_ca(h)."""
        directory = Path(path).resolve()
        if not directory.is_dir():
            raise LabError(f"not a directory: {directory}")
        port = self._free_port()
        if tls:
            _ca, cert, key = self.tls_files()
            argv = [sys.executable, "-m", "tests.lab.tlsserve", "--bind", self.gateway,
                    "--port", str(port), "--directory", str(directory), "--cert", str(cert),
                    "--key", str(key)]  # fmt: skip
        else:
            argv = [sys.executable, "-m", "http.server", str(port), "--bind", self.gateway,
                    "--directory", str(directory)]  # fmt: skip
        p = spawn(argv, self.workdir / f"serve-{port}.log", f"file server {directory}",
                  cwd=HERE.parents[1])  # fmt: skip
        self.servers.append(p)
        self._save()
        wait_until(lambda: port_open(self.gateway, port, 0.5), 20, f"file server on {port}")
        return f"{'https' if tls else 'http'}://{self.gateway}:{port}"

    def tls_files(self) -> tuple[Path, Path, Path]:
        """The lab's CA certificate, and a server certificate and key for the bridge address
        signed by it (made once per lab with openssl; 0600 key)."""
        d = self.workdir / "tls"
        ca, cert, key = d / "ca.crt", d / "server.crt", d / "server.key"
        if cert.is_file():
            return ca, cert, key
        d.mkdir(mode=0o700, exist_ok=True)

        def ssl_(*args: str) -> None:
            run(["openssl", *args], timeout=60)

        ssl_("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj",
             "/CN=rocmprov lab CA", "-keyout", str(d / "ca.key"), "-out", str(ca))  # fmt: skip
        ssl_("req", "-newkey", "rsa:2048", "-nodes", "-subj", f"/CN={self.gateway}",
             "-keyout", str(key), "-out", str(d / "server.csr"))  # fmt: skip
        (d / "san.cnf").write_text(f"subjectAltName=IP:{self.gateway}\n")
        ssl_("x509", "-req", "-in", str(d / "server.csr"), "-CA", str(ca), "-CAkey",
             str(d / "ca.key"), "-CAcreateserial", "-days", "2", "-extfile", str(d / "san.cnf"),
             "-out", str(cert))  # fmt: skip
        return ca, cert, key

    def trust_lab_ca(self, h: LabHost) -> None:
        """Install the lab's CA in a host's system store, as an admin does for a site mirror."""
        ca, _cert, _key = self.tls_files()
        self.exec(h, ["mkdir", "-p", "/usr/local/share/ca-certificates"])
        self.exec(h, ["sh", "-c", "cat > /usr/local/share/ca-certificates/rocmprov-lab.crt"],
                  input=ca.read_text())  # fmt: skip
        self.exec(h, ["update-ca-certificates"], timeout=120)

    def _free_port(self) -> int:
        for port in SERVE_PORTS:
            with socket.socket() as s:
                try:
                    s.bind((self.gateway, port))
                except OSError:
                    continue
                return port
        raise LabError("no free port to serve on")

    # ---- faults
    def firewall(self, h: LabHost, action: str = "drop", port: int = 22) -> None:
        """Drop (timeouts) or reject (refused) TCP to a port of the host; unfirewall undoes it."""
        verdict = {"drop": "drop", "reject": "reject with tcp reset"}[action]
        self.unfirewall(h)
        rules = (f"table inet {NFT_TABLE} {{\n chain input {{\n"
                 "  type filter hook input priority 0; policy accept;\n"
                 f"  tcp dport {int(port)} {verdict}\n }}\n}}\n")
        run(["ip", "netns", "exec", h.netns, "nft", "-f", "-"], input=rules)

    def unfirewall(self, h: LabHost) -> None:
        run(["ip", "netns", "exec", h.netns, "nft", "delete", "table", "inet", NFT_TABLE],
            check=False)

    def kill_sshd(self, h: LabHost) -> None:
        """Stop sshd in the host (connections are refused); start_sshd brings it back."""
        self.exec(h, ["systemctl", "stop", "ssh.service"])

    def start_sshd(self, h: LabHost) -> None:
        self.exec(h, ["systemctl", "start", "ssh.service"])

    def break_sudo(self, h: LabHost) -> None:
        """Remove the sudo user's NOPASSWD rule: `sudo -n` then fails (password required)."""
        (h.root / f"etc/sudoers.d/{SUDO_USER}").unlink(missing_ok=True)

    def fix_sudo(self, h: LabHost) -> None:
        write_file(h.root / f"etc/sudoers.d/{SUDO_USER}",
                   f"{SUDO_USER} ALL=(ALL:ALL) NOPASSWD: ALL\n", 0o440)

    # ---- measuring and connecting
    def memory_bytes(self, h: LabHost, kind: str = "total_rss") -> int:
        """Memory of the host's processes from its memory cgroup's memory.stat (rss default)."""
        stat = CGROUP_FS / "memory" / self.host_cgroup(h) / "memory.stat"
        for line in stat.read_text().splitlines():
            key, value = line.split()
            if key == kind:
                return int(value)
        raise LabError(f"no {kind} in {stat}")

    def connect(self, h: LabHost, user: str | None = None, timeout: float = 10) -> Any:
        """A paramiko SSHClient logged in to h, host key checked against the lab known_hosts."""
        import paramiko

        client = paramiko.SSHClient()
        client.load_host_keys(str(self.known_hosts))
        client.set_missing_host_key_policy(paramiko.RejectPolicy())
        client.connect(h.address, port=h.port, username=user or h.user,
                       key_filename=str(self.key_file), timeout=timeout, banner_timeout=timeout,
                       auth_timeout=timeout, look_for_keys=False, allow_agent=False)
        return client
