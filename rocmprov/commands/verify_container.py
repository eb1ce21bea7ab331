"""`rocmprov verify --container IMAGE`: the torch smoke tests (actions/smoke.py) run inside a
container of IMAGE on each host, the GPUs given the way the host is set up: CDI
(`--device amd.com/gpu=all`) where a spec of kind amd.com/gpu exists, else AMD's device flags
(`--device /dev/kfd --device /dev/dri --security-opt seccomp=unconfined`). Groups: the host's
numeric render/video GIDs (an image may have no `render` group), or `--group-add keep-groups`
for rootless Podman. A host with no /dev/kfd is told plainly: no GPU, nothing to run.
Facts and sources: rocmprov/data/containers.yaml.
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import sys
from dataclasses import dataclass
from importlib import resources
from typing import Any

from rocmprov.actions.verify import VerifyReport, parse_smoke
from rocmprov.exitcodes import UsageError
from rocmprov.model import Severity
from rocmprov.transport.base import Transport

SCHEMA = "rocmprov.verify-container/1"
ENGINES = ("auto", "docker", "podman")
METHODS = ("auto", "cdi", "devices")
NO_GPU_RC = 90
NO_ENGINE_RC = 91
# An image reference: registry/name:tag@digest characters only (it goes into a shell line).
_IMAGE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/:@+-]{0,255}$")
_CHOSEN = re.compile(r"^rocmprov-container: engine=(\S+) method=(\S+)$", re.M)


@dataclass(frozen=True)
class ContainerReport:
    host: str
    image: str
    engine: str = ""
    method: str = ""
    smoke: VerifyReport | None = None
    note: str = ""  # why nothing ran in a container (no GPU, no engine)

    @property
    def severity(self) -> Severity:
        return self.smoke.severity if self.smoke is not None else Severity.UNKNOWN

    def to_dict(self) -> dict[str, Any]:
        return {
            "host": self.host,
            "image": self.image,
            "engine": self.engine,
            "method": self.method,
            "severity": self.severity.value,
            "note": self.note,
            "smoke": self.smoke.to_dict() if self.smoke is not None else None,
        }


def check_image(image: str) -> str:
    if not _IMAGE.match(image):
        raise UsageError(f"--container: not an image reference: {image!r}")
    return image


def host_script(image: str, engine: str = "auto", method: str = "auto",
                python: str = "python3") -> str:  # fmt: skip
    """The POSIX sh run on the host: no GPU -> exit 90 with a plain sentence; picks the engine
    and the method, says which on stderr, then runs the smoke script in a fresh container."""
    if engine not in ENGINES or method not in METHODS:
        raise ValueError(f"engine {engine!r} / method {method!r}")
    smoke = resources.files("rocmprov.actions").joinpath("smoke.py").read_text(encoding="utf-8")
    q = shlex.quote
    return f"""set -u
if [ ! -e /dev/kfd ]; then
  echo "no /dev/kfd on this host: no AMD GPU (or amdgpu not loaded), so no container" \
    "can get one; the container smoke test needs a GPU and did not run"
  exit {NO_GPU_RC}
fi
engine={q(engine)}
if [ "$engine" = auto ]; then
  if command -v docker >/dev/null 2>&1; then engine=docker
  elif command -v podman >/dev/null 2>&1; then engine=podman
  else echo "no container engine (docker, podman) on this host"; exit {NO_ENGINE_RC}; fi
fi
if ! command -v "$engine" >/dev/null 2>&1; then
  echo "$engine is not installed on this host"; exit {NO_ENGINE_RC}
