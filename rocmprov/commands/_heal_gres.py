"""Per-GPU isolation for `rocmprov heal`: the file edits of gate/gres.py carried out over the
node's and the Slurm host's transports, then the daemons restarted as Slurm documents for a GRES
count ("modify your slurm.conf and gres.conf files and restart daemons", scontrol(1)):
slurmctld, then the node's slurmd; the new count is awaited."""

from __future__ import annotations

import base64
import contextlib
import json
import re
import shlex
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rocmprov.gate.gres import GresError, change_count, isolate_files, isolated_list, restore_files
from rocmprov.gate.slurm import SlurmError, parse_show_node
from rocmprov.transport.base import Transport

ISOLATED_FILE = "/etc/rocmprov/isolated-gpus"
READ_MAX = 1024 * 1024
NETWORK_FS = (  # file systems shared between hosts (fuse: sshfs, s3fs and the like)
    "nfs",
    "nfs4",
    "cifs",
    "smb3",
    "lustre",
    "gpfs",
    "ceph",
    "fuse",
    "beegfs",
    "glusterfs",
    "9p",
    "afs",
    "virtiofs",
)
_GRES_SHOWN = re.compile(r"(?<![A-Za-z])Gres=(\S+)")
_SLURMD_START = re.compile(r"(?<![A-Za-z])SlurmdStartTime=(\S+)")


@dataclass(frozen=True)
class GresPaths:
    gres_conf: str = "/etc/slurm/gres.conf"  # on the node
    slurm_conf: str = "/etc/slurm/slurm.conf"  # on the Slurm host (and the node, if another)
    isolated: str = ISOLATED_FILE  # on the node, read by the gate


def read(t: Transport, path: str, *, missing_ok: bool = False) -> str:
    q = shlex.quote(path)
    if missing_ok:
        res = t.run(f"test -e {q} || exit 0; head -c {READ_MAX + 1} -- {q}", timeout=30)
    else:
        res = t.run(f"head -c {READ_MAX + 1} -- {q}", timeout=30)
    if not res.ok:
        raise GresError(f"{t.host}: cannot read {path}: {res.stderr.strip()[:160]}")
    if len(res.stdout) > READ_MAX:
        raise GresError(f"{t.host}: {path} is larger than {READ_MAX} bytes")
    return res.stdout


# Replaces whole lines of a file in place on the host; each old line must be there exactly once,
# or already replaced (its new line there once: a copy shared with another host edited through
# it, a run that stopped after the edit). A link or a file with several hard links is refused
# (a slurm.conf linked to a shared copy is the site's: replacing the link with a file of ours
# would split the cluster's config). The original is kept beside it (.rocmprov-bak, 0600: a
# slurm.conf may hold AccountingStoragePass), the new one written to a temp file beside it
# (owner and mode kept, synced) and renamed over it. Only the changed lines travel, on the
# command line: a NodeName or File= line, never the rest of slurm.conf.
_EDIT = """
import base64, json, os, stat, sys
path = sys.argv[1]
changes = json.loads(base64.b64decode(sys.argv[2]))
st = os.lstat(path)
if stat.S_ISLNK(st.st_mode):
    sys.exit("%s is a link (a shared copy?): edit it where it lives" % path)
if not stat.S_ISREG(st.st_mode) or st.st_nlink != 1:
    sys.exit("%s is not a plain file of one link" % path)
refuse = [f for f in sys.argv[3].split(",") if f]
if refuse:
    real, fs, best = os.path.realpath(path), "", ""
    with open("/proc/self/mountinfo", encoding="utf-8") as fh:
        for row in fh.read(1 << 20).splitlines():
            left, _, right = row.partition(" - ")
            mnt = left.split()[4].replace("\\\\040", " ")
            if (real + "/").startswith(mnt.rstrip("/") + "/") and len(mnt) >= len(best):
                best, fs = mnt, right.split()[0]
    if fs.split(".")[0] in refuse:
        sys.exit("%s is on %s, shared with other nodes?: edit it where it lives" % (path, fs))
fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
with os.fdopen(fd, encoding="utf-8") as fh:
    original = fh.read(4 * 1024 * 1024 + 1)
if len(original) > 4 * 1024 * 1024:
    sys.exit("%s is larger than 4 MiB" % path)
lines = original.split("\\n")
todo = 0
for old, new in changes:
    hits = [i for i, line in enumerate(lines) if line == old]
    if not hits and old != new and lines.count(new) == 1:
        continue
    if len(hits) != 1:
        sys.exit("%s: %d lines match %r" % (path, len(hits), old[:80]))
    lines[hits[0]] = new
    todo += 1
if not todo:
    sys.exit(0)
def put(name, text, mode):
    try:
        os.unlink(name)
    except FileNotFoundError:
        pass
    fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())
        os.fchown(fh.fileno(), st.st_uid, st.st_gid)
        os.fchmod(fh.fileno(), mode)
put(path + ".rocmprov-bak", original, 0o600)
put(path + ".rocmprov-tmp", "\\n".join(lines), stat.S_IMODE(st.st_mode))
os.replace(path + ".rocmprov-tmp", path)
"""


