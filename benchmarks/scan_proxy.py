"""The anchor scan's cost, without a clock: the share of a text's characters at which the scan
regex (kb/scan.py, a trie of every anchor) starts a match attempt, i.e. whose character starts
some anchor. Deterministic, so it compares two anchor choices on a loaded machine.

    python benchmarks/scan_proxy.py [--mb 10]

Prints the first-character set, its CHAR_PERCENT weight (kb/anchors.py), and the share on the
benchmark's log (explain_bench.build_log) and on the real captures under tests/fixtures.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from explain_bench import build_log

from rocmprov.kb import codes as status_codes
from rocmprov.kb import load_table
from rocmprov.kb.anchors import CHAR_PERCENT, RARE
from rocmprov.kb.scan import compile_table

CAPTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures"
FOLDERS = ("dmesg", "rocminfo", "amd-smi", "rocm-smi", "healthy")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=10)
    args = parser.parse_args()
    compiled = compile_table(load_table(), status_codes.load_codes())
    firsts = sorted({a[0] for a in compiled.anchors})
    weight = sum(CHAR_PERCENT.get(c, RARE) for c in firsts)
    print(f"{len(compiled.anchors)} anchors, first characters {''.join(firsts)!r}")
    print(f"CHAR_PERCENT weight: {weight:.2f} %")
    real = "".join(
        p.read_text(encoding="utf-8", errors="replace")
        for folder in FOLDERS
        for p in sorted((CAPTURES / folder).rglob("*"))
        if p.is_file()
    )
    for name, text in (("bench log", build_log(args.mb, 7, 0.001)), ("real captures", real)):
        share = sum(text.count(c) for c in firsts) / len(text)
        print(f"{name} ({len(text):,} characters): {100 * share:.2f} % of positions")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
