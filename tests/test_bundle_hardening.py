"""Bundles against a hostile reviewer (issue 13): every attack or fault reproduced for real.

Real files, FIFOs, device nodes, symbolic links, tarballs and a read-only mount in tmp_path;
"another user" is uid 65534 (the tests run as root, as the lab's do).
"""

from __future__ import annotations

import gzip
import io
import json
import os
import re
import resource
import shutil
import socket
import stat
import subprocess
import sys
import tarfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from rocmprov.collect.bundle import Bundle, ProbeOutput, read_bundle, write_bundle
from rocmprov.exitcodes import Exit, InputError
from tests.helpers import Run, assert_one_line_error, rocmprov

NOBODY = 65534
MiB = 1 << 20
REPO = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root (chown, mknod, mount)")


def _bundle(host: str = "h", **outs: str) -> Bundle:
    outs = outs or {"uname": "6.8.0-31-generic\n"}
    return Bundle(
        host, {pid: ProbeOutput(pid, f"probe {pid}", 0, text) for pid, text in outs.items()}
    )


def _local_names() -> set[str]:
    """What the old and the new writer call this machine's bundle directory."""
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", socket.gethostname())
    return {safe.strip("."), safe.strip(".-")}


def _bounded(*argv: str, timeout: float = 120) -> Run:
    """The real CLI in a subprocess, with 1 GiB of address space and a time limit, so that an
    unbounded read fails the test instead of hanging it or eating the machine's memory."""

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))

    try:
        proc = subprocess.run(
            [sys.executable, "-m", "rocmprov", *argv],
            capture_output=True,
            text=True,
            timeout=timeout,
            preexec_fn=limit,
            env={**os.environ, "NO_COLOR": "1"},
            check=False,
        )
    except subprocess.TimeoutExpired:
        return Run(-1, "", f"timed out after {timeout}s")
    return Run(proc.returncode, proc.stdout, proc.stderr)


def _assert_bad_bundle(run: Run, path: Path, *needles: str) -> None:
    assert run.rc == Exit.UNKNOWN, run
    assert_one_line_error(run)
    assert "internal error" not in run.stderr, run.stderr
    assert str(path) in run.stderr, run.stderr
    for needle in needles:
        assert needle in run.stderr, (needle, run.stderr)


class _Zeros(io.RawIOBase):
    def __init__(self, size: int) -> None:
        self.left = size

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        n = min(len(buffer), self.left)
        buffer[:n] = bytes(n)
        self.left -= n
        return n


def _tar(path: Path, members: dict[str, int | bytes]) -> Path:
    """A .tar.gz whose members are given bytes or that many zero bytes (streamed: cheap)."""
    with gzip.open(path, "wb", compresslevel=1) as gz, tarfile.open(fileobj=gz, mode="w|") as tar:
        for name, body in members.items():
            info = tarfile.TarInfo(name)
            if isinstance(body, bytes):
                info.size = len(body)
                tar.addfile(info, io.BytesIO(body))
            else:
                info.size = body
                tar.addfile(info, io.BufferedReader(_Zeros(body), MiB))
    return path


def _manifest(host: str = "h", probes: object = None) -> bytes:
    if probes is None:
        probes = [{"id": "uname", "command": "uname -r", "rc": 0}]
    return json.dumps({"schema": "rocmprov.bundle/1", "host": host, "probes": probes}).encode()


# --- 4. every host its own bundle, a collision never overwrites -----------------------------------


def test_dotted_hosts_get_distinct_tarballs(tmp_path: Path) -> None:
    from rocmprov.collect.bundle import BundleWriter

    with BundleWriter(tmp_path, tar=True) as writer:
        done = [writer.write(_bundle(h)) for h in ("10.0.0.1", "10.0.0.2")]
    tars = [d.tar for d in done]
    assert tars[0] is not None and tars[1] is not None and tars[0] != tars[1]
    assert sorted(p.name for p in tmp_path.glob("*.tar.gz")) == [
        "10.0.0.1.tar.gz",
        "10.0.0.2.tar.gz",
    ]
    assert [read_bundle(t).host for t in tars if t] == ["10.0.0.1", "10.0.0.2"]


