"""benchmarks/results/*.json (+ explain.txt) -> one Markdown page of numbers, ratios, targets.

python benchmarks/report.py [--results benchmarks/results] > RESULTS.md
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _bench import RESULTS, table


def load(results: Path, name: str) -> dict | None:
    path = results / f"{name}.json"
    return json.loads(path.read_text()) if path.is_file() else None


def yes(ok: bool | None) -> str:
    return "n/a" if ok is None else ("met" if ok else "MISSED")


def fleet_table(doc: dict) -> str:
    """The fleet-audit table (also printed by benchmarks/fleet_audit.py)."""
    rows = []
    for size in doc["sizes"]:
        for name, s in size["series"].items():
            r = size["ratios"].get(f"{name}/rocmprov", {"wall": 1.0, "cpu": 1.0})
            rows.append(
                [
                    str(size["n"]),
                    size["hosts"],
                    name,
                    f"{s['wall_median_s']:.2f}",
                    f"{s['cpu_median_s']:.2f}",
                    f"{s['cpu_per_host_ms']:.0f}",
                    f"{r['wall']:.2f}x",
                    f"{r['cpu']:.2f}x",
                    str(len(s["samples"])),
                    s["note"] or "ok",
                ]
            )
    return table(
        rows,
        [
            "N",
            "hosts",
            "tool",
            "wall s",
            "ctrl CPU s",
            "CPU ms/host",
            "wall / rocmprov",
            "CPU / rocmprov",
            "runs",
            "check",
        ],
    )


def fleet_section(doc: dict, targets: list[list[str]]) -> list[str]:
    big = max(doc["sizes"], key=lambda s: s["n"])
    n = big["n"]
    ra = big["ratios"].get("ansible/rocmprov", {}).get("wall")
    rp = big["ratios"].get("pdsh/rocmprov", {}).get("wall")
    cpu = big["series"]["rocmprov"]["cpu_per_host_ms"]
    targets += [
        [
            f"fleet audit N={n}: >= 10x faster than Ansible",
            f"{ra}x" if ra else "-",
            yes(ra >= 10 if ra else None),
        ],
        [
            f"fleet audit N={n}: >= 2x faster than pdsh",
            f"{rp}x" if rp else "-",
            yes(rp >= 2 if rp else None),
        ],
        [f"fleet audit N={n}: controller CPU <= 15 ms/host", f"{cpu:.0f} ms", yes(cpu <= 15)],
    ]
    return ["### Fleet audit", "", fleet_table(doc), ""]


def reapply_table(doc: dict) -> str:
    """The re-apply table (also printed by benchmarks/reapply.py)."""
    rows = []
    for size in doc["sizes"]:
        base = size["series"].get("rocmprov")
        for name, s in size["series"].items():
            vs = f"{s['wall_median_s'] / base['wall_median_s']:.2f}x" if base else "-"
            cvs = f"{s['cpu_median_s'] / base['cpu_median_s']:.2f}x" if base else "-"
            rows.append(
                [
                    str(size["n"]),
                    name,
                    f"{s['wall_median_s']:.2f}",
                    f"{s['cpu_median_s']:.2f}",
                    vs,
                    cvs,
                    str(len(s["samples"])),
                    s["note"] or "changed=0",
                ]
            )
    return table(
        rows,
        [
            "N",
            "variant",
            "wall s",
            "ctrl CPU s",
            "wall / rocmprov",
            "CPU / rocmprov",
            "runs",
            "check",
        ],
    )


def reapply_section(doc: dict, targets: list[list[str]]) -> list[str]:
    for size in doc["sizes"]:
        r = size["ratios"]
        if r:
            ov, sp = r["overhead_vs_bare_same_pct"], r["ansible_default/rocmprov"]
            series = size["series"]
            own = series["rocmprov"]["cpu_median_s"]
            cov = 100 * (own / series["bare-same"]["cpu_median_s"] - 1)
            csp = series["ansible-default"]["cpu_median_s"] / own
            targets += [
                [
                    f"re-apply N={size['n']}: overhead <= 5% over bare ansible-playbook",
                    f"wall {ov:+.1f}%, CPU {cov:+.1f}%",
                    yes(ov <= 5),
                ],
                [
                    f"re-apply N={size['n']}: >= 2x faster than Ansible defaults",
                    f"wall {sp}x, CPU {csp:.2f}x",
                    yes(sp >= 2),
                ],
            ]
        else:
            targets.append([f"re-apply N={size['n']}", "rocmprov apply not usable", "n/a"])
    return ["### No-op re-apply (converged hosts)", "", reapply_table(doc), ""]


def explain_section(text: str, targets: list[list[str]]) -> list[str]:
    m = re.search(r"median: ([\d.]+) MB/s", text)
    mbs = float(m.group(1)) if m else None
    cpu = re.search(r"([\d.]+) MB/s of CPU time", text)
    measured = f"{mbs} MB/s wall" if mbs else "-"
    if cpu:
        measured += f", {cpu.group(1)} MB/s of CPU time"
    targets.append(["explain matcher >= 50 MB/s", measured, yes(mbs >= 50 if mbs else None)])
    return [
        "### explain (rocmprov.kb.matcher.match over the whole table)",
        "",
        "```",
        text.strip(),
        "```",
        "",
    ]


def startup_table(results: dict) -> str:
    """The start-up table (also printed by benchmarks/startup.py)."""
    base = results["ansible --version"]["median_s"]
    rows = [
        [
            name,
            f"{r['median_s']:.3f}",
            f"{r['min_s']:.3f}",
            f"{r['max_s']:.3f}",
            f"{r['cpu_mean_s']:.3f}" if r.get("cpu_mean_s") is not None else "-",
            str(r["runs"]),
            f"{base / r['median_s']:.1f}x",
        ]
        for name, r in results.items()
    ]
    return table(
        rows,
        [
            "command",
            "median s",
            "min s",
            "max s",
            "CPU s (mean)",
            "runs",
            "ansible --version / this",
        ],
    )


def startup_section(doc: dict, targets: list[list[str]]) -> list[str]:
    res = doc["results"]
    med = res["rocmprov --help"]["median_s"]
    cpu = res["rocmprov --help"].get("cpu_mean_s")
    measured = f"{med:.3f} s wall" + (f", {cpu:.3f} s CPU" if cpu is not None else "")
    targets.append(["`rocmprov --help` < 0.25 s", measured, yes(med < 0.25)])
    return ["### Start-up", "", f"Tool: {doc['tool']}.", "", startup_table(res), ""]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", default=str(RESULTS))
    args = parser.parse_args()
    results = Path(args.results)
    targets: list[list[str]] = []
    body: list[str] = []
    meta = None
    if doc := load(results, "fleet_audit"):
        body += fleet_section(doc, targets)
        meta = meta or doc
    if doc := load(results, "reapply"):
        body += reapply_section(doc, targets)
        meta = meta or doc
    if (results / "explain.txt").is_file():
        body += explain_section((results / "explain.txt").read_text(), targets)
    if doc := load(results, "startup"):
        body += startup_section(doc, targets)
        meta = meta or doc
    head = ["## Results", ""]
    if meta:
        m, v = meta["machine"], meta["versions"]
        head += [
            f"Machine: {m['nproc']} cores, {m['ram_gib']} GiB RAM, kernel {m['kernel']}, "
            f"Python {m['python']}; {m['date_utc']}; load average at start "
            f"{m['loadavg_at_start']}.",
            "",
            "Versions: " + "; ".join(f"{k} {val}" for k, val in v.items()) + ".",
            "",
        ]
    head += ["### Targets", "", table(targets, ["target", "measured", ""]), ""]
    print("\n".join(head + body))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
