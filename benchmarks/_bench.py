"""Shared helpers of the benchmarks: timed child runs with their CPU, medians, result files.

CPU accounting: this process makes itself a child subreaper (prctl PR_SET_CHILD_SUBREAPER),
so processes that a measured command leaves behind and that daemonize (OpenSSH ControlPersist
masters, which do the crypto of every multiplexed session) are re-parented to us and their
CPU is counted when they end: `Run.finish_masters()` ends them through their control sockets
(`ssh -O exit`) and reaps them before the sample is closed. CPU is user+sys of all reaped
descendants (resource.getrusage(RUSAGE_CHILDREN) before/after), i.e. the controller side.
"""

from __future__ import annotations

import ctypes
import json
import os
import platform
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
RESULTS = REPO / "benchmarks" / "results"
VENV_BIN = Path(sys.executable).parent
PR_SET_CHILD_SUBREAPER = 36
PYCACHE = Path(os.environ.get("TMPDIR", "/tmp")) / "rocmprov-bench-pycache"


def tool_env(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment for measured tools: `base` (default os.environ) with Python bytecode
    caching on (PYTHONDONTWRITEBYTECODE dropped; caches under PYCACHE, not in the checkout),
    as after a normal `pip install`, which compiles every module once."""
    env = dict(os.environ if base is None else base)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(PYCACHE)
    return env


def warm_bytecode() -> None:
    """Compile rocmprov (an editable install has no .pyc) into PYCACHE, once, not timed."""
    import rocmprov

    # the imported (installed) package and the checkout's, which fleet_scale/reapply run
    dirs = sorted({str(Path(rocmprov.__file__).parent), str(REPO / "rocmprov")})
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", *dirs],
        env=tool_env(),
        stdout=subprocess.DEVNULL,
        check=False,
        timeout=300,
    )


def exit_on_signals() -> None:
    """SIGTERM/SIGINT/SIGHUP end the benchmark through SystemExit, so that every `finally`
    stops what it started (a background job of a script has SIGINT ignored: undo that)."""

    def handler(signum: int, _frame: object) -> None:
        raise SystemExit(128 + signum)

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, handler)


def become_subreaper() -> bool:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def tool(name: str) -> str:
    """`name` beside this interpreter (the venv) first, else on PATH."""
    beside = VENV_BIN / name
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    found = shutil.which(name)
    if not found:
        raise SystemExit(f"benchmark: {name} not found")
    return found


def _cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def children() -> set[int]:
    """Pids whose parent is this process (zombies included), from /proc."""
    me = os.getpid()
    out: set[int] = set()
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            stat = (d / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        if int(fields[1]) == me:
            out.add(int(d.name))
    return out


def reap_orphans(baseline: set[int], deadline_s: float = 10.0) -> int:
    """Wait for children that were not there before (re-parented orphans: we are their
    subreaper), so that their CPU is counted; bounded in time. Returns how many were reaped."""
    n = 0
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        new = children() - baseline
        if not new:
            return n
        for pid in new:
            try:
                got, _ = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                got = pid
            n += 1 if got else 0
        time.sleep(0.05)
    return n


def stop_control_masters(cp_dir: Path) -> None:
    """End every OpenSSH ControlPersist master whose socket is in cp_dir (we made the dir)."""
    if not cp_dir.is_dir():
        return
    for sock in sorted(cp_dir.iterdir()):
        subprocess.run(
            ["ssh", "-o", f"ControlPath={sock}", "-O", "exit", "bench-master"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=10,
            check=False,
        )


@dataclass
class Sample:
    wall: float
    cpu: float
    rc: int


def run_measured(
    argv: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    cwd: str | Path | None = None,
    timeout: float = 900,
    stdout: Path | None = None,
    cp_dir: Path | None = None,
) -> Sample:
    """Run argv once; wall time and the CPU of its whole process tree (incl. ssh masters
    whose control sockets are in cp_dir, ended and reaped after the command)."""
    baseline = children()
    before = _cpu()
    out = open(stdout, "wb") if stdout else subprocess.DEVNULL  # noqa: SIM115
    err = open(f"{stdout}.err", "wb") if stdout else subprocess.DEVNULL  # noqa: SIM115
    start = time.perf_counter()
    proc = subprocess.Popen(
        list(argv),
        env=tool_env(env),
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=out,
        stderr=err,
        start_new_session=True,
    )
    try:
        rc = proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)  # the group we started, by its id
        rc = proc.wait(timeout=30)
    except BaseException:  # interrupted: end what we started, then go on unwinding
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)
        if cp_dir is not None:
            stop_control_masters(cp_dir)
        raise
    wall = time.perf_counter() - start
    if stdout:
        out.close()
        err.close()
    if cp_dir is not None:
        stop_control_masters(cp_dir)
    reap_orphans(baseline, 10.0)
    return Sample(wall, _cpu() - before, rc)


def median(values: Iterable[float]) -> float:
    vals = list(values)
    return statistics.median(vals) if vals else float("nan")


@dataclass
class Series:
    """Repeated samples of one variant at one size."""

    name: str
    n: int
    samples: list[Sample] = field(default_factory=list)
    note: str = ""
    tasks_per_host: float | None = None  # ok+changed per host in the recap (re-apply)

    @property
    def wall(self) -> float:
        return median(s.wall for s in self.samples)

    @property
    def cpu(self) -> float:
        return median(s.cpu for s in self.samples)

    @property
    def ok(self) -> bool:
        return bool(self.samples) and all(s.rc == 0 for s in self.samples)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "n": self.n,
            "wall_median_s": round(self.wall, 3),
            "cpu_median_s": round(self.cpu, 3),
            "cpu_per_host_ms": round(1000 * self.cpu / max(1, self.n), 1),
            "rcs": [s.rc for s in self.samples],
            "samples": [asdict(s) for s in self.samples],
            "note": self.note,
            "tasks_per_host": self.tasks_per_host,
        }


def machine() -> dict[str, Any]:
    mem_kb = 0
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                mem_kb = int(line.split()[1])
    except OSError:
        pass
    load = os.getloadavg()
    return {
        "nproc": os.cpu_count(),
        "ram_gib": round(mem_kb / 1024 / 1024, 1),
        "kernel": platform.release(),
        "python": platform.python_version(),
        "date_utc": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "loadavg_at_start": [round(x, 2) for x in load],
    }


def versions() -> dict[str, str]:
    out: dict[str, str] = {}
    for name, argv in {
        "ansible-core": [tool("ansible"), "--version"],
        "openssh": ["ssh", "-V"],
        "pdsh": ["pdsh", "-V"],
    }.items():
        try:
            cp = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
            out[name] = (cp.stdout + cp.stderr).strip().splitlines()[0]
        except (OSError, subprocess.TimeoutExpired, IndexError):
            out[name] = "absent"
    try:
        import rocmprov

        out["rocmprov"] = rocmprov.__version__
    except ImportError:
        out["rocmprov"] = "absent"
    return out


def write_result(name: str, doc: dict[str, Any], out_dir: Path | None = None) -> Path:
    out_dir = out_dir or RESULTS
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"{name}.json"
    path.write_text(json.dumps(doc, indent=2) + "\n")
    return path


def ratio(a: float, b: float) -> float:
    return a / b if b else float("nan")


def table(rows: list[list[str]], header: list[str]) -> str:
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    line = "| " + " | ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)) + " |"
    sep = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    body = [
        "| " + " | ".join(str(c).ljust(w) for c, w in zip(r, widths, strict=True)) + " |"
        for r in rows
    ]
    return "\n".join([line, sep, *body])


def log(msg: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


class HostFarm:
    """Benchmark hosts that live as long as a `with` block: `start` them on entry (a failed
    start stops what it started), `stop` them on exit."""

    def start(self) -> None:
        raise NotImplementedError

    def stop(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Any:
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