def test_hosts_that_sanitise_alike_keep_their_own_bundles(tmp_path: Path) -> None:
    first = write_bundle(_bundle("gpu:a", uname="A\n"), tmp_path)
    second = write_bundle(_bundle("gpu_a", uname="B\n"), tmp_path)
    assert first != second
    assert read_bundle(first).host == "gpu:a"
    assert read_bundle(first).outputs["uname"].stdout == "A\n"
    assert read_bundle(second).host == "gpu_a"


def test_same_run_collisions_and_tricky_names(tmp_path: Path) -> None:
    from rocmprov.collect.bundle import BundleWriter, bundle_name

    hosts = ["gpu:a", "gpu_a", bundle_name("gpu:a"), "..", "a/../../b", "x" * 300, "gpu_a"]
    with BundleWriter(tmp_path, tar=True) as writer:
        done = [writer.write(_bundle(h)) for h in hosts]
    paths = [d.path for d in done]
    assert len(set(paths)) == len(hosts)
    for host, d in zip(hosts, done, strict=True):
        assert d.path.parent == tmp_path and d.tar is not None and d.tar.parent == tmp_path
        assert read_bundle(d.path).host == host
        assert read_bundle(d.tar).host == host
        assert len(d.path.name) <= 80
    assert bundle_name("10.0.0.1") == "10.0.0.1"
    assert bundle_name("").startswith("host-") and bundle_name(".") != bundle_name("..")


def test_something_else_under_the_name_is_never_overwritten(tmp_path: Path) -> None:
    mine = tmp_path / "h"
    mine.mkdir()
    (mine / "manifest.json").write_text("my notes, not a bundle\n")
    (tmp_path / "k.tar.gz").write_text("not a tarball\n")
    path = write_bundle(_bundle("h"), tmp_path)
    assert path != mine and read_bundle(path).host == "h"
    assert (mine / "manifest.json").read_text() == "my notes, not a bundle\n"
    from rocmprov.collect.bundle import BundleWriter

    with BundleWriter(tmp_path, tar=True) as writer:
        done = writer.write(_bundle("k"))
    assert done.tar != tmp_path / "k.tar.gz"
    assert (tmp_path / "k.tar.gz").read_text() == "not a tarball\n"


def test_recollect_replaces_the_hosts_own_bundle(tmp_path: Path) -> None:
    old = write_bundle(_bundle("h", uname="old\n", dmesg="old\n"), tmp_path)
    new = write_bundle(_bundle("h", uname="new\n"), tmp_path)
    assert new == old
    again = read_bundle(new)
    assert again.outputs.keys() == {"uname"} and again.outputs["uname"].stdout == "new\n"
    assert [p.name for p in tmp_path.iterdir()] == ["h"]  # no staging directory left


# --- 5. no writes through planted links, only into the caller's own directory ---------------------


def _plant(out: Path, victim: Path) -> None:
    victim.mkdir()
    (victim / "manifest.json").write_text("precious\n")
    (victim / "uname.out").write_text("precious\n")
    (victim / "file").write_text("precious\n")
    for name in _local_names():
        (out / name).symlink_to(victim)
        (out / f"{name}.tar.gz").symlink_to(victim / "file")
        os.lchown(out / name, NOBODY, NOBODY)
        os.lchown(out / f"{name}.tar.gz", NOBODY, NOBODY)


def _untouched(victim: Path) -> None:
    assert sorted(p.name for p in victim.iterdir()) == ["file", "manifest.json", "uname.out"]
    for p in victim.iterdir():
        assert p.read_text() == "precious\n", p


