"""Collect every probe of one host over SSH with ONE remote script on ONE exec channel.

The script runs each probe under its own coreutils `timeout` (rc 124), captures its stdout and
stderr in a private temp dir, and prints them between marker lines that carry a random
per-run nonce (a probe cannot forge one). Times come from /proc/uptime (a shell builtin read,
no fork). Root-needing probes run under `sudo -n` when become is set and the login user is not
root; sudo is tried once first, and a refusal fails the host (SUDO_DENIED) before any probe.
The result is the same `Bundle` as `collect_host` builds probe by probe.
"""

from __future__ import annotations

import re
import secrets
import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from functools import lru_cache

from rocmprov.collect.bundle import Bundle, ProbeOutput
from rocmprov.collect.probes import Probe
from rocmprov.transport.base import FailureClass, HostUnreachable
from rocmprov.transport.ssh import KILL_GRACE, TIMEOUT_RC, SSHTransport, _secs, decode

SCRIPT_SLACK = 30.0  # on top of the probes' own timeouts (and kill grace) for the whole script
_ID = re.compile(r"[A-Za-z0-9._-]+")
_NO_TMP_RC = 70


class ProbeTimeout(HostUnreachable):
    """The script outlived every probe's timeout (a probe stuck where no kill reaches it).
    `partial` holds what was collected before; `probe` the one that did not finish."""

    def __init__(self, host: str, message: str, partial: Bundle, probe: str) -> None:
        super().__init__(host, FailureClass.PROBE_TIMEOUT, message)
        self.partial = partial
        self.probe = probe


@dataclass
class Parsed:
    """What the script printed, split back per probe."""

    outputs: dict[str, ProbeOutput] = field(default_factory=dict)
    started: bool = False
    done: bool = False
    running: str = ""  # the probe begun but not ended (when the output stops early)
    sudo_error: str | None = None
    no_tmp: bool = False


def build_script(probes: Sequence[Probe], nonce: str, *, sudo_argv: Sequence[str] = ()) -> str:
    """The POSIX sh script for `probes`. sudo_argv (e.g. sudo -n --) prefixes root probes."""
    mark = f"@@rocmprov-{nonce}"
    return f"M={shlex.quote(mark)}\n" + _script_body(tuple(probes), tuple(sudo_argv))


@lru_cache(maxsize=64)
def _script_body(probes: tuple[Probe, ...], sudo_argv: tuple[str, ...]) -> str:
    """Everything after the marker line: the same for every host of a fleet audit (built once;
    the nonce is only in `M=`)."""
    lines = [
        "up() { { read -r U _ </proc/uptime; } 2>/dev/null || U=0; }",
        "T=",
        'for d in "${TMPDIR:-/tmp}" /tmp /dev/shm /var/tmp "$HOME"; do',
        '  T=$(mktemp -d "$d/rocmprov.XXXXXX" 2>/dev/null) && break; T=',
        "done",
        f'[ -n "$T" ] || {{ echo "$M notmp"; exit {_NO_TMP_RC}; }}',
        "trap 'rm -rf \"$T\"' EXIT",
        "trap 'exit 130' HUP INT TERM",
        "TO=; command -v timeout >/dev/null 2>&1 && TO=1",
        # rp0/rp1 SECONDS ARGV...: a probe under timeout; rp1 under sudo (timeout inside sudo,
        # so that it can kill what runs as root)
        *(
            f'rp{n}() {{ t=$1; shift; if [ -n "$TO" ]; '
            f'then {pre}timeout -k {KILL_GRACE} "$t" "$@"; else {pre}"$@"; fi; }}'
            for n, pre in ((0, ""), (1, shlex.join(sudo_argv) + " " if sudo_argv else ""))
        ),
        'up; echo "$M start $U"',
    ]
    root_probes = bool(sudo_argv) and any(p.needs_root for p in probes)
    if root_probes:
        check = shlex.join([*sudo_argv, "true"])
        lines.append(
            f'if ! {check} </dev/null >"$T/e" 2>&1; then '
            'echo "$M sudo"; cat "$T/e"; echo; echo "$M sudo-end"; exit 0; fi'
        )
    for probe in probes:
        if not _ID.fullmatch(probe.id):
            raise ValueError(f"probe id {probe.id!r} is not [A-Za-z0-9._-]+")
        root = 1 if root_probes and probe.needs_root else 0
        argv = shlex.join(["/bin/sh", "-c", probe.command])
        pid = probe.id
        lines += [
            f'up; A=$U; echo "$M begin {pid}"',
            f'rp{root} {_secs(probe.timeout)} {argv} </dev/null >"$T/o" 2>"$T/e"; R=$?',
            f'up; echo "$M out {pid}"; cat "$T/o"; echo; echo "$M err {pid}"; cat "$T/e"; echo',
            f'echo "$M end {pid} $R $A $U"',
        ]
    lines.append('echo "$M done"')
    return "\n".join(lines) + "\n"


