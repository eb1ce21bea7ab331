"""One-script remote collection and the fleet runner, against real sshd on loopback (and, with
the `lab` marker, an 8-fault matrix on the lab's real systemd hosts)."""

# The loopback sshd fixtures come from test_ssh.py; their names reappear as test arguments.
# ruff: noqa: F811

from __future__ import annotations

import shutil
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from test_ssh import (  # the loopback sshd fixtures (real OpenSSH servers)
    NOSUDO_USER,
    Keys,
    LoopbackSshd,
    free_port,
    keygen,
    keys,  # noqa: F401  (fixture)
    known,  # noqa: F401  (fixture)
    nosudo_user,  # noqa: F401  (fixture)
    pytestmark,  # noqa: F401  (skip without root and sshd)
    ssh_base,  # noqa: F401  (fixture)
    sshd,  # noqa: F401  (fixture)
    start_sshd,
    transport,
)

from rocmprov.collect.bundle import Bundle, ProbeOutput, read_bundle, write_bundle
from rocmprov.collect.fleet import collect_fleet, collect_one
from rocmprov.collect.host import collect_host
from rocmprov.collect.probes import Probe, build_probes
from rocmprov.collect.remote import ProbeTimeout, build_script, collect_remote, parse_output
from rocmprov.inventory.hosts import HostSpec, load_inventory
from rocmprov.transport.base import FailureClass, HostUnreachable
from rocmprov.transport.local import LocalTransport
from rocmprov.transport.ssh import SSHOptions, SSHTransport
from rocmprov.transport.ssh.command import KILL_GRACE
from tests.conftest import require_lab
from tests.lab import Lab
from tests.timebounds import HANG_GUARD, LONG, end_processes_naming, within

# probes whose output does not change between two runs a second apart on one machine
DETERMINISTIC = (
    "uname",
    "os-release",
    "cmdline",
    "pci-sysfs",
    "kfd",
    "groups",
    "numa-balancing",
    "rocm-version",
    "rocminfo",
    "amdgpu-initstate",
    "dkms",
    "lspci",
    "apt-rocm",
    "packages",
)  # not "torch": which python3 a login shell finds depends on its PATH


def spec(name: str, server: LoopbackSshd, keys: Keys, **kw: object) -> HostSpec:
    values: dict = {
        "address": "127.0.0.1",
        "port": server.port,
        "user": "root",
        "key_file": str(keys.good),
    }
    values.update(kw)
    return HostSpec(name=name, **values)


def opts(kh: Path, **kw: object) -> SSHOptions:
    return SSHOptions.load(known_hosts=kh, ssh_config=Path("/dev/null"), **kw)  # type: ignore[arg-type]


# --- one script, split back per probe ---------------------------------------------------------


def test_combined_script_gives_what_collect_host_gives(
    sshd: LoopbackSshd, keys: Keys, known: Path
) -> None:
    probes = build_probes()
    with transport(sshd, keys, known) as t:
        remote = collect_remote(t, probes)
    local = collect_host(LocalTransport(), probes)
    assert list(remote.outputs) == list(local.outputs) == [p.id for p in probes]
    assert remote.host == "lo"
    for pid in DETERMINISTIC:
        r, lo = remote.outputs[pid], local.outputs[pid]
        assert (r.command, r.rc, r.stdout, r.stderr) == (lo.command, lo.rc, lo.stdout, lo.stderr), (
            pid
        )
    limit = {p.id: p.timeout + KILL_GRACE for p in probes}  # a probe ends within its timeout
    for pid, r in remote.outputs.items():  # every probe, deterministic or not
        assert r.rc == local.outputs[pid].rc, pid
        # in seconds, as long as the probe may run (not a speed bound: a unit's sanity)
        assert 0 <= r.duration <= limit[pid], (pid, r.duration)
        assert r.collected_at.endswith("+00:00")
    assert remote.outputs["uname"].stdout.strip()  # real content, not empty
    assert "ID=" in remote.outputs["os-release"].stdout


def test_bundle_written_from_ssh_reads_back_the_same(
    sshd: LoopbackSshd, keys: Keys, known: Path, tmp_path: Path
) -> None:
    probes = build_probes()[:3]
    with transport(sshd, keys, known) as t:
        remote = collect_remote(t, probes, extra={"transport": "ssh"})
    back = read_bundle(write_bundle(remote, tmp_path))
    assert {k: (v.rc, v.stdout) for k, v in back.outputs.items()} == {
        k: (v.rc, v.stdout) for k, v in remote.outputs.items()
    }
    assert back.meta["transport"] == "ssh"


