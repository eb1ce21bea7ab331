"""How well the troubleshooting table knows errors it was not written from.

A held-out case (tests/data/kb-heldout/*.txt) is a real error text from a public report that
no entry cites, with the cause the report established (`expected`: an entry id, or `benign` for
a harmless line). Top-1 accuracy: the first non-harmless match is the expected entry; top-3: it
is among the first three. A benign line is recognised when every match is harmless and there is
at least one. Each figure is split by whether the table has an entry for the cause (`cited`).

    python -m rocmprov.kb.evaluate tests/data/kb-heldout     # the figures, and every miss

Pure apart from `load_cases` (reads the folder) and `main`.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path

from rocmprov.kb.matcher import match
from rocmprov.kb.table import Table, load_table

BENIGN = "benign"
MAX_CASE = 64 * 1024  # bytes of one case read, at most


@dataclass(frozen=True)
class Case:
    name: str
    source: str
    area: str
    cause: str
    expected: str
    text: str
    entry: str = ""  # a harmless line: the harmless entry that covers it, if any


@dataclass
class Tally:
    """One figure's count over one group of cases."""

    right: int = 0
    of: int = 0

    def add(self, right: bool) -> None:
        self.right += right
        self.of += 1

    def text(self) -> str:
        share = f"{self.right / self.of:.1%}" if self.of else "-"
        return f"{share} ({self.right} of {self.of})"


@dataclass
class Figures:
    """top-1, top-3 and benign-recognised, each over all cases and split by whether the table
    has an entry for the case's cause (`cited`: a real cause labelled with an entry id or a
    status code, a harmless line labelled with the harmless entry that covers it, `entry:`) or
    not (`expected: missing`, or a harmless line no entry covers). `similar`: of the real causes
    no pattern answered, those whose expected entry the similarity tier put in its top 3."""

    cases: int = 0
    causes: int = 0
    top1: int = 0
    benign: int = 0
    benign_recognised: int = 0
    missing: int = 0  # real causes labelled `missing`: no entry had them
    misses: list[tuple[str, str, str]] = field(default_factory=list)  # (case, expected, got)
    split: dict[str, Tally] = field(default_factory=dict)  # "top1.cited", "benign.not cited"...
    similar: Tally = field(default_factory=Tally)
    benign_similar: int = 0  # benign cases given a "similar" real cause

    @property
    def accuracy(self) -> float:
        return self.top1 / self.causes if self.causes else 0.0

    @property
    def benign_share(self) -> float:
        return self.benign_recognised / self.benign if self.benign else 0.0

    def tally(self, name: str) -> Tally:
        return self.split.setdefault(name, Tally())


def parse_case(name: str, raw: str) -> Case:
    head, sep, body = raw.partition("\n---\n")
    if not sep:
        raise ValueError(f"{name}: no '---' line")
    fields: dict[str, str] = {}
    for line in head.splitlines():
        key, colon, value = line.partition(":")
        if colon and key.strip() in {"source", "area", "cause", "expected", "missing", "entry"}:
            fields.setdefault(key.strip(), value.strip())
    missing = {"source", "area", "cause", "expected"} - set(fields)
    if missing:
        raise ValueError(f"{name}: missing {sorted(missing)}")
    return Case(name, fields["source"], fields["area"], fields["cause"], fields["expected"], body,
                fields.get("entry", ""))  # fmt: skip


def load_cases(folder: Path) -> list[Case]:
    cases = []
    for path in sorted(folder.glob("*.txt")):
        if path.name == "cited-before-split.txt":
            continue
        with path.open(encoding="utf-8") as fh:
            cases.append(parse_case(path.name, fh.read(MAX_CASE)))
    return cases


def answers(text: str, table: Table | None = None) -> tuple[str, list[str]]:
    """(explain's first answer, its first three real causes): the first is the id explain puts
    first among real causes, `benign` when only harmless lines matched, or '' when nothing
    matched."""
    found = match(text, table=table)
    real = [m.id for m in found if not m.harmless]
    if real:
        return real[0], real[:3]
    return (BENIGN if found else ""), []


def top_answer(text: str, table: Table | None = None) -> str:
    return answers(text, table)[0]


def cited(case: Case) -> bool:
    """The table has an entry for the case's cause (see Figures)."""
    if case.expected == BENIGN:
        return bool(case.entry)
    return case.expected != "missing"


def evaluate(cases: list[Case], table: Table | None = None) -> Figures:
    from rocmprov.kb.similar import similar

    table = table or load_table()
    figures = Figures(cases=len(cases))
    for case in cases:
        got, top3 = answers(case.text, table)
        group = "cited" if cited(case) else "not cited"
        if case.expected == BENIGN:
            figures.benign += 1
            figures.benign_recognised += got == BENIGN
            figures.tally(f"benign.{group}").add(got == BENIGN)
            figures.benign_similar += not got and bool(similar(case.text, table))
        else:
            figures.causes += 1
            figures.top1 += got == case.expected
            figures.missing += case.expected == "missing"
            figures.tally(f"top1.{group}").add(got == case.expected)
            figures.tally(f"top3.{group}").add(case.expected in top3)
            if not got:
                near = [s.id for s in similar(case.text, table)]
                figures.similar.add(case.expected in near)
        if got != case.expected:
            figures.misses.append((case.name, case.expected, got or "-"))
    return figures


def summary(figures: Figures) -> str:
    return (
        f"top-1 accuracy {figures.accuracy:.1%} ({figures.top1} of {figures.causes} real "
        f"causes); harmless lines recognised {figures.benign_share:.1%} "
        f"({figures.benign_recognised} of {figures.benign})"
    )


def table_of_figures(figures: Figures) -> str:
    """The split figures as a Markdown table (docs/troubleshooting.md, and main())."""
    rows = ["| figure | all | cause cited by the table | not cited |", "|---|---|---|---|"]
    for name, label in (("top1", "top-1"), ("top3", "top-3"), ("benign", "benign recognised")):
        parts = [figures.tally(f"{name}.{g}") for g in ("cited", "not cited")]
        total = Tally(sum(p.right for p in parts), sum(p.of for p in parts))
        rows.append(f"| {label} | {total.text()} | {parts[0].text()} | {parts[1].text()} |")
    rows.append(f"| similar (top 3, when no pattern answered) | {figures.similar.text()} | | |")
    rows.append(f"| benign given a similar real cause | {figures.benign_similar} | | |")
    return "\n".join(rows)


def main(argv: list[str]) -> int:
    folder = Path(argv[0] if argv else "tests/data/kb-heldout")
    figures = evaluate(load_cases(folder))
    print(summary(figures))
    print(table_of_figures(figures))
    for name, expected, got in figures.misses:
        print(f"  miss {name}: expected {expected}, got {got}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