def test_collect_refuses_a_directory_owned_by_another_user(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    _plant(out, tmp_path / "victim")
    os.chown(out, NOBODY, NOBODY)
    run = rocmprov("collect", "-o", str(out), "--tar")
    assert run.rc == Exit.USAGE, run
    assert_one_line_error(run)
    assert str(out) in run.stderr and "owned by uid 65534" in run.stderr
    _untouched(tmp_path / "victim")


def test_collect_refuses_a_world_writable_directory_without_sticky_bit(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    out.chmod(0o777)
    run = rocmprov("collect", "-o", str(out))
    assert run.rc == Exit.USAGE, run
    assert_one_line_error(run)
    assert "sticky" in run.stderr
    assert list(out.iterdir()) == []


def test_collect_refuses_a_symlink_as_output(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    run = rocmprov("collect", "-o", str(tmp_path / "link"))
    assert run.rc == Exit.USAGE, run
    assert_one_line_error(run)
    assert "symbolic link" in run.stderr


def test_links_planted_in_a_sticky_directory_are_not_followed(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    out.chmod(0o1777)  # like /tmp: others may create entries, not replace ours
    _plant(out, tmp_path / "victim")
    run = rocmprov("collect", "-o", str(out), "--tar")
    assert run.rc in (Exit.OK, Exit.WARNING, Exit.CRITICAL, Exit.UNKNOWN), run
    assert "internal error" not in run.stderr
    _untouched(tmp_path / "victim")
    (bundle_dir,) = [p for p in out.iterdir() if p.is_dir() and not p.is_symlink()]
    assert bundle_dir.name not in _local_names()
    assert read_bundle(bundle_dir).host == socket.gethostname()


# --- 9. modes -------------------------------------------------------------------------------------


def test_bundles_are_private(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        run = rocmprov("collect", "-o", str(tmp_path / "out"), "--tar")
    finally:
        os.umask(old)
    assert run.rc != Exit.USAGE, run
    out = tmp_path / "out"
    assert stat.S_IMODE(out.stat().st_mode) == 0o700
    (d,) = [p for p in out.iterdir() if p.is_dir()]
    (t,) = list(out.glob("*.tar.gz"))
    assert stat.S_IMODE(d.stat().st_mode) == 0o700
    assert stat.S_IMODE(t.stat().st_mode) == 0o600
    assert all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in d.iterdir())
    with tarfile.open(t) as tar:
        for m in tar.getmembers():
            assert m.mode == (0o700 if m.isdir() else 0o600), m.name
    assert read_bundle(t).host == read_bundle(d).host


# --- 11. an interrupted re-collect leaves the old bundle whole ------------------------------------


def test_interrupted_recollect_leaves_the_old_bundle_whole(tmp_path: Path) -> None:
    path = write_bundle(_bundle("h", uname="old\n", dmesg="old\n"), tmp_path)
    # The re-collect runs out of file size (RLIMIT_FSIZE) half way: a real write fault.
    script = (
        "import resource, signal, sys\n"
        "from pathlib import Path\n"
        "from rocmprov.collect.bundle import Bundle, ProbeOutput, write_bundle\n"
        "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
        "resource.setrlimit(resource.RLIMIT_FSIZE, (65536, 65536))\n"
        "outs = {'uname': 'new\\n', 'dmesg': 'x' * 200000}\n"
        "b = Bundle('h', {k: ProbeOutput(k, k, 0, v) for k, v in outs.items()})\n"
        "try:\n"
        "    write_bundle(b, Path(sys.argv[1]))\n"
        "except OSError as exc:\n"
        "    sys.exit(f'failed: {exc.strerror}')\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path)],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 1 and "failed: File too large" in proc.stderr, proc.stderr
    back = read_bundle(path)
    assert {k: v.stdout for k, v in back.outputs.items()} == {"uname": "old\n", "dmesg": "old\n"}
    assert [p.name for p in tmp_path.iterdir()] == ["h"]  # the staging directory is gone


def test_leftover_staging_directory_is_not_taken_for_a_bundle(tmp_path: Path) -> None:
    # What a collect killed with SIGKILL leaves: its private staging directory, half written.
    write_bundle(_bundle("h", uname="old\n"), tmp_path)
    half = tmp_path / ".rocmprov-0123456789ab" / "b1"
    half.mkdir(parents=True)
    (half / "manifest.json").write_bytes(_manifest("h"))
    (half / "uname.out").write_text("half\n")
    assert read_bundle(tmp_path).outputs["uname"].stdout == "old\n"
    assert write_bundle(_bundle("h", uname="new\n"), tmp_path) == tmp_path / "h"
    assert read_bundle(tmp_path / "h").outputs["uname"].stdout == "new\n"


# --- 6. tar bombs ---------------------------------------------------------------------------------


# (members, what the refusal names, the most a refusal may unpack: the bound it names plus
# the reader's 1 MiB buffer; the bombs unpack to 256, 75, 200 MiB and 3,000 headers)
BOMBS = {
    "one-big-member": (
        {"vm/manifest.json": _manifest(), "vm/uname.out": 256 * MiB},
        ["vm/uname.out", "16 MiB"],
        2 * MiB,  # refused from the member's header, before its data
    ),
    "too-much-in-all": (
        {"vm/manifest.json": _manifest(), **{f"vm/p{i}.out": 15 * MiB for i in range(5)}},
        ["vm/p4.out", "64 MiB"],
        65 * MiB,
    ),
    "big-unwanted-member": (
        {"vm/junk.bin": 200 * MiB, "vm/manifest.json": _manifest()},
        ["72 MiB"],
        73 * MiB,
    ),
    "many-members": (
        {f"vm/{i}.txt": b"" for i in range(3000)},
        ["more than 1024 members"],
        2 * MiB,
    ),
}


@pytest.mark.parametrize("case", BOMBS)
def test_tar_bombs_are_refused_in_little_memory(tmp_path: Path, case: str) -> None:
    """The real CLI, in 1 GiB of address space; its 120 s limit is a hang guard."""
    members, needles, _ = BOMBS[case]
    bomb = _tar(tmp_path / "bomb.tar.gz", members)
    assert bomb.stat().st_size < 2 * MiB
    _assert_bad_bundle(_bounded("audit", "--bundle", str(bomb)), bomb, *needles)


@pytest.mark.parametrize("case", BOMBS)
def test_tar_bombs_are_refused_at_the_bound(
    tmp_path: Path, case: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What makes a refusal quick, counted: the bytes unpacked before it (not its time)."""
    from rocmprov.collect import bundle_io

    members, needles, most = BOMBS[case]
    bomb = _tar(tmp_path / "bomb.tar.gz", members)
    unpacked = [0]
    decompressed = bundle_io._decompressed

    class Counted(io.RawIOBase):
        def __init__(self, inner: io.RawIOBase) -> None:
            self.inner = inner

        def readable(self) -> bool:
            return True

        def read(self, size: int = -1) -> bytes:
            data = self.inner.read(size)
            unpacked[0] += len(data)
            return data

        def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
            data = self.read(len(buffer))
            buffer[: len(data)] = data
            return len(data)

    monkeypatch.setattr(bundle_io, "_decompressed", lambda raw: Counted(decompressed(raw)))
    with pytest.raises(InputError) as info:
        read_bundle(bomb)
    assert unpacked[0] <= most, f"{unpacked[0] / MiB:.0f} MiB unpacked before the refusal"
    assert all(n in str(info.value) for n in needles), str(info.value)


def test_big_file_in_a_directory_bundle_is_refused(tmp_path: Path) -> None:
    d = tmp_path / "b"
    d.mkdir()
    (d / "manifest.json").write_bytes(_manifest())
    with open(d / "uname.out", "wb") as fh:
        fh.truncate(4 << 30)  # sparse: 4 GiB that cost nothing on disk
    run = _bounded("audit", "--bundle", str(d))
    _assert_bad_bundle(run, d, "uname.out", "16 MiB")


# --- 12. special files ----------------------------------------------------------------------------


@pytest.fixture
def good_dir(tmp_path: Path) -> Iterator[Path]:
    d = tmp_path / "b"
    d.mkdir()
    (d / "manifest.json").write_bytes(_manifest())
    (d / "uname.out").write_text("6.8.0-31-generic\n")
    yield d


def test_symlinked_probe_file_is_not_read(good_dir: Path, tmp_path: Path) -> None:
    secret = tmp_path / "secret"
    secret.write_text("SECRET-OUTSIDE-THE-BUNDLE\n")
    (good_dir / "uname.out").unlink()
    (good_dir / "uname.out").symlink_to(secret)
    with pytest.raises(InputError, match=r"uname\.out is a symbolic link"):
        read_bundle(good_dir)
    run = _bounded("audit", "--bundle", str(good_dir), "--format", "json")
    _assert_bad_bundle(run, good_dir, "symbolic link")
    assert "SECRET" not in run.stdout + run.stderr


def test_symlinked_manifest_and_bundle_subdir_are_not_followed(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (real / "manifest.json").write_bytes(_manifest())
    (real / "uname.out").write_text("6.8.0\n")
    outer = tmp_path / "outer"
    outer.mkdir()
    (outer / "host").symlink_to(real)  # the one "subdirectory" is a link to elsewhere
    with pytest.raises(InputError, match=r"no manifest\.json"):
        read_bundle(outer)
    d = tmp_path / "d"
    d.mkdir()
    (d / "manifest.json").symlink_to(real / "manifest.json")
    with pytest.raises(InputError, match=r"manifest\.json is a symbolic link"):
        read_bundle(d)


def test_fifo_manifest_does_not_hang(good_dir: Path) -> None:
    (good_dir / "manifest.json").unlink()
    os.mkfifo(good_dir / "manifest.json")
    run = _bounded("audit", "--bundle", str(good_dir), timeout=120)
    _assert_bad_bundle(run, good_dir, "manifest.json is a FIFO")


def test_fifo_probe_output_does_not_hang(good_dir: Path) -> None:
    (good_dir / "uname.out").unlink()
    os.mkfifo(good_dir / "uname.out")
    run = _bounded("audit", "--bundle", str(good_dir), timeout=120)
    _assert_bad_bundle(run, good_dir, "uname.out is a FIFO")


def test_device_node_as_manifest_is_refused(good_dir: Path) -> None:
    (good_dir / "manifest.json").unlink()
    os.mknod(good_dir / "manifest.json", 0o600 | stat.S_IFCHR, os.makedev(1, 5))  # /dev/zero
    run = _bounded("audit", "--bundle", str(good_dir), timeout=120)
    _assert_bad_bundle(run, good_dir, "character device")


@pytest.mark.parametrize("target", ["/dev/zero", "/dev/null"])
def test_device_as_bundle_is_refused(target: str) -> None:
    run = _bounded("audit", "--bundle", target, timeout=120)
    _assert_bad_bundle(run, Path(target), "character device")


def test_fifo_as_bundle_is_refused(tmp_path: Path) -> None:
    fifo = tmp_path / "bundle.tar.gz"
    os.mkfifo(fifo)
    run = _bounded("audit", "--bundle", str(fifo), timeout=120)
    _assert_bad_bundle(run, fifo, "FIFO")


def test_tar_member_that_is_a_link_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "b.tar.gz"
    with tarfile.open(path, "w:gz") as tar:
        data = _manifest()
        info = tarfile.TarInfo("vm/manifest.json")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
        link = tarfile.TarInfo("vm/uname.out")
        link.type, link.linkname = tarfile.SYMTYPE, "/etc/shadow"
        tar.addfile(link)
    with pytest.raises(InputError, match=r"vm/uname\.out is not a regular file"):
        read_bundle(path)


# --- 13. bad manifests, truncated archives, read-only output --------------------------------------


@pytest.mark.parametrize(
    ("probes", "needle"),
    [
        (b'[{"id": "uname", "rc": 1e400}]', '"rc" is Infinity'),
        (b'[{"id": "uname", "rc": NaN}]', '"rc" is NaN'),
        (b'[{"id": "uname", "rc": "0"}]', '"rc" is "0"'),
        (b'[{"id": "uname"}]', '"rc" is null'),
        (b"5", '"probes" is 5, not a list'),
        (b'["x"]', 'probes[0] is "x"'),
        (b'[{"id": "../../etc/passwd", "rc": 0}]', "not a probe id"),
        (b'[], "host": 5', '"host" is 5'),
        (b'[{"id": "uname", "rc": 0, "duration": 1e999}]', '"duration" is Infinity'),
        (b'[{"id": "uname", "rc": 0, "command": []}]', '"command" is []'),
        (b'[{"id": "uname", "rc": 0}, {"id": "uname", "rc": 1}]', "listed twice"),
        (b'[{"id": "uname", "rc": 1' + b"0" * 5000 + b"}]", "not JSON"),
        (b"[" * 100000, "not JSON"),
        (b"[]}\xff\xfe", "not JSON"),
    ],
)
def test_bad_manifest_values_give_one_clear_line(
    good_dir: Path, probes: bytes, needle: str
) -> None:
    (good_dir / "manifest.json").write_bytes(
        b'{"schema": "rocmprov.bundle/1", "probes": ' + probes + b"}"
    )
    run = rocmprov("audit", "--bundle", str(good_dir))
    _assert_bad_bundle(run, good_dir, needle)


def test_truncated_gzip_names_the_path(tmp_path: Path) -> None:
    whole = tmp_path / "whole.tar.gz"
    _tar(whole, {"vm/manifest.json": _manifest(), "vm/uname.out": b"6.8.0\n" * 5000})
    assert read_bundle(whole).host == "h"
    cut = tmp_path / "cut.tar.gz"
    cut.write_bytes(whole.read_bytes()[: whole.stat().st_size // 2])
    run = rocmprov("audit", "--bundle", str(cut))
    _assert_bad_bundle(run, cut, "truncated")
    corrupt = tmp_path / "corrupt.tar.gz"
    data = bytearray(whole.read_bytes())
    data[len(data) // 2] ^= 0xFF
    corrupt.write_bytes(bytes(data))
    run = rocmprov("audit", "--bundle", str(corrupt))
    _assert_bad_bundle(run, corrupt)


def _in_read_only_mount(mount: Path, *argv: str) -> Run:
    if not shutil.which("unshare"):
        pytest.skip("no unshare(1) to mount a read-only filesystem")
    mount.mkdir()
    proc = subprocess.run(
        [
            "unshare",
            "-m",
            "sh",
            "-c",
            'mount -t tmpfs -o ro,size=64k rocmprov-ro "$1" || exit 99; shift; exec "$@"',
            "sh",
            str(mount),
            sys.executable,
            "-m",
            "rocmprov",
            *argv,
        ],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=120,
        check=False,
        env={**os.environ, "NO_COLOR": "1"},
    )
    if proc.returncode == 99:
        pytest.skip(f"cannot mount a read-only tmpfs here: {proc.stderr.strip()}")
    return Run(proc.returncode, proc.stdout, proc.stderr)


@pytest.mark.parametrize("sub", ["", "new/dir"])
def test_collect_on_a_read_only_filesystem_fails_before_collecting(
    tmp_path: Path, sub: str
) -> None:
    mount = tmp_path / "ro"
    out = mount / sub if sub else mount
    run = _in_read_only_mount(mount, "collect", "-o", str(out), "--tar")
    assert run.rc == Exit.USAGE, run
    assert_one_line_error(run)
    assert "internal error" not in run.stderr
    assert str(out) in run.stderr and "Read-only file system" in run.stderr


def test_output_path_that_is_a_file_is_a_usage_error(tmp_path: Path) -> None:
    f = tmp_path / "f"
    f.write_text("x")
    run = rocmprov("collect", "-o", str(f))
    assert run.rc == Exit.USAGE
    assert_one_line_error(run)
    assert "not a directory" in run.stderr