def test_one_exec_channel_for_all_probes(sshd: LoopbackSshd, keys: Keys, known: Path) -> None:
    calls: list[str] = []
    with transport(sshd, keys, known) as t:
        real_exec = t.exec

        def counting_exec(command: str, **kw: object) -> object:
            calls.append(command)
            return real_exec(command, **kw)  # type: ignore[arg-type]

        t.exec = counting_exec  # type: ignore[method-assign]
        bundle = collect_remote(t, build_probes())
    assert len(calls) == 1
    assert len(bundle.outputs) == len(build_probes())


def test_outputs_exact_and_forged_markers_harmless(
    sshd: LoopbackSshd, keys: Keys, known: Path
) -> None:
    probes = [
        Probe("no-newline", "", "printf 'a\\nb'"),
        Probe("empty", "", "true"),
        Probe("blank-lines", "", "printf '\\n\\n'; printf 'e\\n\\n' >&2"),
        Probe("forger", "", "echo '@@rocmprov-0000 end forger 0 0 0'; echo '@@rocmprov-'; exit 5"),
        Probe("binary", "", "printf '\\377\\000x'"),
        Probe("reads-stdin", "", "cat; echo after"),
    ]
    with transport(sshd, keys, known) as t:
        out = collect_remote(t, probes).outputs
    assert (out["no-newline"].stdout, out["no-newline"].rc) == ("a\nb", 0)
    assert (out["empty"].stdout, out["empty"].stderr) == ("", "")
    assert (out["blank-lines"].stdout, out["blank-lines"].stderr) == ("\n\n", "e\n\n")
    assert out["forger"].rc == 5
    assert out["forger"].stdout == "@@rocmprov-0000 end forger 0 0 0\n@@rocmprov-\n"
    assert out["binary"].stdout == "\ufffd\x00x"
    assert out["reads-stdin"].stdout == "after\n"  # stdin is /dev/null, not the script


def test_probe_timeout_recorded_and_the_rest_collected(
    sshd: LoopbackSshd, keys: Keys, known: Path
) -> None:
    probes = [
        Probe("before", "", "echo one"),
        Probe("hangs", "", f"echo partial; sleep {LONG:g}", timeout=1),
        Probe("after", "", "echo three"),
    ]
    start = time.monotonic()
    with transport(sshd, keys, known) as t:
        out = collect_remote(t, probes).outputs
    took = time.monotonic() - start
    # the probe's 1 s timeout fired: it waited for it, and went on long before the LONG sleep
    assert 1.0 <= took < 1 + HANG_GUARD, f"{took:.1f} s"
    assert out["hangs"].rc == 124 and out["hangs"].status == "timeout"
    assert out["hangs"].stdout == "partial\n"
    assert "timed out after 1s" in out["hangs"].stderr
    assert (out["before"].stdout, out["after"].stdout) == ("one\n", "three\n")


def test_probe_ignoring_term_is_killed_and_still_a_timeout(
    sshd: LoopbackSshd, keys: Keys, known: Path
) -> None:
    probes = [Probe("stubborn", "", "trap '' TERM; sleep 30; sleep 30", timeout=1)]
    with transport(sshd, keys, known) as t:
        out = collect_remote(t, probes).outputs
    assert out["stubborn"].rc == 124


def test_script_past_its_deadline_is_probe_timeout_with_partial(
    sshd: LoopbackSshd, keys: Keys, known: Path
) -> None:
    probes = [Probe("quick", "", "echo fast"), Probe("slow", "", "sleep 20", timeout=30)]
    # the deadline must find the script inside "slow": 1.5 s was not always enough on a loaded
    # 2-core machine to start the script and run "quick" (then the probe is "?")
    with transport(sshd, keys, known) as t, pytest.raises(ProbeTimeout) as info:
        collect_remote(t, probes, deadline=5.0)
    err = info.value
    assert err.failure is FailureClass.PROBE_TIMEOUT
    assert err.probe == "slow" and "slow" in err.message
    assert err.partial.outputs["quick"].stdout == "fast\n"
    assert "slow" not in err.partial.outputs


