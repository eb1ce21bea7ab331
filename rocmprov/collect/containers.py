"""The container probes (ids are a bundle contract, like collect/probes.py's): runtimes and the
AMD Container Toolkit, their configuration files, the CDI specs with the device nodes that
exist now, and `docker info`. Each prints sections `== <what> <path>`; parse/containers.py
reads them. A host with none of it prints nothing and exits 0 (the checks say "not applicable").
"""

from __future__ import annotations

# Version commands: client binaries only (no daemon is asked), each cut to 2 KiB and 10 s.
# amd-ctk has no --version flag (its CLI sets no Version): `amd-ctk version` prints
# "Version: X / Build Date: Y / GitCommit: Z" (rocmprov/data/containers.yaml).
TOOLS = (
    "docker",
    "dockerd",
    "podman",
    "containerd",
    "nerdctl",
    "crun",
    "runc",
    "amd-ctk",
    "amd-container-runtime",
)
_TOOLS = (
    f"for t in {' '.join(TOOLS)}; do "
    'p=$(command -v "$t" 2>/dev/null) || { [ -x "/usr/local/bin/$t" ] && p=/usr/local/bin/$t; } '
    "|| continue; "
    'echo "== tool $t $p"; '
    'case "$t" in '
    "amd-container-runtime) ;; "
    'amd-ctk) timeout 10 "$p" version 2>&1 | head -c 2048;; '
    'crun|runc) timeout 10 "$p" --version 2>&1 | head -n 1;; '
    '*) timeout 10 "$p" --version 2>&1 | head -c 2048;; '
    "esac; echo; done; exit 0"
)

# Configuration that decides how containers get GPUs: Docker's daemon.json, containers.conf
# (comments left out; the distribution's own file is mostly comments), the subordinate ids
# rootless Podman needs, the docker group, and rocmprov's CDI refresh unit.
_CONFIG = (
    "for f in /etc/docker/daemon.json; do "
    '[ -f "$f" ] && { echo "== file $f"; head -c 65536 "$f"; echo; }; done; '
    "for f in /usr/share/containers/containers.conf /etc/containers/containers.conf "
    "/etc/containers/containers.conf.d/*.conf; do "
    '[ -f "$f" ] || continue; echo "== conf $f"; '
    "grep -v -E '^[[:space:]]*(#|$)' \"$f\" 2>/dev/null | head -c 65536; done; "
    "for f in /etc/subuid /etc/subgid; do "
    '[ -f "$f" ] && { echo "== ids $f"; head -c 65536 "$f"; }; done; '
    'g=$(getent group docker) && echo "== group $g"; '
    "command -v systemctl >/dev/null 2>&1 && "
    'echo "== unit rocmprov-cdi-refresh.service $(systemctl is-enabled '
    'rocmprov-cdi-refresh.service 2>/dev/null)"; exit 0'
)

# Every CDI spec in the default directories (the CDI library reads *.json and *.yaml), each
# cut at 256 KiB, 32 files a directory at most, other files listed by name; then the GPU
# device nodes with their numbers (stat %t/%T, as amd-ctk reads them) and the driver behind
# each DRM node, so the checks can tell a stale spec (and leave another vendor's card0 alone).
_CDI = (
    'for d in /etc/cdi /var/run/cdi; do n=0; for f in "$d"/*; do '
    '[ -f "$f" ] || continue; n=$((n+1)); '
    '[ "$n" -gt 32 ] && { echo "== more $d"; break; }; case "$f" in '
    '*.json|*.yaml) echo "== spec $f $(wc -c < "$f")"; head -c 262144 "$f"; echo;; '
    '*) echo "== other $f";; esac; done; done; '
    "echo '== nodes'; "
    'for n in /dev/kfd /dev/dri/*; do [ -e "$n" ] || continue; '
    'd=$(readlink -f "/sys/class/drm/${n##*/}/device/driver" 2>/dev/null); '
    's=$(stat -c \'%n|%F|%t|%T|%a|%U|%G|%g\' "$n" 2>/dev/null) && echo "$s|${d##*/}"; '
    "done; exit 0"
)

# `docker info` over the daemon's socket (root, or the docker group): the server version, the
# CDI spec directories (none when CDI is off), runtimes, discovered CDI devices. `{{json .}}`
# works on every Docker version (`--format json` only from 23.0).
_DOCKER_INFO = (
    "command -v docker >/dev/null 2>&1 || { echo docker: not installed >&2; exit 127; }; "
    "timeout 20 docker info --format '{{json .}}' 2>&1 | head -c 262144"
)

CONTAINER_PROBE_IDS = ("containers", "container-config", "cdi-specs", "docker-info")


# (id, what it reads, command, needs root): collect/probes.py makes each a Probe
CONTAINER_PROBES: tuple[tuple[str, str, str, bool], ...] = (
    ("containers", "container runtimes and the AMD Container Toolkit: versions", _TOOLS, False),
    (
        "container-config",
        "daemon.json, containers.conf, subuid/subgid, docker group, CDI refresh unit",
        _CONFIG,
        False,
    ),
    ("cdi-specs", "CDI specs in /etc/cdi and /var/run/cdi; GPU device numbers", _CDI, False),
    ("docker-info", "docker info (server version, CDI directories, runtimes)", _DOCKER_INFO, True),
)