def edit(
    t: Transport, path: str, before: str, after: str, *, refuse_fs: tuple[str, ...] = ()
) -> None:
    """Make `path` on the host go from `before` to `after` (same line count) line by line;
    refused where it lives on a file system of a type in `refuse_fs` (NETWORK_FS: a gres.conf
    there may be every node's)."""
    a, b = before.splitlines(), after.splitlines()
    if len(a) != len(b):
        raise GresError(f"{path}: an edit must keep the line count")
    changes = [(x, y) for x, y in zip(a, b, strict=True) if x != y]
    if not changes:
        return
    blob = base64.b64encode(json.dumps(changes).encode("utf-8")).decode("ascii")
    res = t.run(shlex.join(["python3", "-c", _EDIT, path, blob, ",".join(refuse_fs)]), timeout=30)
    if not res.ok:
        raise GresError(f"{t.host}: cannot edit {path}: {res.stderr.strip()[-160:]}")


def write(t: Transport, path: str, text: str) -> None:
    """Replace `path` (0644) through a temp file beside it and one rename (small files of ours
    with nothing secret in them: the isolated-GPUs list)."""
    data = base64.b64encode(text.encode("utf-8")).decode("ascii")
    q, tmp = shlex.quote(path), shlex.quote(path + ".rocmprov-tmp")
    directory = shlex.quote(path.rsplit("/", 1)[0] or "/")
    cmd = (
        f"mkdir -p {directory} && printf %s {shlex.quote(data)} | base64 -d > {tmp} && "
        f"chmod 0644 {tmp} && mv -f {tmp} {q}"
    )
    res = t.run(cmd, timeout=30)
    if not res.ok:
        raise GresError(f"{t.host}: cannot write {path}: {res.stderr.strip()[:160]}")


def shown_count(show_text: str, name: str = "gpu") -> int | None:
    """The count of `name` in `scontrol show node`'s Gres= (`gpu:3`, `gpu:mi300x:3(S:0)`)."""
    m = _GRES_SHOWN.search(show_text)
    if not m:
        return None
    for part in m.group(1).split(","):
        fields = part.split("(")[0].split(":")
        if fields[0] == name and fields[-1].isdigit():
            return int(fields[-1])
    return None