def test_sudo_denied_fails_the_host_before_any_probe(
    sshd: LoopbackSshd, keys: Keys, known: Path, nosudo_user: str
) -> None:
    if shutil.which("sudo") is None:
        pytest.skip("sudo not installed")
    probes = build_probes()
    with (
        transport(sshd, keys, known, user=nosudo_user, become=True) as t,
        pytest.raises(HostUnreachable) as info,
    ):
        collect_remote(t, probes)
    assert info.value.failure is FailureClass.SUDO_DENIED
    assert info.value.message.startswith("sudo:")
    # without become the same user is collected, root probes run as that user
    with transport(sshd, keys, known, user=nosudo_user) as t:
        bundle = collect_remote(t, probes)
    assert bundle.outputs["groups"].stdout.startswith("--- user ")
    assert NOSUDO_USER in bundle.outputs["groups"].stdout


def test_parse_output_of_a_cut_stream() -> None:
    probes = [Probe("a", "", "x"), Probe("b", "", "y")]
    script = build_script(probes, "ff")
    assert "@@rocmprov-ff" in script
    text = (
        "@@rocmprov-ff start 10.00\n@@rocmprov-ff begin a\n@@rocmprov-ff out a\nhi\n\n"
        "@@rocmprov-ff err a\n\n@@rocmprov-ff end a 0 10.00 10.50\n@@rocmprov-ff begin b\n"
    )
    parsed = parse_output(text, probes, "ff")
    assert parsed.started and not parsed.done and parsed.running == "b"
    assert parsed.outputs == {"a": ProbeOutput("a", "x", 0, "hi\n", "", 0.5, "")}


# --- the fleet --------------------------------------------------------------------------------


def test_fleet_streams_every_host_and_classifies_failures(
    sshd: LoopbackSshd, keys: Keys, known: Path, ssh_base: Path
) -> None:
    other = start_sshd(ssh_base, {"root": keys.good_pub + "\n"}, name="fleet-unknown")
    try:
        hosts = [
            spec("good-1", sshd, keys),
            spec("refused", sshd, keys, port=free_port()),
            spec("good-2", sshd, keys),
            spec("unknown-key", other, keys),
            spec("ghost", sshd, keys, address="ghost.invalid"),
            spec("bad-key", sshd, keys, key_file=str(keys.other)),
            HostSpec(name="me", address="localhost", vars={"ansible_connection": "local"}),
        ]
        before = known.read_text()
        seen: list[str] = []
        results = dict(
            (s.name, r)
            for s, r in collect_fleet(
                hosts,
                forks=3,
                known_hosts=known,
                ssh_config=Path("/dev/null"),
                connect_timeout=5,
                on_done=lambda s, r: seen.append(s.name),
                probes_for=lambda s: build_probes()[:5],
            )
        )
    finally:
        other.stop()
    assert sorted(seen) == sorted(results) == sorted(h.name for h in hosts)
    for name in ("good-1", "good-2", "me"):
        bundle = results[name]
        assert isinstance(bundle, Bundle), bundle
        assert bundle.host == name and len(bundle.outputs) == 5
        assert bundle.outputs["uname"].rc == 0
    assert results["me"].meta["transport"] == "local"  # type: ignore[union-attr]
    expected = {
        "refused": FailureClass.REFUSED,
        "unknown-key": FailureClass.HOSTKEY_UNKNOWN,
        "ghost": FailureClass.DNS,
        "bad-key": FailureClass.AUTH_DENIED,
    }
    for name, failure in expected.items():
        err = results[name]
        assert isinstance(err, HostUnreachable), (name, err)
        assert (err.host, err.failure) == (name, failure)
    assert known.read_text() == before  # nothing recorded without accept_new


def test_fleet_accept_new_records_only_the_unknown_host(
    sshd: LoopbackSshd, keys: Keys, known: Path, ssh_base: Path
) -> None:
    other = start_sshd(ssh_base, {"root": keys.good_pub + "\n"}, name="fleet-new")
    try:
        hosts = [spec("known", sshd, keys), spec("new", other, keys)]
        results = dict(
            (s.name, r)
            for s, r in collect_fleet(
                hosts,
                accept_new=True,
                known_hosts=known,
                ssh_config=Path("/dev/null"),
                probes_for=lambda s: build_probes()[:1],
            )
        )
    finally:
        other.stop()
    assert all(isinstance(r, Bundle) for r in results.values()), results
    assert known.read_text() == sshd.known_line() + other.known_line()


