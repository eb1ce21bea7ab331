"""Quick node check vs full local audit on this machine, same run (not a timed test).

    python benchmarks/health_quick.py [--runs 15]

Both run as a user's node check would (`python -m rocmprov audit --local --profile P --format
prometheus --output FILE`, from the checkout), interleaved, after 3 warm-up rounds; the quick
profile's kernel-log cursor lives in a temporary state directory (ROCMPROV_STATE_DIR), so after
the first warm-up it reads only the new kernel-log lines, as it does when a timer runs it.
Also records how long each probe took inside one full run (the probes the quick profile leaves
out are marked). Results: benchmarks/results/health_quick.json.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # this checkout, not the venv

from _bench import (
    REPO,
    log,
    machine,
    median,
    table,
    tool_env,
    versions,
    warm_bytecode,
    write_result,
)

NHC = {
    "source": "https://github.com/mej/nhc/blob/master/README.md#testing",
    "published": "the README's sample successful run logs 'Node Health Check completed "
    "successfully (1s)' (whole seconds); its watchdog TIMEOUT defaults to 30 s",
    "seconds": 1.0,
}


def cmd(profile: str, out: Path) -> list[str]:
    return [
        sys.executable,
        "-m",
        "rocmprov",
        "audit",
        "--local",
        "--profile",
        profile,
        "--format",
        "prometheus",
        "--output",
        str(out),
    ]


def probe_times(tmp: Path, env: dict[str, str]) -> dict[str, float]:
    """Per-probe seconds of one full local collection (from the bundle manifest)."""
    from rocmprov.collect.probes import build_probes, for_profile

    _, left_out = for_profile(build_probes(), "quick")
    subprocess.run(
        [sys.executable, "-m", "rocmprov", "collect", "--local", "-o", str(tmp / "bundle")],
        cwd=REPO,
        env=env,
        capture_output=True,
        timeout=300,
        check=False,
    )
    manifest = next((tmp / "bundle").rglob("manifest.json"), None)
    if manifest is None:
        return {}
    probes = json.loads(manifest.read_text()).get("probes", [])
    return {
        (p["id"] + (" (full only)" if p["id"] in left_out else "")): round(p["duration"], 4)
        for p in probes
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--out", help="results directory (default benchmarks/results)")
    args = parser.parse_args()
    runs = max(10, args.runs)
    warm_bytecode()
    times: dict[str, list[float]] = {"quick": [], "full": []}
    cpu: dict[str, list[float]] = {"quick": [], "full": []}
    with tempfile.TemporaryDirectory() as t:
        tmp = Path(t)
        env = tool_env({**tool_env(), "ROCMPROV_STATE_DIR": str(tmp / "state"), "NO_COLOR": "1"})
        log(f"quick vs full local audit: {runs} runs each, 3 warm-up rounds, interleaved")
        for i in range(3 + runs):
            for profile in ("quick", "full"):
                before = resource.getrusage(resource.RUSAGE_CHILDREN)
                start = time.perf_counter()
                proc = subprocess.run(
                    cmd(profile, tmp / f"{profile}.prom"),
                    cwd=REPO,
                    env=env,
                    capture_output=True,
                    timeout=300,
                    check=False,
                )
                wall = time.perf_counter() - start
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
                if proc.returncode not in (0, 1, 2, 3):
                    raise SystemExit(f"{profile}: exit {proc.returncode}: {proc.stderr[-500:]}")
                if i >= 3:
                    times[profile].append(wall)
                    cpu[profile].append(
                        (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
                    )
        probes = probe_times(tmp, env)
    results = {
        p: {
            "median_s": round(median(ts), 4),
            "min_s": round(min(ts), 4),
            "max_s": round(max(ts), 4),
            "cpu_median_s": round(median(cpu[p]), 4),
            "runs": len(ts),
        }
        for p, ts in times.items()
    }
    doc = {
        "benchmark": "health_quick",
        "machine": machine(),
        "versions": versions(),
        "tool": "python loop, 3 warm-up rounds, interleaved",
        "command": " ".join(cmd("P", Path("FILE"))[1:]),
        "results": results,
        "probes_full_run_s": probes,
        "nhc": NHC,
        "target": "quick < 1 s",
        "met": results["quick"]["median_s"] < 1.0,
    }
    rows = [
        [
            p,
            f"{r['median_s']:.3f}",
            f"{r['min_s']:.3f}",
            f"{r['max_s']:.3f}",
            f"{r['cpu_median_s']:.3f}",
        ]
        for p, r in results.items()
    ]
    print(table(rows, ["profile", "median s", "min s", "max s", "CPU s"]))
    print(f"\nresults: {write_result('health_quick', doc, Path(args.out) if args.out else None)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
