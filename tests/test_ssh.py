"""SSHTransport against real OpenSSH servers on loopback (sshd needs root; no lab needed).

Each `LoopbackSshd` is a real /usr/sbin/sshd on 127.0.0.1 with its own host key, config and
authorized_keys, started by pid and stopped by pid. test_fleet.py reuses these fixtures.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import hmac
import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import paramiko
import pytest

from rocmprov.exitcodes import UsageError
from rocmprov.transport.base import FailureClass, HostUnreachable
from rocmprov.transport.ssh import KnownHosts, SSHOptions, SSHTransport
from tests.timebounds import HANG_GUARD, LONG, processes_naming, within

SSHD = Path("/usr/sbin/sshd")
# a real non-root account without sudo rights, one per pytest-xdist worker (made and removed
# by each worker's session)
NOSUDO_USER = "rocmprov-nosudo" + os.environ.get("PYTEST_XDIST_WORKER", "")

pytestmark = pytest.mark.skipif(
    not SSHD.exists() or os.geteuid() != 0 or shutil.which("ssh-keygen") is None,
    reason="needs root, /usr/sbin/sshd and ssh-keygen (apt-get install openssh-server)",
)


# --- real sshd on loopback --------------------------------------------------------------------


def keygen(path: Path) -> str:
    """A new ed25519 key at path; returns the public line 'ssh-ed25519 AAAA...'."""
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "", "-f", str(path)],
        check=True,
        timeout=30,
    )
    return " ".join(path.with_suffix(".pub").read_text().split()[:2])


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def descendants(pid: int) -> list[int]:
    """Processes below pid (from /proc), children first."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(entry))
    out, todo = [], list(children.get(pid, []))
    while todo:
        p = todo.pop(0)
        out.append(p)
        todo += children.get(p, [])
    return out


@dataclass
class LoopbackSshd:
    """One real sshd on 127.0.0.1:port (started by start(), stopped by pid in stop())."""

    dir: Path
    port: int
    host_key_pub: str
    proc: subprocess.Popen[bytes] | None = None
    log: Path = field(init=False)

    def __post_init__(self) -> None:
        self.log = self.dir / "sshd.log"

    @property
    def known_name(self) -> str:
        return f"[127.0.0.1]:{self.port}"

    def known_line(self, name: str | None = None) -> str:
        return f"{name or self.known_name} {self.host_key_pub}\n"

    def sessions(self) -> list[int]:
        """The per-connection sshd processes (and below) of this server."""
        return descendants(self.proc.pid) if self.proc else []

    def kill_sessions(self) -> int:
        pids = self.sessions()
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        return len(pids)

    def stop(self) -> None:
        if self.proc is None:
            return
        self.kill_sessions()
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=10)
        self.proc = None


def start_sshd(
    base: Path,
    authorized: dict[str, str],
    *,
    extra: str = "",
    name: str = "sshd",
    log_level: str = "VERBOSE",
) -> LoopbackSshd:
    """A real sshd on loopback; `authorized` maps user -> authorized_keys text."""
    d = base / name
    d.mkdir(mode=0o755)
    pub = keygen(d / "host_ed25519")
    keys = d / "authorized"
    keys.mkdir(mode=0o755)
    for user, text in authorized.items():
        (keys / user).write_text(text)
        (keys / user).chmod(0o644)
    Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)  # sshd's privilege separation dir
    for _attempt in range(5):  # a free port may be taken between probe and bind: retry
        port = free_port()
        (d / "sshd_config").write_text(
            f"ListenAddress 127.0.0.1:{port}\n"
            f"HostKey {d}/host_ed25519\n"
            f"PidFile {d}/sshd.pid\n"
            f"AuthorizedKeysFile {keys}/%u\n"
            "PermitRootLogin prohibit-password\n"
            "PubkeyAuthentication yes\nPasswordAuthentication no\n"
            "KbdInteractiveAuthentication no\nUsePAM no\nStrictModes no\n"
            "MaxStartups 200:30:400\nMaxSessions 100\nAllowTcpForwarding yes\n"
            f"LogLevel {log_level}\n" + extra
        )
        server = LoopbackSshd(d, port, pub)
        with server.log.open("ab") as log:
            server.proc = subprocess.Popen(
                [str(SSHD), "-D", "-e", "-f", str(d / "sshd_config")],
                stdout=log,
                stderr=log,
                stdin=subprocess.DEVNULL,
            )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and server.proc.poll() is None:
            if _banner(port):
                return server
            time.sleep(0.05)
        server.stop()
    raise RuntimeError(f"sshd did not start: {server.log.read_text()[-2000:]}")