def test_fleet_work_per_host_is_one_connection_and_one_command(
    sshd: LoopbackSshd, keys: Keys, known: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the controller's CPU per host comes from, counted: one SSH connection and one exec
    channel (the whole probe script) per host, whatever the number of probes. The CPU itself is
    measured by benchmarks/fleet_audit.py and fleet_scale.py (docs/benchmarks.md)."""
    connections: list[str] = []
    commands: list[str] = []
    open_, exec_ = SSHTransport._open, SSHTransport.exec

    def counted_open(self: SSHTransport, target: object, via: object, where: str) -> object:
        connections.append(self.host)
        return open_(self, target, via, where)  # type: ignore[arg-type]

    def counted_exec(self: SSHTransport, *args: object, **kw: object) -> object:
        commands.append(self.host)
        return exec_(self, *args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(SSHTransport, "_open", counted_open)
    monkeypatch.setattr(SSHTransport, "exec", counted_exec)
    n = 8
    hosts = [spec(f"h{i:02d}", sshd, keys) for i in range(n)]
    probes = build_probes()
    assert len(probes) > 10
    results = list(
        collect_fleet(
            hosts,
            forks=8,
            known_hosts=known,
            ssh_config=Path("/dev/null"),
            probes_for=lambda s: probes,
        )
    )
    assert all(isinstance(r, Bundle) and len(r.outputs) == len(probes) for _, r in results)
    names = sorted(h.name for h in hosts)
    assert sorted(connections) == names, f"connections per host: {connections}"
    assert sorted(commands) == names, f"commands per host: {commands}"


def test_fleet_closing_early_closes_connections(
    sshd: LoopbackSshd, keys: Keys, known: Path, tmp_path: Path
) -> None:
    hosts = [spec("fast", sshd, keys)] + [spec(f"slow{i}", sshd, keys) for i in range(3)]
    # named (": tag") so that what the cut connections leave running on the host ends here
    slow = [Probe("slow", "", f"sleep {LONG:g}; : {tmp_path}/cut", timeout=LONG + 10)]
    fast = [Probe("fast", "", "echo hi")]
    start = time.monotonic()
    it = collect_fleet(
        hosts,
        forks=4,
        known_hosts=known,
        ssh_config=Path("/dev/null"),
        probes_for=lambda s: fast if s.name == "fast" else slow,
    )
    try:
        first_spec, first = next(it)
        assert first_spec.name == "fast" and isinstance(first, Bundle)
        it.close()  # what a Ctrl-C or a `break` does: the slow hosts are cut, not waited for
        took = time.monotonic() - start
        assert took < HANG_GUARD, f"{took:.1f} s: close() waited for the {LONG:g} s probes"
        # and their connections are gone on the server's side (its per-connection processes)
        assert within(lambda: not sshd.sessions()), "the slow hosts' connections are still open"
    finally:  # a cut connection leaves its command to run out under init: end it now
        it.close()
        end_processes_naming(f"{tmp_path}/cut")


def test_collect_one_never_raises(keys: Keys, tmp_path: Path) -> None:
    def broken(_spec: HostSpec) -> list[Probe]:
        raise RuntimeError("a bug")

    result = collect_one(HostSpec("x", "127.0.0.1"), opts(tmp_path / "kh"), broken)
    assert isinstance(result, HostUnreachable)
    assert result.failure is FailureClass.ERROR and "a bug" in result.message


def test_fleet_rejects_a_missing_ssh_config_before_contacting_anyone(tmp_path: Path) -> None:
    from rocmprov.exitcodes import UsageError

    with pytest.raises(UsageError):
        collect_fleet([HostSpec("x", "127.0.0.1")], ssh_config=tmp_path / "missing")


def test_transport_from_spec(sshd: LoopbackSshd, keys: Keys, known: Path) -> None:
    s = spec("node", sshd, keys, become=True, become_user="svc")
    t = SSHTransport.from_spec(s, opts(known))
    assert (t.host, t.user, t.endpoint) == ("node", "root", f"root@127.0.0.1:{sshd.port}")
    assert not t.uses_sudo  # root needs no sudo
    t2 = SSHTransport.from_spec(
        spec("n2", sshd, keys, user="ops", become=True, become_user="svc"), opts(known)
    )
    assert t2.uses_sudo and t2.sudo_argv() == ["sudo", "-n", "-u", "svc", "--"]


# --- the lab: one run over real systemd hosts, one fault per host -----------------------------

KILL_MY_SSHD = (  # walks up from the probe to its sshd session process and SIGKILLs it
    'p=$$; i=0; while [ "$p" -gt 1 ] && [ $i -lt 30 ]; do '
    'c=$(cat /proc/$p/comm); case "$c" in sshd*) kill -9 "$p"; sleep 5; exit 0;; esac; '
    "p=$(cut -d' ' -f4 /proc/$p/stat); i=$((i+1)); done; exit 3"
)


@pytest.fixture(scope="module")
def fault_lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    """A lab of its own (11 hosts), since every host gets broken in a different way."""
    require_lab()
    the_lab = Lab(tmp_path_factory.mktemp("fault-lab"))
    try:
        the_lab.start(11)
        yield the_lab
    finally:
        the_lab.stop()


@pytest.mark.lab
def test_lab_fault_matrix_in_one_run(fault_lab: Lab, tmp_path: Path) -> None:
    lab = fault_lab
    h = {i: lab.hosts[i] for i in range(11)}
    specs = {s.name: s for s in load_inventory(lab.inventory)}
    assert set(specs) == {x.name for x in lab.hosts}
    role = {
        h[0].name: "ok",
        h[1].name: "ok",
        h[2].name: "stopped",
        h[3].name: "refused",
        h[4].name: "key-removed",
        h[5].name: "hostkey-changed",
        h[6].name: "hostkey-unknown",
        h[7].name: "sudo-denied",
        h[8].name: "sshd-killed",
        h[9].name: "probe-hangs",
        h[10].name: "silent",
    }
    # the faults, made on real hosts
    lab.stop_host(h[2])
    lab.kill_sshd(h[3])
    (h[4].root / "root/.ssh/authorized_keys").unlink()
    lab.break_sudo(h[7])
    lab.firewall(h[10], "drop")
    kh = tmp_path / "known_hosts"
    impostor = keygen(tmp_path / "impostor")
    lines = []
    for line in lab.known_hosts.read_text().splitlines():
        names_ = line.split()[0].split(",")
        if h[6].name in names_:
            continue  # unknown
        if h[5].name in names_:
            line = f"{line.split()[0]} {impostor}"  # changed
        lines.append(line)
    kh.write_text("\n".join(lines) + "\n")
    before = kh.read_bytes()
    specs[h[7].name] = replace(specs[h[7].name], user="admin", become=True)

    base = build_probes()[:6]

    def probes_for(s: HostSpec) -> list[Probe]:
        if role[s.name] == "sshd-killed":
            return [*base[:2], Probe("kill-session", "", KILL_MY_SSHD), *base[2:]]
        if role[s.name] == "probe-hangs":
            return [*base[:2], Probe("hang", "", "sleep 600", timeout=2), *base[2:]]
        return list(base)

    start = time.monotonic()
    results = dict(
        (s.name, r)
        for s, r in collect_fleet(
            list(specs.values()),
            forks=16,
            known_hosts=kh,
            ssh_config=lab.ssh_config,
            connect_timeout=4,
            probes_for=probes_for,
        )
    )
    elapsed = time.monotonic() - start
    got = {
        role[name]: (r.failure.value if isinstance(r, HostUnreachable) else "bundle")
        for name, r in results.items()
    }
    assert got == {
        "ok": "bundle",
        "stopped": "refused",  # the address is still there; nothing listens: RST
        "refused": "refused",
        "key-removed": "auth-denied",
        "hostkey-changed": "hostkey-changed",
        "hostkey-unknown": "hostkey-unknown",
        "sudo-denied": "sudo-denied",
        "sshd-killed": "disconnected",
        "probe-hangs": "bundle",
        "silent": "timeout",
    }, results
    for name in (h[0].name, h[1].name, h[9].name):
        bundle = results[name]
        assert isinstance(bundle, Bundle)
        assert bundle.outputs["uname"].rc == 0
        assert "ID=debian" in bundle.outputs["os-release"].stdout
        assert "device " in bundle.outputs["pci-sysfs"].stdout or bundle.outputs["pci-sysfs"].rc
    hang = results[h[9].name].outputs["hang"]  # type: ignore[union-attr]
    assert (hang.rc, hang.status) == (124, "timeout")
    assert len(results[h[9].name].outputs) == 7  # type: ignore[union-attr]
    assert kh.read_bytes() == before  # nothing recorded without accept_new
    # hang guard: every fault is bounded by a timeout (the silent host's 4 s connect, the hung
    # probe's 2 s) and the hosts run at once; a host that waits for good reaches this
    assert elapsed < 120, f"hang guard: the matrix took {elapsed:.1f} s"
    # messages are one line and name the host's problem
    for r in results.values():
        if isinstance(r, HostUnreachable):
            assert "\n" not in r.message and r.message