def parse_output(
    text: str, probes: Sequence[Probe], nonce: str, *, started_at: datetime | None = None
) -> Parsed:
    """Split the script's stdout back into ProbeOutputs (stdout/stderr exact, byte for byte)."""
    parts = split_marked(text, f"@@rocmprov-{nonce} ")
    by_id = {p.id: p for p in probes}
    parsed = Parsed()
    t0: float | None = None
    bodies: dict[str, str] = {}
    for i in range(1, len(parts), 2):
        words = parts[i].split()
        body = parts[i + 1] if i + 1 < len(parts) else ""
        kind, args = (words[0], words[1:]) if words else ("", [])
        if kind == "start":
            parsed.started = True
            t0 = _float(args[0]) if args else None
        elif kind == "notmp":
            parsed.no_tmp = True
        elif kind == "sudo":
            parsed.sudo_error = _strip_one(body)
        elif kind == "begin" and args:
            parsed.running = args[0]
        elif kind in ("out", "err") and args:
            bodies[f"{kind} {args[0]}"] = _strip_one(body)
        elif kind == "end" and len(args) == 4 and args[0] in by_id:
            probe = by_id[args[0]]
            parsed.outputs[probe.id] = _output(probe, args[1:], bodies, t0, started_at)
            parsed.running = ""
        elif kind == "done":
            parsed.done = True
    return parsed


def split_marked(text: str, head: str) -> list[str]:
    """re.split(rf"^{re.escape(head)}([^\\n]*)\\n", text, flags=re.MULTILINE), by str.find: [before,
    line, body, line, body, ...] where a marker line starts a line with `head` and ends with a
    newline. No regex compiled per host (the head holds each host's nonce)."""
    parts: list[str] = []
    chunk = 0  # where the current body starts
    at = text.find(head)
    while at != -1:
        if at == 0 or text[at - 1] == "\n":
            nl = text.find("\n", at + len(head))
            if nl == -1:  # a marker line needs its newline; none follows, nor any later
                break
            parts += [text[chunk:at], text[at + len(head) : nl]]
            chunk = nl + 1
            at = text.find(head, chunk)
        else:
            at = text.find(head, at + 1)
    parts.append(text[chunk:])
    return parts


def _output(
    probe: Probe,
    args: list[str],
    bodies: dict[str, str],
    t0: float | None,
    started_at: datetime | None,
) -> ProbeOutput:
    rc = int(args[0]) if args[0].lstrip("-").isdigit() else 1
    begin, end = _float(args[1]), _float(args[2])
    duration = max(0.0, end - begin) if begin is not None and end is not None else 0.0
    stderr = bodies.get(f"err {probe.id}", "")
    if rc in (TIMEOUT_RC, 128 + 9) and duration >= probe.timeout - 0.02:
        rc = TIMEOUT_RC  # KILLed after the grace: still "timed out"
        stderr += f"\nrocmprov: timed out after {probe.timeout:g}s"
    stamp = ""
    if started_at is not None and t0 is not None and begin is not None:
        stamp = (started_at + timedelta(seconds=max(0.0, begin - t0))).isoformat("T", "seconds")
    return ProbeOutput(
        probe.id, probe.command, rc, bodies.get(f"out {probe.id}", ""), stderr, duration, stamp
    )


def _strip_one(body: str) -> str:
    """The script prints one newline after each captured file; take exactly that one off."""
    return body[:-1] if body.endswith("\n") else body


def _float(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def script_deadline(probes: Sequence[Probe]) -> float:
    """Seconds the whole script may take: every probe's timeout and kill grace, plus slack."""
    return sum(p.timeout + KILL_GRACE for p in probes) + SCRIPT_SLACK


def collect_remote(
    transport: SSHTransport,
    probes: Sequence[Probe],
    *,
    extra: dict | None = None,
    deadline: float | None = None,
) -> Bundle:
    """All `probes` of one host in one exec channel; the same Bundle as `collect_host`.

    Raises HostUnreachable: the connection's own failures, SUDO_DENIED, DISCONNECTED (the
    script died before its end), ERROR (no writable temp dir), or ProbeTimeout (PROBE_TIMEOUT,
    with the partial bundle) when the script outlives `deadline` (default: script_deadline).
    """
    nonce = secrets.token_hex(16)
    sudo_argv = transport.sudo_argv() if transport.uses_sudo else []
    script = build_script(probes, nonce, sudo_argv=sudo_argv)
    limit = deadline if deadline is not None else script_deadline(probes)
    started_at = datetime.now(UTC)
    res = transport.exec("/bin/sh -s", stdin=script.encode(), timeout=limit)
    parsed = parse_output(decode(res.stdout), probes, nonce, started_at=started_at)
    bundle = Bundle(host=transport.host, outputs=parsed.outputs, meta=dict(extra or {}))
    host = transport.host
    if parsed.sudo_error is not None:
        line = parsed.sudo_error.strip().splitlines()
        raise HostUnreachable(
            host, FailureClass.SUDO_DENIED, (line[0] if line else "sudo -n failed").strip()
        )
    if parsed.no_tmp:
        raise HostUnreachable(host, FailureClass.ERROR, "no writable temp dir on the host")
    if res.timed_out:
        stuck = parsed.running or "?"
        raise ProbeTimeout(
            host,
            f"probe {stuck} still running when the host's {limit:g}s deadline passed "
            f"({len(parsed.outputs)}/{len(probes)} probes collected)",
            bundle,
            stuck,
        )
    if not parsed.done:
        where = f" during probe {parsed.running}" if parsed.running else ""
        why = decode(res.stderr).strip().splitlines()
        detail = f": {why[-1]}" if why and not parsed.started else ""
        raise HostUnreachable(
            host,
            FailureClass.DISCONNECTED,
            f"collection script ended early{where} (rc {res.rc}, "
            f"{len(parsed.outputs)}/{len(probes)} probes){detail}",
        )
    return bundle
