"""Start-up time: `rocmprov --help` vs `ansible --version`, same run (not a timed test); and
`rocmprov explain` of one healthy line and of one real report (tests/fixtures/kb), where the
troubleshooting table is loaded (exit 1, a cause found, is expected and not a failure).

    python benchmarks/startup.py [--runs 20]

hyperfine (apt-get install -y hyperfine) when installed, with 3 warm-up runs; else a Python
loop with the same warm-up. Prints the median of --runs runs (>= 10) and the ratio.
Results: benchmarks/results/startup.json.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _bench import (
    log,
    machine,
    median,
    tool,
    tool_env,
    versions,
    warm_bytecode,
    write_result,
)
from report import startup_table

REPORT = Path(__file__).resolve().parent.parent / "tests/fixtures/kb/hip.no-binary-for-gpu.txt"


def commands(healthy: Path) -> dict[str, list[str]]:
    return {
        "rocmprov --help": [tool("rocmprov"), "--help"],
        "rocmprov audit --help": [tool("rocmprov"), "audit", "--help"],
        "rocmprov explain (one healthy line)": [tool("rocmprov"), "explain", str(healthy)],
        "rocmprov explain (one real report)": [tool("rocmprov"), "explain", str(REPORT)],
        "ansible --version": [tool("ansible"), "--version"],
    }


CPU: dict[str, float] = {}  # mean user+sys CPU per run, from hyperfine


def with_hyperfine(cmds: dict[str, list[str]], runs: int) -> dict[str, list[float]]:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "hf.json"
        argv = ["hyperfine", "-N", "-i", "--warmup", "3", "--runs", str(runs),
                "--export-json", str(out)]  # fmt: skip
        for name, cmd in cmds.items():
            argv += ["-n", name, " ".join(cmd)]
        subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, timeout=600, env=tool_env())
        doc = json.loads(out.read_text())
    for r in doc["results"]:
        CPU[r["command"]] = r.get("user", 0.0) + r.get("system", 0.0)
    return {r["command"]: r["times"] for r in doc["results"]}


def with_loop(cmds: dict[str, list[str]], runs: int) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {name: [] for name in cmds}
    for i in range(3 + runs):  # interleaved; the first 3 are warm-up
        for name, cmd in cmds.items():
            start = time.perf_counter()
            subprocess.run(
                cmd,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                check=False,  # explain exits 1 when it names a cause
                timeout=120,
                env=tool_env(),
            )
            if i >= 3:
                times[name].append(time.perf_counter() - start)
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--no-hyperfine", action="store_true", help="use the Python loop")
    parser.add_argument("--out", help="results directory (default benchmarks/results)")
    args = parser.parse_args()
    runs = max(10, args.runs)
    warm_bytecode()
    use_hf = shutil.which("hyperfine") is not None and not args.no_hyperfine
    log(f"start-up: {runs} runs each with {'hyperfine' if use_hf else 'a Python loop'}")
    with tempfile.TemporaryDirectory() as tmp:
        healthy = Path(tmp, "healthy.log")
        healthy.write_text("fine\n")
        cmds = commands(healthy)
        times = with_hyperfine(cmds, runs) if use_hf else with_loop(cmds, runs)
    results = {}
    for name, ts in times.items():
        med = median(ts)
        cpu = CPU.get(name)
        results[name] = {
            "median_s": round(med, 4),
            "min_s": round(min(ts), 4),
            "max_s": round(max(ts), 4),
            "runs": len(ts),
            "cpu_mean_s": round(cpu, 4) if cpu is not None else None,
        }
    doc = {
        "benchmark": "startup",
        "machine": machine(),
        "versions": versions(),
        "tool": "hyperfine -N --warmup 3" if use_hf else "python loop, 3 warm-up",
        "results": results,
        "target": "rocmprov --help < 0.25 s",
        "met": results["rocmprov --help"]["median_s"] < 0.25,
    }
    print(startup_table(results))
    print(f"\nresults: {write_result('startup', doc, Path(args.out) if args.out else None)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
