"""Where apply's ssh connection-sharing sockets live (ssh's ControlPath).

A Unix socket's path holds at most 107 bytes (sockaddr_un.sun_path is 108 with its NUL), and
ssh first binds the master's socket at the path plus "." and 16 random characters before it
renames it. Ansible's default directory (~/.ansible/cp) under a long home directory (a cluster's
/gpfs/home/department/user) leaves too little room: every host then fails to connect with
"too long for Unix domain socket". So the directory is the first of these that leaves room: the
caller's ANSIBLE_SSH_CONTROL_PATH_DIR, ~/.ansible/cp, $XDG_RUNTIME_DIR/rocmprov-ssh,
/tmp/rocmprov-ssh-UID; it is created 0700 and must belong to this user (a directory another
user made in /tmp is refused, not used).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from pathlib import Path

from rocmprov.exitcodes import UsageError
from rocmprov.store.atomic import open_private_dir

SUN_PATH_MAX = 107  # bytes of a socket path, without the NUL
SSH_TEMP_SUFFIX = len(".") + 16  # ssh binds "<ControlPath>.<16 random>" and renames it
DIGEST_CHARS = 10
HOST_HASH_CHARS = 40  # ssh's %C: SHA-1 of local host, host, port, user (and jump host), in hex
NAME_CHARS = DIGEST_CHARS + len("-") + HOST_HASH_CHARS


def fits(directory: Path) -> bool:
    """Whether a master socket in `directory` stays within the socket path limit."""
    room = len(os.fsencode(str(directory))) + len("/") + NAME_CHARS + SSH_TEMP_SUFFIX
    return room <= SUN_PATH_MAX


def candidates(home: Path, env: Mapping[str, str], uid: int) -> list[Path]:
    """Directories for the sockets, in order of preference (see the module doc)."""
    found = []
    if env.get("ANSIBLE_SSH_CONTROL_PATH_DIR"):
        found.append(Path(env["ANSIBLE_SSH_CONTROL_PATH_DIR"]).expanduser())
    found.append(home / ".ansible" / "cp")
    runtime = env.get("XDG_RUNTIME_DIR", "")
    if runtime.startswith("/"):
        found.append(Path(runtime) / "rocmprov-ssh")
    found.append(Path("/tmp") / f"rocmprov-ssh-{uid}")
    return found


def control_dir(
    home: Path | None = None, env: Mapping[str, str] | None = None, uid: int | None = None
) -> Path:
    """The first candidate short enough, created private; UsageError when none can be used."""
    home = Path.home() if home is None else home
    env = os.environ if env is None else env
    uid = os.geteuid() if uid is None else uid
    refused = []
    for directory in candidates(home, env, uid):
        if not directory.is_absolute() or not fits(directory):
            continue
        try:
            os.close(open_private_dir(directory))
        except OSError as exc:
            refused.append(f"{directory} ({exc.strerror or exc})")
            continue
        return directory
    why = "; ".join(refused) or "every candidate path is too long for a Unix socket"
    longest = SUN_PATH_MAX - NAME_CHARS - SSH_TEMP_SUFFIX - 1
    raise UsageError(
        f"no directory for ssh's connection sockets: {why}; set ANSIBLE_SSH_CONTROL_PATH_DIR "
        f"to a private directory whose path has at most {longest} characters"
    )


def control_path(inventory: Path, known_hosts: Path | None = None) -> str:
    """ssh's ControlPath for this run: connections are reused between runs of the same inventory
    and known_hosts only. A master opened before the inventory (its ssh args, e.g. another
    UserKnownHostsFile) or ~/.ssh/known_hosts changed would skip the host key check that the new
    settings ask for, so those changes start new masters."""
    known_hosts = Path.home() / ".ssh" / "known_hosts" if known_hosts is None else known_hosts
    digest = hashlib.sha256(str(inventory).encode())
    for path in (inventory, known_hosts):
        try:
            st = path.stat()
            digest.update(f"{path}:{st.st_mtime_ns}:{st.st_size}".encode())
        except OSError:
            digest.update(f"{path}:absent".encode())
    # ansible formats it with %(directory)s; ssh then expands %C (hash of host, port, user)
    return f"%(directory)s/{digest.hexdigest()[:DIGEST_CHARS]}-%%C"


def control_env(inventory: Path) -> dict[str, str]:
    """The two ansible settings that place this run's sockets."""
    return {
        "ANSIBLE_SSH_CONTROL_PATH_DIR": str(control_dir()),
        "ANSIBLE_SSH_CONTROL_PATH": control_path(inventory),
    }