def change(
    node_t: Transport,
    slurm_t: Transport,
    same_host: bool,
    node: str,
    gpus: Mapping[str, str],
    out: tuple[str, ...] = (),
    back: tuple[str, ...] = (),
    paths: GresPaths | None = None,
    scontrol: str = "scontrol",
) -> int:
    """Take the GPUs `out` out of the node's gres (or put `back` in); the new count. Files are
    all read and edited before any is written: a form heal cannot edit changes nothing."""
    paths = paths or GresPaths()
    gres = read(node_t, paths.gres_conf)
    conf = read(slurm_t, paths.slurm_conf)
    listed = set(isolated_list(read(node_t, paths.isolated, missing_ok=True)))
    if out:
        files = [gpus[b] for b in out]
        new_gres = isolate_files(gres, node, files, {gpus[b]: b for b in out})
        listed |= set(out)
    else:
        new_gres = restore_files(gres, back)
        listed -= set(back)
    delta = -len(out) if out else len(back)
    new_conf, count = change_count(conf, node, delta)
    node_text, node_conf = conf, new_conf
    if not same_host:
        node_text = read(node_t, paths.slurm_conf)
        node_conf, _ = change_count(node_text, node, delta)
    # (host, file, before, after, node-local only): gres.conf lines without NodeName= apply to
    # every node that reads the file, so a gres.conf on a network file system is refused
    edits = [
        (node_t, paths.gres_conf, gres, new_gres, NETWORK_FS),
        (slurm_t, paths.slurm_conf, conf, new_conf, ()),
    ]
    if not same_host:
        edits.append((node_t, paths.slurm_conf, node_text, node_conf, ()))
    header = "# GPUs rocmprov heal took out of Slurm's gres (PCI addresses); the gate skips them\n"
    done: list[tuple[Transport, str, str, str]] = []
    try:
        for t, path, a, b, refuse in edits:
            edit(t, path, a, b, refuse_fs=refuse)
            done.append((t, path, a, b))
        write(node_t, paths.isolated, header + "".join(f"{b}\n" for b in sorted(listed)))
    except GresError:
        for t, path, a, b in reversed(done):  # the files as they were: nothing half done
            with contextlib.suppress(GresError):
                edit(t, path, b, a)
        raise
    # slurmctld first: `scontrol reconfigure` keeps a node's GRES list (22.05's read_config.c
    # carries the old node's gres_list over), only a restart reads the count from slurm.conf;
    # then slurmd, which registers with the new gres.conf
    show = f"LC_ALL=C {shlex.quote(scontrol)} show node {shlex.quote(node)}"
    before = slurmd_started(slurm_t.run(show, timeout=20).stdout)
    _ok(slurm_t, "systemctl restart slurmctld")
    _ok(node_t, "systemctl restart slurmd")
    _await(slurm_t, show, node, count, before)
    return count


def slurmd_started(show_text: str) -> str | None:
    """`scontrol show node`'s SlurmdStartTime (None where absent or `None`)."""
    m = _SLURMD_START.search(show_text)
    return m.group(1) if m and m.group(1) not in ("None", "Unknown", "(null)") else None


def _ok(t: Transport, cmd: str) -> None:
    res = t.run(cmd, timeout=60)
    if not res.ok:
        raise GresError(f"{t.host}: {cmd.split()[-1]} failed: {res.stderr.strip()[:160]}")


def _await(
    t: Transport, show: str, node: str, count: int, before: str | None, timeout: float = 60
) -> bool:
    """Until slurmctld shows the node with `count` GPUs, registered by the restarted slurmd
    (bounded in time and count). slurmctld reads the count from slurm.conf at its restart,
    before the new slurmd answers: meanwhile the node is UNKNOWN+DRAIN, or IDLE+DRAIN as the old
    slurmd registered it and NOT_RESPONDING a moment later. A resume judged on the count alone
    left the node drained or resumed it unanswered: so also a SlurmdStartTime other than
    `before` (where slurmctld shows one) and a state the gate touches. True once registered."""
    deadline = time.monotonic() + timeout
    seen = None
    for _ in range(int(timeout)):
        res = t.run(show, timeout=20)
        seen = shown_count(res.stdout) if res.ok else None
        try:
            shown = parse_show_node(res.stdout, node) if res.ok else None
        except SlurmError:
            shown = None
        fresh = before is None or slurmd_started(res.stdout) not in (None, before)
        if seen == count and fresh and shown is not None and shown.touchable:
            return True
        if time.monotonic() > deadline:
            break
        time.sleep(1)
    if seen != count:
        raise GresError(f"slurmctld shows {node} with gpu:{seen}, not gpu:{count}")
    return False  # the count changed; a node not registered again is the caller's to report


def gpu_map(spec: Any) -> dict[str, str]:
    """hostvar rocmprov_slurm_gpus: {PCI address: gres.conf File=} of the node's GPUs (per-GPU
    isolation is off without it). Entries that are not an address and an absolute path are
    left out."""
    from rocmprov.gate.gres import BDF

    raw = spec.vars.get("rocmprov_slurm_gpus") or {}
    if not isinstance(raw, dict):
        return {}
    return {
        str(k).lower(): str(v)
        for k, v in raw.items()
        if BDF.fullmatch(str(k)) and str(v).startswith("/") and " " not in str(v)
    }
