"""Time of `rocmprov.collect.scrub.scrub` over sizes, on hostile and real inputs (not a timed test).

    python benchmarks/scrub_bench.py [--sizes 10000,100000,1000000,10000000] [--runs 3]
                                     [--baseline REV] [--baseline-max 20000]

Each input is built at each size; scrub() runs --runs times in this process and the median
is kept (wall clock and CPU time). The table gives seconds per MB and the ratio of the time at
one size to the time at the size before it: a linear scrub shows the ratio of the sizes
(10x), a quadratic one its square (100x). The exponent column is log(t2/t1) / log(n2/n1):
1.0 is linear, 2.0 quadratic. With --baseline, the scrub of that git revision (default: the
one before the linear rewrite) runs on 'a.' up to --baseline-max bytes, for the record.
Writes benchmarks/results/scrub.json.
"""

from __future__ import annotations

import argparse
import math
import statistics
import subprocess
import sys
import time
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _bench import REPO, log, machine, table, write_result

from rocmprov import __version__
from rocmprov.collect.scrub import scrub

FIXTURES = REPO / "tests" / "fixtures"
BASELINE_REV = "bbb5bc7"  # scrub.py as moved out of collect/bundle.py, before the rewrite


def real_probe_output() -> str:
    """Every captured fixture (lspci, rocminfo, dmesg, smi JSON, kb logs ...), concatenated."""
    return "".join(p.read_text(errors="replace") for p in sorted(FIXTURES.rglob("*.txt")))


def _repeat(unit: str) -> Callable[[int], str]:
    return lambda n: (unit * (n // len(unit) + 1))[:n]


INPUTS: dict[str, Callable[[int], str]] = {
    "a. (one long name)": _repeat("a."),
    "a= (separators)": _repeat("a="),
    "long token": _repeat("x"),
    "password run": _repeat("password"),
    "keys without values": _repeat('db_password: "'),
    "BEGIN without END": _repeat("-----BEGIN RSA PRIVATE KEY-----\n"),
    "BEGIN + key lines": _repeat("-----BEGIN EC PRIVATE KEY-----\nMIIEowIBAAKCAQEAw0qb3Yv8\n"),
    "url starts": _repeat("a://"),
    "home starts": _repeat("/home/"),
    "trigger on every line": _repeat("pass\n"),
}


def time_it(fn: Callable[[str], str], text: str, runs: int) -> tuple[float, float]:
    walls, cpus = [], []
    for _ in range(runs):
        w, c = time.perf_counter(), time.process_time()
        fn(text)
        walls.append(time.perf_counter() - w)
        cpus.append(time.process_time() - c)
    return statistics.median(walls), statistics.median(cpus)


def baseline_scrub(rev: str) -> Callable[[str], str] | None:
    try:
        source = subprocess.run(
            ["git", "-C", str(REPO), "show", f"{rev}:rocmprov/scrub.py"],
            capture_output=True, text=True, check=True, timeout=30,
        ).stdout  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return None
    module = types.ModuleType("scrub_baseline")
    exec(compile(source, f"{rev}:rocmprov/scrub.py", "exec"), module.__dict__)
    return module.__dict__["scrub"]


def series(
    name: str, fn: Callable[[str], str], build: Callable[[int], str], sizes: list[int], runs: int
) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for n in sizes:
        text = build(n)
        wall, cpu = time_it(fn, text, runs)
        row: dict[str, Any] = {
            "input": name,
            "bytes": len(text.encode("utf-8")),
            "wall_median_s": round(wall, 4),
            "cpu_median_s": round(cpu, 4),
            "cpu_s_per_mb": round(cpu / (len(text) / 1e6), 4),
            "runs": runs,
        }
        if rows:
            prev = rows[-1]
            size_ratio = row["bytes"] / prev["bytes"]
            time_ratio = cpu / prev["cpu_median_s"] if prev["cpu_median_s"] else math.nan
            row["size_ratio"] = round(size_ratio, 2)
            row["cpu_ratio"] = round(time_ratio, 2)
            row["exponent"] = round(math.log(time_ratio) / math.log(size_ratio), 2)
        rows.append(row)
        log(f"{name} {n} B: {cpu:.3f} s CPU")
    return rows


def scrub_table(rows: list[dict[str, Any]]) -> str:
    return table(
        [
            [
                r["input"],
                f"{r['bytes']:,}",
                f"{r['wall_median_s']:.4f}",
                f"{r['cpu_median_s']:.4f}",
                f"{r['cpu_s_per_mb']:.3f}",
                f"{r['cpu_ratio']:.1f}x for {r['size_ratio']:.0f}x" if "cpu_ratio" in r else "",
                f"{r['exponent']:.2f}" if "exponent" in r else "",
            ]
            for r in rows
        ],
        ["input", "bytes", "wall s", "CPU s", "CPU s/MB", "vs size before", "exponent"],
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000,1000000,10000000")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--baseline", default=BASELINE_REV, help="git revision; '' skips it")
    parser.add_argument("--baseline-max", type=int, default=20000)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    scrub("warm up")
    real = real_probe_output()
    inputs = {"real probe output (fixtures)": _repeat(real), **INPUTS}
    rows: list[dict[str, Any]] = []
    for name, build in inputs.items():
        rows += series(name, scrub, build, sizes, args.runs)
    before: list[dict[str, Any]] = []
    old = baseline_scrub(args.baseline) if args.baseline else None
    if old is not None:
        small = [n for n in (5000, 10000, 20000, 40000) if n <= args.baseline_max]
        before = series(f"a. at {args.baseline}", old, INPUTS["a. (one long name)"], small, 1)
    exponents = [r["exponent"] for r in rows if "exponent" in r and r["bytes"] >= 1_000_000]
    doc = {
        "machine": machine(),
        "rocmprov": __version__,
        "sizes": sizes,
        "rows": rows,
        "baseline": {"rev": args.baseline, "rows": before},
        "worst_cpu_s_per_mb": max(
            (r["cpu_s_per_mb"] for r in rows if r["bytes"] >= 1_000_000), default=None
        ),
        "max_exponent_100kb_to_10mb": max(exponents) if exponents else None,
    }
    path = write_result("scrub", doc, args.out)
    print(scrub_table(rows))
    if before:
        print(f"\nbefore the rewrite ({args.baseline}):\n")
        print(scrub_table(before))
    print(
        f"\nworst CPU s/MB at >= 1 MB: {doc['worst_cpu_s_per_mb']}; largest exponent, "
        f"100 KB to 10 MB: {doc['max_exponent_100kb_to_10mb']} (1.0 = linear)"
    )
    log(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
