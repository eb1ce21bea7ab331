"""Leave-one-out measure of explain's similarity tier on the table's own real texts (not a test).

    python benchmarks/similar_loo.py [--threshold 0.5 ...]

The tier (rocmprov/kb/similar.py) ranks entries by how alike the input's informative lines are
to each entry's real texts (its fixture's and its other wordings' matched lines, its title and,
at a low weight, its cause).
Each file of tests/fixtures/kb-wordings is another real text of one entry. For each: build the
index without that file's lines (the entry keeps its title, its cause, its fixture and its other
wordings),
feed the file's text to the tier, and count whether its entry is first (top 1) or among the
tier's suggestions (top 3). A harmless entry's wording counts when the tier names a real cause
for it (a false alarm). The same is done, as a second figure, for every entry's own fixture
(tests/fixtures/kb/<id>.txt, that file left out; an entry with no other wording keeps only its
title), and for every harmless entry's fixture with the whole entry left out (an unseen kind of
harmless line).

The benign guard, with the packaged index and explain's own path (`suggest` after `match`): how
many harmless entries' fixtures and wordings, alone, and how many healthy outputs
(tests/fixtures/healthy) get a similar real cause (tests/test_kb_similar.py,
tests/test_kb_healthy.py
require none).

Several --threshold values are scored from one ranking each (the threshold only cuts it).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from rocmprov.kb import load_table
from rocmprov.kb import similar as sim
from rocmprov.kb.lineends import normalise
from rocmprov.kb.matcher import match
from rocmprov.kb.table import Entry, Table

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "kb"
HEALTHY = ROOT / "tests" / "fixtures" / "healthy"


@dataclass
class Tally:
    """One group of cases at one threshold."""

    cases: int = 0
    top1: int = 0
    top3: int = 0
    none: int = 0  # the tier said nothing
    false_alarms: int = 0  # a harmless text given a real cause
    misses: list[str] = field(default_factory=list)

    def add(self, expected: str, harmless: bool, got: list[sim.Similar], name: str) -> None:
        self.cases += 1
        ids = [s.id for s in got]
        if harmless:
            self.false_alarms += bool(got)
            if got:
                self.misses.append(f"{name} -> {ids[0]}")
            return
        self.top1 += bool(ids) and ids[0] == expected
        self.top3 += expected in ids
        self.none += not ids
        if expected not in ids:
            self.misses.append(f"{name} -> {ids[0] if ids else '-'}")


def per_file(table: Table) -> dict[str, list[tuple[Path, list[str]]]]:
    """Each entry's real-text files and the lines its patterns matched in each."""
    return {
        e.id: [
            (p, sim.matched_lines(sim.body_of(p), e.id, table))
            for p in sim.wordings(FIXTURES, e.id)
        ]
        for e in table.entries
    }


def words_without(
    entry: Entry, files: list[tuple[Path, list[str]]], left: Path
) -> dict[str, float]:
    """The entry's words (`sim.entry_doc`: title, cause) without the lines of file `left`."""
    lines: list[str] = []
    for path, found in files:
        if path != left:
            lines += [line for line in found if line not in lines]
    return sim.entry_doc(entry, lines)


def measure(table: Table, thresholds: list[float]) -> dict[str, dict[float, Tally]]:
    files = per_file(table)
    texts = {i: [ln for _, found in fs for ln in found] for i, fs in files.items()}
    docs = sim.entry_words(table, {i: list(dict.fromkeys(t)) for i, t in texts.items()})
    groups = ("wordings, real", "wordings, harmless", "fixtures, real", "fixtures, harmless",
              "harmless entry left out")  # fmt: skip
    out = {g: {t: Tally() for t in thresholds} for g in groups}

    def score(group: str, i: int, doc: Mapping[str, float], path: Path) -> None:
        entry = table.entries[i]
        index = sim.build_index(table, [doc if k == i else d for k, d in enumerate(docs)])
        ranking = sim.ranked(normalise(sim.body_of(path)), table, index=index)
        for t in thresholds:
            out[group][t].add(entry.id, entry.harmless, sim.chosen(ranking, threshold=t), path.name)

    for i, entry in enumerate(table.entries):
        kind = "harmless" if entry.harmless else "real"
        for path, _ in files[entry.id]:
            group = f"{'fixtures' if path.parent == FIXTURES else 'wordings'}, {kind}"
            score(group, i, words_without(entry, files[entry.id], path), path)
        if entry.harmless:
            score("harmless entry left out", i, {}, FIXTURES / f"{entry.id}.txt")
    return out


def benign(table: Table, thresholds: list[float]) -> dict[str, dict[float, list[str]]]:
    """Texts given a similar real cause on explain's path, with the packaged index."""
    cases = [p for e in table.entries if e.harmless for p in sim.wordings(FIXTURES, e.id)]
    groups = {"harmless fixtures and wordings, alone": cases,
              "healthy outputs": sorted(HEALTHY.glob("*.txt"))}  # fmt: skip
    out: dict[str, dict[float, list[str]]] = {}
    for group, paths in groups.items():
        out[group] = {t: [] for t in thresholds}
        for path in paths:
            text = normalise(sim.body_of(path))
            found = match(text, table=table)
            if any(not m.harmless for m in found):
                continue
            skip, unless = sim.covered(found, table)
            ranking = sim.ranked(text, table, skip=skip, unless=unless)
            for t in thresholds:
                got = sim.chosen(ranking, threshold=t)
                if got:
                    out[group][t].append(f"{path.name} -> {got[0].id} {got[0].score:.2f}")
    return out


def _pct(part: int, whole: int) -> str:
    return f"{part}/{whole} ({100 * part / whole:.1f}%)" if whole else "-"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threshold", type=float, action="append", help=f"default {sim.THRESHOLD}")
    parser.add_argument("--misses", action="store_true", help="list the cases missed")
    args = parser.parse_args()
    thresholds = args.threshold or [sim.THRESHOLD]
    table = load_table()
    loo = measure(table, thresholds)
    guard = benign(table, thresholds)
    for t in thresholds:
        print(f"threshold {t:.2f}, MIN_WORDS {sim.MIN_WORDS}")
        for group, tallies in loo.items():
            n = tallies[t]
            if "real" in group:
                print(f"  {group}: top 1 {_pct(n.top1, n.cases)}, top 3 {_pct(n.top3, n.cases)}, "
                      f"nothing {_pct(n.none, n.cases)}")  # fmt: skip
            else:
                print(f"  {group}: given a real cause {_pct(n.false_alarms, n.cases)}")
            if args.misses:
                print("".join(f"    {m}\n" for m in n.misses), end="")
        for group, given in guard.items():
            print(f"  benign, {group}: given a real cause {len(given[t])} {given[t]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