fi
method={q(method)}
if [ "$method" = auto ]; then
  method=devices
  for f in /etc/cdi/*.json /etc/cdi/*.yaml /var/run/cdi/*.json /var/run/cdi/*.yaml; do
    [ -f "$f" ] || continue
    k=$(grep -c 'amd.com/gpu' "$f" 2>/dev/null) || k=0
    [ "$k" -gt 0 ] && {{ method=cdi; break; }}
  done
fi
if [ "$method" = cdi ]; then
  set -- --device amd.com/gpu=all
else
  set -- --device /dev/kfd --device /dev/dri --security-opt seccomp=unconfined
fi
if [ "$engine" = podman ] && [ "$(id -u)" != 0 ]; then
  set -- "$@" --group-add keep-groups
else
  for g in render video; do
    gid=$(getent group "$g" | cut -d: -f3)
    [ -n "$gid" ] && set -- "$@" --group-add "$gid"
  done
fi
echo "rocmprov-container: engine=$engine method=$method" >&2
exec "$engine" run --rm --ipc=host "$@" {q(image)} {q(python)} -c {q(smoke)}
"""


def parse_container(host: str, image: str, python: str, rc: int, stdout: str,
                    stderr: str) -> ContainerReport:  # fmt: skip
    """Pure: what the host script printed -> ContainerReport."""
    if rc in (NO_GPU_RC, NO_ENGINE_RC):
        return ContainerReport(host, image, note=(stdout.strip() or stderr.strip())[:500])
    chosen = _CHOSEN.search(stderr)
    engine, method = (chosen[1], chosen[2]) if chosen else ("", "")
    rest = _CHOSEN.sub("", stderr).strip()
    smoke = parse_smoke(host, f"{python} in {image}", rc, stdout, rest)
    return ContainerReport(host, image, engine, method, smoke)


def run_container(transport: Transport, image: str, *, engine: str = "auto",
                  method: str = "auto", python: str = "python3",
                  timeout: float = 1800) -> ContainerReport:  # fmt: skip
    script = host_script(image, engine, method, python)
    res = transport.run(f"sh -c {shlex.quote(script)}", timeout=timeout)
    return parse_container(transport.host, image, python, res.rc, res.stdout, res.stderr)


def run(args: argparse.Namespace) -> int:
    """verify --container: --local or every host of the inventory; table or JSON."""
    image = check_image(args.container)
    python = args.python or "python3"
    opts = {"engine": args.engine, "method": args.method, "python": python}
    if args.local:
        from rocmprov.transport.local import LocalTransport

        reports = [run_container(LocalTransport(), image, **opts)]
    else:
        reports = list(_inventory(args, image, opts))
    worst = max((r.severity for r in reports), key=lambda s: s.rank)
    if args.format == "json":
        doc = {
            "schema": SCHEMA,
            "exit_code": int(worst.exit_code),
            "hosts": [r.to_dict() for r in reports],
        }
        sys.stdout.write(json.dumps(doc, indent=2) + "\n")
    else:
        _table(reports)
    return int(worst.exit_code)


def _inventory(args: argparse.Namespace, image: str, opts: dict[str, str]) -> Any:
    from rocmprov.fleet.fanout import per_host
    from rocmprov.transport.base import HostUnreachable
    from rocmprov.transport.ssh import SSHTransport

    def one(spec: Any, options: Any) -> ContainerReport:
        try:
            with SSHTransport.from_spec(spec, options) as transport:
                return run_container(transport, image, **opts)
        except HostUnreachable as exc:
            return ContainerReport(spec.name, image, note=f"{exc.failure.value}: {exc.message}")

    from rocmprov.commands._options import fleet_options

    yield from per_host(fleet_options(args), one)


def _table(reports: list[ContainerReport]) -> None:
    from rich.console import Console
    from rich.text import Text

    from rocmprov.report.safe import printable

    console = Console(highlight=False, markup=False, width=None if sys.stdout.isatty() else 140)
    for r in reports:
        head = f"{r.host}: {r.image}"
        if r.engine:
            how = "CDI amd.com/gpu=all" if r.method == "cdi" else "device flags"
            head += f" ({r.engine}, {how})"
        console.print(Text(printable(head), style="bold"))
        if r.note:
            console.print(Text(printable(f"  {r.note}"), style="yellow"))
        s = r.smoke
        if s is not None:
            if s.error:
                console.print(Text(printable(f"  {s.error}"), style="red"))
            for t in s.results:
                line = f"  {t.test:<8} {t.status:<5} {t.seconds:8.3f}  {t.detail}"
                console.print(Text(printable(line)))
            if s.causes:
                console.print(Text(f"  known causes: {', '.join(s.causes)} (rocmprov explain)"))
    worst = max((r.severity for r in reports), key=lambda s: s.rank)
    console.print(Text(f"overall: {worst.value.upper()}"))