def _banner(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
            return s.recv(8).startswith(b"SSH-")
    except OSError:
        return False


@dataclass
class Keys:
    dir: Path
    good: Path  # authorized for root and NOSUDO_USER
    good_pub: str
    other: Path  # authorized nowhere


@pytest.fixture(scope="session")
def ssh_base() -> Iterator[Path]:
    """A world-readable temp dir (sshd reads authorized_keys as the user)."""
    base = Path(tempfile.mkdtemp(prefix="rocmprov-ssh-"))
    base.chmod(0o755)
    yield base
    shutil.rmtree(base, ignore_errors=True)


@pytest.fixture(scope="session")
def keys(ssh_base: Path) -> Keys:
    d = ssh_base / "client"
    d.mkdir(mode=0o700)
    pub = keygen(d / "id_good")
    keygen(d / "id_other")
    return Keys(d, d / "id_good", pub, d / "id_other")


@pytest.fixture(scope="session")
def nosudo_user() -> Iterator[str]:
    """A real account with no sudo rights (made here if missing, removed after)."""
    made = False
    try:
        pwd.getpwnam(NOSUDO_USER)
    except KeyError:
        if shutil.which("useradd") is None:
            pytest.skip("useradd missing")
        subprocess.run(
            ["useradd", "-M", "-d", "/nonexistent", "-s", "/bin/sh", NOSUDO_USER],
            check=True,
            timeout=30,
        )
        made = True
    # '*': no password, but not locked (sshd without PAM refuses locked accounts)
    subprocess.run(["usermod", "-p", "*", NOSUDO_USER], check=True, timeout=30)
    yield NOSUDO_USER
    if made:
        subprocess.run(["userdel", NOSUDO_USER], check=False, timeout=30)


@pytest.fixture(scope="session")
def sshd(ssh_base: Path, keys: Keys) -> Iterator[LoopbackSshd]:
    authorized = {"root": keys.good_pub + "\n", NOSUDO_USER: keys.good_pub + "\n"}
    server = start_sshd(ssh_base, authorized, name="main")
    yield server
    server.stop()


@pytest.fixture
def known(tmp_path: Path, sshd: LoopbackSshd) -> Path:
    """A known_hosts file that knows the main sshd."""
    path = tmp_path / "known_hosts"
    path.write_text(sshd.known_line())
    return path


def options(
    known_hosts: Path,
    *,
    accept_new: bool = False,
    ssh_config: Path | None = None,
    timeout: float = 5.0,
) -> SSHOptions:
    return SSHOptions(
        known_hosts=KnownHosts(known_hosts, system=None),
        ssh_config=(
            paramiko.SSHConfig.from_path(str(ssh_config)) if ssh_config else paramiko.SSHConfig()
        ),
        accept_new=accept_new,
        connect_timeout=timeout,
        allow_agent=False,
        look_for_keys=False,
    )


def transport(
    server: LoopbackSshd,
    keys: Keys,
    known_hosts: Path,
    *,
    user: str = "root",
    key: Path | None = None,
    accept_new: bool = False,
    become: bool = False,
) -> SSHTransport:
    return SSHTransport(
        "lo",
        options=options(known_hosts, accept_new=accept_new),
        address="127.0.0.1",
        port=server.port,
        user=user,
        key_file=str(key or keys.good),
        become=become,
    )


def failure_of(t: SSHTransport, command: str = "true", **kw: object) -> HostUnreachable:
    with pytest.raises(HostUnreachable) as info:
        try:
            t.run(command, timeout=10, **kw)  # type: ignore[arg-type]
        finally:
            t.close()
    assert "\n" not in info.value.message
    return info.value


# --- commands ---------------------------------------------------------------------------------


def test_run_gives_rc_stdout_stderr_and_keeps_quotes(
    sshd: LoopbackSshd, keys: Keys, known: Path
) -> None:
    with transport(sshd, keys, known) as t:
        res = t.run("printf '%s\\n' \"it's $((1+2))\"; echo oops >&2; exit 3", timeout=10)
        assert (res.rc, res.stdout, res.stderr) == (3, "it's 3\n", "oops\n")
        # the same connection serves many commands; stdin is /dev/null, not the script
        again = t.run("cat; echo done", timeout=10)
        assert (again.rc, again.stdout) == (0, "done\n")


def test_connection_has_tcp_nodelay(sshd: LoopbackSshd, keys: Keys, known: Path) -> None:
    with transport(sshd, keys, known) as t:
        t.connect()
        sock = t._transport.sock  # type: ignore[union-attr]
        assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0


def test_command_timeout_gives_124_and_kills_it(
    sshd: LoopbackSshd, keys: Keys, known: Path, tmp_path: Path
) -> None:
    """The configured 1 s timeout fires on the host: 124, after at least 1 s and long before
    the command's LONG seconds (rocmprov's own give-up, had the host's not fired, is at 16 s);
    and the command is gone from the host, not merely abandoned."""
    marker = tmp_path / "still-running"
    with transport(sshd, keys, known) as t:
        start = time.monotonic()
        res = t.run(f"sleep {LONG:g}; touch {marker}", timeout=1)
        took = time.monotonic() - start
        assert res.rc == 124
        assert "timed out after 1s" in res.stderr
        assert 1.0 <= took < 1 + 10, f"{took:.1f} s"
    assert within(lambda: not processes_naming(str(marker))), "the command still runs"


def test_output_past_the_bound_fails_the_host_without_reading_the_rest(
    sshd: LoopbackSshd, keys: Keys, known: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """review r07: a host that answers with 600 MiB grew the controller to 1.2 GB. The bytes
    taken from the channel are counted: the bound plus what arrived while the last reads ran
    (a few of paramiko's 2 MiB windows), not the 200 MB the host sends."""
    from rocmprov.transport.ssh import session

    monkeypatch.setattr(session, "MAX_OUTPUT", 1 << 20)
    with transport(sshd, keys, known) as t:
        ok = t.run("head -c 900000 /dev/zero; head -c 100000 /dev/zero >&2", timeout=20)
        assert ok.rc == 0 and len(ok.stdout) + len(ok.stderr) == 1_000_000
    taken = [0]
    for name in ("recv", "recv_stderr"):
        monkeypatch.setattr(
            paramiko.Channel, name, _counting(getattr(paramiko.Channel, name), taken)
        )
    exc = failure_of(transport(sshd, keys, known), "head -c 200000000 /dev/zero")
    assert exc.failure is FailureClass.ERROR and "more than 1 MiB of output" in exc.message
    assert taken[0] < 16 << 20, f"{taken[0] >> 20} MiB read: not refused at the bound"


def _counting(recv: Callable[..., bytes], taken: list[int]) -> Callable[..., bytes]:
    def counted(chan: paramiko.Channel, *args: object) -> bytes:
        data = recv(chan, *args)
        taken[0] += len(data)
        return data

    return counted


# --- host keys --------------------------------------------------------------------------------


def test_unknown_host_refused_and_nothing_written(
    sshd: LoopbackSshd, keys: Keys, tmp_path: Path
) -> None:
    kh = tmp_path / "known_hosts"
    kh.write_text("# nothing known\n")
    err = failure_of(transport(sshd, keys, kh))
    assert err.failure is FailureClass.HOSTKEY_UNKNOWN
    assert sshd.known_name in err.message and "SHA256:" in err.message
    assert kh.read_text() == "# nothing known\n"
    missing = tmp_path / "absent" / "known_hosts"
    assert failure_of(transport(sshd, keys, missing)).failure is FailureClass.HOSTKEY_UNKNOWN
    assert not missing.exists()


def test_accept_new_records_the_key_then_it_is_known(
    sshd: LoopbackSshd, keys: Keys, tmp_path: Path
) -> None:
    kh = tmp_path / "ssh" / "known_hosts"
    with transport(sshd, keys, kh, accept_new=True) as t:
        assert t.run("echo in", timeout=10).stdout == "in\n"
    assert kh.read_text() == sshd.known_line()
    assert kh.stat().st_mode & 0o777 == 0o600
    with transport(sshd, keys, kh) as t:  # no accept_new: now known
        assert t.run("echo again", timeout=10).stdout == "again\n"
    assert kh.read_text() == sshd.known_line()  # not written twice


def test_changed_key_refused_even_with_accept_new(
    sshd: LoopbackSshd, keys: Keys, tmp_path: Path
) -> None:
    impostor = keygen(tmp_path / "impostor")
    kh = tmp_path / "known_hosts"
    text = f"{sshd.known_name} {impostor}\n"
    kh.write_text(text)
    for accept_new in (False, True):
        err = failure_of(transport(sshd, keys, kh, accept_new=accept_new))
        assert err.failure is FailureClass.HOSTKEY_CHANGED
        assert f"ssh-keygen -R '{sshd.known_name}' -f {kh}" in err.message
        assert (err.known_name, err.known_hosts) == (sshd.known_name, str(kh))
    assert kh.read_text() == text


def test_changed_key_through_the_cli_names_the_known_hosts_entry_not_the_alias(
    sshd: LoopbackSshd, keys: Keys, tmp_path: Path
) -> None:
    """The ssh.hostkey finding's fix removes `[address]:port`, the entry that was refused."""
    import json

    from tests.helpers import rocmprov

    kh = tmp_path / "known_hosts"
    kh.write_text(f"{sshd.known_name} {keygen(tmp_path / 'impostor')}\n")
    inv = tmp_path / "hosts.yml"
    inv.write_text(
        "all:\n  hosts:\n    gpu-alias:\n      ansible_host: 127.0.0.1\n"
        f"      ansible_port: {sshd.port}\n      ansible_user: root\n"
        f"      ansible_ssh_private_key_file: {keys.good}\n"
    )
    run = rocmprov(
        "audit", str(inv), "--format", "json", "--ssh-config", "/dev/null", "--known-hosts", str(kh)
    )
    assert run.rc == 2, run  # CRITICAL: the changed key is a security finding
    (host,) = json.loads(run.stdout)["hosts"]
    assert host["status"] != "ok" and "CHANGED" in host["message"]
    (finding,) = [f for f in host["findings"] if f["check"] == "ssh.hostkey"]
    assert finding["fix"].endswith(f"ssh-keygen -R '[127.0.0.1]:{sshd.port}' -f {kh}")
    assert "gpu-alias" not in finding["fix"]


def test_revoked_key_refused(sshd: LoopbackSshd, keys: Keys, tmp_path: Path) -> None:
    kh = tmp_path / "known_hosts"
    kh.write_text(sshd.known_line() + f"@revoked * {sshd.host_key_pub}\n")
    err = failure_of(transport(sshd, keys, kh, accept_new=True))
    assert err.failure is FailureClass.HOSTKEY_CHANGED
    assert "revoked" in err.message


def test_hashed_and_wildcard_known_hosts_entries(
    sshd: LoopbackSshd, keys: Keys, tmp_path: Path
) -> None:
    salt = os.urandom(20)
    digest = hmac.new(salt, sshd.known_name.encode(), hashlib.sha1).digest()
    hashed = f"|1|{base64.b64encode(salt).decode()}|{base64.b64encode(digest).decode()}"
    for name in (hashed, "[127.0.0.*]:*", f"!nothing,[127.0.0.1]:{sshd.port}"):
        kh = tmp_path / "known_hosts"
        kh.write_text(sshd.known_line(name))
        with transport(sshd, keys, kh) as t:
            assert t.run("echo ok", timeout=10).stdout == "ok\n", name
    kh.write_text(sshd.known_line(f"[127.0.0.*]:*,![127.0.0.1]:{sshd.port}"))
    assert failure_of(transport(sshd, keys, kh)).failure is FailureClass.HOSTKEY_UNKNOWN


# --- connection failures ----------------------------------------------------------------------


def test_auth_denied_with_a_key_the_host_does_not_know(
    sshd: LoopbackSshd, keys: Keys, known: Path
) -> None:
    err = failure_of(transport(sshd, keys, known, key=keys.other))
    assert err.failure is FailureClass.AUTH_DENIED
    assert "root@127.0.0.1" in err.message and str(keys.other) in err.message


def test_auth_denied_when_no_key_at_all(
    sshd: LoopbackSshd, keys: Keys, known: Path, tmp_path: Path
) -> None:
    err = failure_of(transport(sshd, keys, known, key=tmp_path / "no-such-key"))
    assert err.failure is FailureClass.AUTH_DENIED
    assert "no-such-key" in err.message


def test_refused_port(keys: Keys, tmp_path: Path) -> None:
    port = free_port()  # nothing listens there
    server = LoopbackSshd(tmp_path, port, "")
    err = failure_of(transport(server, keys, tmp_path / "kh"))
    assert err.failure is FailureClass.REFUSED
    assert f"127.0.0.1:{port}" in err.message


def test_unresolvable_name_is_dns(keys: Keys, tmp_path: Path) -> None:
    t = SSHTransport("ghost", options=options(tmp_path / "kh"), address="no-such-host.invalid")
    start = time.monotonic()
    err = failure_of(t)
    assert err.failure is FailureClass.DNS
    assert "no-such-host.invalid" in err.message
    took = time.monotonic() - start
    assert took < 30, f"hang guard: resolving a .invalid name took {took:.0f} s (normally ms)"


def test_silent_server_is_timeout(keys: Keys, tmp_path: Path) -> None:
    """A port that accepts TCP but never speaks SSH (a hung sshd): TIMEOUT, bounded."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        port = listener.getsockname()[1]
        t = SSHTransport(
            "hung",
            options=options(tmp_path / "kh", timeout=1.0),
            address="127.0.0.1",
            port=port,
            key_file=str(keys.good),
        )
        start = time.monotonic()
        err = failure_of(t)
        took = time.monotonic() - start
    # the configured 1 s timeout fired: it waited for it, and gave up soon after
    assert err.failure is FailureClass.TIMEOUT
    assert 1.0 <= took < 1 + HANG_GUARD, f"{took:.1f} s"


def test_sudo_denied(sshd: LoopbackSshd, keys: Keys, known: Path, nosudo_user: str) -> None:
    if shutil.which("sudo") is None:
        pytest.skip("sudo not installed")
    t = transport(sshd, keys, known, user=nosudo_user, become=True)
    assert t.run("id -un", timeout=10).stdout == f"{nosudo_user}\n"  # plain commands work
    err = failure_of(t, "id -u", sudo=True)
    assert err.failure is FailureClass.SUDO_DENIED
    assert err.message.startswith("sudo:")


def test_sudo_is_not_used_for_root_or_without_become(
    sshd: LoopbackSshd, keys: Keys, known: Path, nosudo_user: str
) -> None:
    with transport(sshd, keys, known, become=True) as t:  # root: no sudo needed
        assert t.run("id -u", timeout=10, sudo=True).stdout == "0\n"
    with transport(sshd, keys, known, user=nosudo_user) as t:  # no become: runs as the user
        res = t.run("id -un", timeout=10, sudo=True)
        assert res.stdout == f"{nosudo_user}\n"


def test_sshd_killed_mid_command_is_disconnected(
    sshd: LoopbackSshd, keys: Keys, known: Path
) -> None:
    t = transport(sshd, keys, known)
    t.connect()
    killed: list[int] = []

    def kill_later() -> None:
        time.sleep(1.0)
        killed.append(sshd.kill_sessions())

    threading.Thread(target=kill_later, daemon=True).start()
    start = time.monotonic()
    with pytest.raises(HostUnreachable) as info:
        try:
            t.run(f"sleep {LONG:g}", timeout=LONG)
        finally:
            t.close()
    took = time.monotonic() - start
    assert info.value.failure is FailureClass.DISCONNECTED
    assert killed and killed[0] > 0
    # killed at 1 s; a disconnect noticed only at the command's deadline takes LONG seconds
    assert took < 1 + HANG_GUARD, f"{took:.1f} s: the disconnect waited for the deadline"


# --- ssh_config: HostName/User/Port/IdentityFile, ProxyJump, ProxyCommand --------------------


@pytest.fixture(scope="session")
def jump(ssh_base: Path, keys: Keys) -> Iterator[LoopbackSshd]:
    # DEBUG1 logs each forwarding (and would leak into commands' stderr: only for the jump)
    server = start_sshd(ssh_base, {"root": keys.good_pub + "\n"}, name="jump", log_level="DEBUG1")
    yield server
    server.stop()


def test_ssh_config_host_alias(sshd: LoopbackSshd, keys: Keys, known: Path, tmp_path: Path) -> None:
    cfg = tmp_path / "ssh_config"
    cfg.write_text(
        f"Host gpu-node\n  HostName 127.0.0.1\n  Port {sshd.port}\n  User root\n"
        f"  IdentityFile {keys.good}\n"
    )
    t = SSHTransport("gpu-node", options=options(known, ssh_config=cfg))
    with t:
        assert t.run("id -un", timeout=10).stdout == "root\n"
        assert t.endpoint == f"root@127.0.0.1:{sshd.port}"


def jump_files(
    sshd: LoopbackSshd, jump: LoopbackSshd, keys: Keys, tmp_path: Path
) -> tuple[Path, Path]:
    """known_hosts and an ssh_config where host `target` (sshd) is reached via `bastion` (jump)."""
    kh = tmp_path / "known_hosts"
    kh.write_text(sshd.known_line() + jump.known_line())
    cfg = tmp_path / "ssh_config"
    cfg.write_text(
        f"Host target\n  HostName 127.0.0.1\n  Port {sshd.port}\n  User root\n"
        f"  IdentityFile {keys.good}\n  ProxyJump bastion\n"
        f"Host bastion\n  HostName 127.0.0.1\n  Port {jump.port}\n  User root\n"
        f"  IdentityFile {keys.good}\n"
    )
    return kh, cfg


def relay_config(sshd: LoopbackSshd, keys: Keys, tmp_path: Path) -> Path:
    """An ssh_config where host `via-cmd` (sshd) is reached through a ProxyCommand (RELAY)."""
    relay = tmp_path / "relay.py"
    relay.write_text(RELAY)
    cfg = tmp_path / "ssh_config"
    cfg.write_text(
        f"Host via-cmd\n  HostName 127.0.0.1\n  Port {sshd.port}\n  User root\n"
        f"  IdentityFile {keys.good}\n  ProxyCommand {sys.executable} {relay} %h %p\n"
    )
    return cfg


def test_proxyjump_goes_through_the_jump_host(
    sshd: LoopbackSshd, jump: LoopbackSshd, keys: Keys, tmp_path: Path
) -> None:
    kh, cfg = jump_files(sshd, jump, keys, tmp_path)
    log_before = jump.log.read_text()
    with SSHTransport("target", options=options(kh, ssh_config=cfg)) as t:
        assert t.run("echo through", timeout=10).stdout == "through\n"
    new_log = jump.log.read_text()[len(log_before) :]
    # the jump sshd opened the forwarded connection to the target's port
    assert f"port {sshd.port}" in new_log and "direct-tcpip" in new_log


def test_proxyjump_failures_name_the_jump_host(
    sshd: LoopbackSshd, jump: LoopbackSshd, keys: Keys, tmp_path: Path
) -> None:
    kh = tmp_path / "known_hosts"
    kh.write_text(sshd.known_line())  # the jump host's key is not known
    cfg = tmp_path / "ssh_config"
    cfg.write_text(
        f"Host target\n  HostName 127.0.0.1\n  Port {sshd.port}\n  User root\n"
        f"  IdentityFile {keys.good}\n  ProxyJump root@127.0.0.1:{jump.port}\n"
    )
    err = failure_of(SSHTransport("target", options=options(kh, ssh_config=cfg)))
    assert err.failure is FailureClass.HOSTKEY_UNKNOWN
    assert err.message.startswith("jump host 127.0.0.1: ")
    kh.write_text(jump.known_line())
    dead = free_port()
    cfg.write_text(
        f"Host target\n  HostName 127.0.0.1\n  Port {dead}\n  User root\n"
        f"  IdentityFile {keys.good}\n  ProxyJump root@127.0.0.1:{jump.port}\n"
        f"Host 127.0.0.1\n  IdentityFile {keys.good}\n"
    )
    err = failure_of(SSHTransport("target", options=options(kh, ssh_config=cfg)))
    assert err.failure is FailureClass.REFUSED
    assert f"127.0.0.1:{dead}" in err.message


RELAY = """
import socket, sys, threading
s = socket.create_connection((sys.argv[1], int(sys.argv[2])))
def pump():
    while True:
        data = sys.stdin.buffer.read1(65536)
        if not data:
            break
        s.sendall(data)
threading.Thread(target=pump, daemon=True).start()
while True:
    data = s.recv(65536)
    if not data:
        break
    sys.stdout.buffer.write(data)
    sys.stdout.buffer.flush()
"""


def test_proxycommand(sshd: LoopbackSshd, keys: Keys, known: Path, tmp_path: Path) -> None:
    cfg = relay_config(sshd, keys, tmp_path)
    with SSHTransport("via-cmd", options=options(known, ssh_config=cfg)) as t:
        assert t.run("echo relayed", timeout=10).stdout == "relayed\n"


def test_changed_jump_host_key_names_the_jump_host_entry(
    sshd: LoopbackSshd, jump: LoopbackSshd, keys: Keys, tmp_path: Path
) -> None:
    kh = tmp_path / "known_hosts"
    kh.write_text(sshd.known_line() + f"{jump.known_name} {keygen(tmp_path / 'impostor')}\n")
    cfg = tmp_path / "ssh_config"
    cfg.write_text(
        f"Host target\n  HostName 127.0.0.1\n  Port {sshd.port}\n  User root\n"
        f"  IdentityFile {keys.good}\n  ProxyJump root@127.0.0.1:{jump.port}\n"
    )
    err = failure_of(SSHTransport("target", options=options(kh, ssh_config=cfg)))
    assert err.failure is FailureClass.HOSTKEY_CHANGED
    assert err.known_name == jump.known_name


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"address": "127.0.0.1;touch {tmp}/injected;"}, "address"),
        ({"address": "127.0.0.1", "port": 0}, "port"),
        ({"address": "127.0.0.1", "user": "root;touch {tmp}/injected"}, "user"),
        ({"address": "127.0.0.1", "become_user": "$(touch {tmp}/injected)"}, "become_user"),
    ],
)
def test_transport_checks_values_before_ssh_config_sees_them(
    tmp_path: Path, kwargs: dict[str, object], field: str
) -> None:
    """The API path (no inventory): a real ssh_config whose Match exec would run the name."""
    cfg = tmp_path / "ssh_config"
    cfg.write_text(f'Match exec "touch {tmp_path}/pwned-%h"\n  User root\n')
    args = {k: v.format(tmp=tmp_path) if isinstance(v, str) else v for k, v in kwargs.items()}
    with pytest.raises(UsageError, match=f"^host 'evil': {field} "):
        SSHTransport("evil", options=options(tmp_path / "kh", ssh_config=cfg), **args)  # type: ignore[arg-type]
    assert not (tmp_path / "injected").exists()
    assert not list(tmp_path.glob("pwned-*"))  # not even looked up


def test_bracketed_ipv6_address_and_ssh_config_port(keys: Keys, tmp_path: Path) -> None:
    cfg = tmp_path / "ssh_config"
    cfg.write_text("Host ::1\n  Port 2222\n")
    t = SSHTransport("v6", options=options(tmp_path / "kh", ssh_config=cfg), address="[::1]")
    assert t.endpoint.endswith("@::1:2222")
    assert t._target.known_name == "[::1]:2222"
    cfg.write_text("Host gpu\n  Port 22;id\n")
    with pytest.raises(UsageError, match="ssh_config Port"):
        SSHTransport("gpu", options=options(tmp_path / "kh", ssh_config=cfg))


def test_missing_ssh_config_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="no such ssh config"):
        SSHOptions.load(known_hosts=tmp_path / "kh", ssh_config=tmp_path / "nope")
