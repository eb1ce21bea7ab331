"""Overlap sweep of the troubleshooting table (issue 28, task D): pairs of entries to decide.

Four ways a pair is found:
  co-match  every fixture and wording fixture (tests/fixtures/kb/<id>.txt,
            tests/fixtures/kb-wordings/<id>.<slug>.txt) is matched; each other non-harmless
            entry that also matches it is paired with the fixture's own entry, with both ranks;
  near      entries whose title+cause token sets have a Jaccard similarity over a threshold;
  core      entries with patterns whose literal cores (longest literal) are equal or nested;
  runs      entries with patterns whose literals are the same set.

Everything but `main` is pure: it takes texts and the table and returns rows.
    .venv/bin/python scripts/kb_overlap.py [--near 0.3] > /tmp/pairs.md
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import defaultdict
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path

from rocmprov.kb import Table, load_table, match
from rocmprov.kb.anchors import regex_runs

ROOT = Path(__file__).resolve().parent.parent
WORD = re.compile(r"[a-z0-9_]{3,}")
# literal cores that only say a file or a library is missing: shared by unrelated causes
COMMON = frozenset(
    (": no such file or directory", "no such file or directory", "cannot open shared object file")
)
STOP = frozenset(
    re.findall(
        r"\w+",
        "the and for with not that this from are was its but when one can has have into than"
        " which what their they them does only runs run",
    )
)


@dataclass(frozen=True)
class Pair:
    a: str  # the fixture's own entry (co-match) or the first id in table order
    b: str
    how: str  # co-match | near | core | runs
    detail: str  # fixture name and ranks, the similarity, or the shared literals


def fixture_text(raw: str) -> str:
    """The excerpt of a fixture: what follows the `---` line."""
    return raw.partition("\n---\n")[2]


def co_matches(fixtures: dict[str, tuple[str, str]], table: Table) -> list[Pair]:
    """fixtures: name -> (owning entry id, text). A pair for every other real entry matching."""
    pairs = []
    for name, (owner, text) in sorted(fixtures.items()):
        found = [m for m in match(text, table=table) if not m.harmless]
        ids = [m.id for m in found]
        own = ids.index(owner) + 1 if owner in ids else 0
        for rank, m in enumerate(found, 1):
            if m.id != owner and m.id in table.by_id:
                pairs.append(Pair(owner, m.id, "co-match", f"{name}: own #{own}, other #{rank}"))
    return pairs


def tokens(text: str) -> frozenset[str]:
    return frozenset(w for w in WORD.findall(text.lower()) if w not in STOP)


def near_pairs(table: Table, threshold: float) -> list[Pair]:
    """Entries whose title+cause token sets are similar (Jaccard over `threshold`)."""
    sets = [(e.id, tokens(f"{e.title} {e.cause}")) for e in table.entries if not e.harmless]
    pairs = []
    for (ia, sa), (ib, sb) in combinations(sets, 2):
        if sa and sb:
            sim = len(sa & sb) / len(sa | sb)
            if sim > threshold:
                pairs.append(Pair(ia, ib, "near", f"{sim:.2f}"))
    return pairs


def literal_core(regex: str) -> str:
    """The longest literal every match of `regex` contains (its literal core)."""
    return max(regex_runs(regex), key=len, default="")


def core_pairs(table: Table, shortest: int = 10, most: int = 3) -> list[Pair]:
    """Non-harmless entries with patterns whose literal cores are equal or one holds the other.
    A core is left out when it is shorter than `shortest` characters or is held by more than
    `most` entries: a frame every message of a kind shares (": cannot open shared object
    file", "nothing provides") whose patterns differ by the name they quote."""
    owners: dict[str, set[str]] = defaultdict(set)
    for entry in table.entries:
        if not entry.harmless:
            for pattern in entry.patterns:
                core = literal_core(pattern.regex).strip()
                if len(core) >= shortest and core.lower() not in COMMON:
                    owners[core].add(entry.id)
    order = {e.id: i for i, e in enumerate(table.entries)}
    pairs = []
    cores = sorted(owners)
    holders = {c: {e for o in cores if c in o for e in owners[o]} for c in cores}
    cores = [c for c in cores if len(holders[c]) <= most]
    for inner in cores:
        for outer in cores:
            if inner != outer and inner not in outer:
                continue
            for a in owners[inner]:
                for b in owners[outer]:
                    if order[a] < order[b] or (inner != outer and a != b):
                        x, y = sorted((a, b), key=order.__getitem__)
                        pairs.append(Pair(x, y, "core", repr(inner)))
    return pairs


def same_runs_pairs(table: Table) -> list[Pair]:
    """Non-harmless entries with a pattern each whose literals (every run of 4+ characters)
    are the same set: the same message frame, whatever its length or how many share it."""
    owners: dict[tuple[str, ...], set[str]] = defaultdict(set)
    for entry in table.entries:
        if not entry.harmless:
            for pattern in entry.patterns:
                runs = tuple(sorted({r.strip() for r in regex_runs(pattern.regex)} - {""}))
                if any(len(r) >= 4 for r in runs):
                    owners[runs].add(entry.id)
    order = {e.id: i for i, e in enumerate(table.entries)}
    pairs = []
    for runs, ids in owners.items():
        for a, b in combinations(sorted(ids, key=order.__getitem__), 2):
            pairs.append(Pair(a, b, "runs", repr(runs[:3])))
    return pairs


def grouped(pairs: list[Pair]) -> dict[frozenset[str], list[Pair]]:
    """Pairs by unordered entry pair, so each pair of entries is decided once."""
    groups: dict[frozenset[str], list[Pair]] = defaultdict(list)
    for pair in pairs:
        groups[frozenset((pair.a, pair.b))].append(pair)
    return groups


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--near", type=float, default=0.3)
    args = parser.parse_args(argv)
    table = load_table()
    fixtures: dict[str, tuple[str, str]] = {}
    for path in sorted((ROOT / "tests" / "fixtures" / "kb").glob("*.txt")):
        fixtures[path.name] = (path.stem, fixture_text(path.read_text(encoding="utf-8")))
    for path in sorted((ROOT / "tests" / "fixtures" / "kb-wordings").glob("*.txt")):
        owner = path.name.removesuffix(".txt").rsplit(".", 1)[0]
        fixtures["w:" + path.name] = (owner, fixture_text(path.read_text(encoding="utf-8")))
    pairs = co_matches(fixtures, table) + near_pairs(table, args.near) + core_pairs(table)
    pairs += same_runs_pairs(table)
    groups = grouped(pairs)
    print(f"# {len(groups)} entry pairs ({len(pairs)} findings)")
    for key in sorted(groups, key=lambda k: sorted(k)):
        found = groups[key]
        a, b = found[0].a, found[0].b
        ea, eb = table.by_id[a], table.by_id[b]
        hows = "; ".join(f"{p.how} {p.detail}" for p in found)
        print(f"| {a} ({ea.kind} {ea.priority}) | {b} ({eb.kind} {eb.priority}) | {hows} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
