"""How well the troubleshooting table knows errors it was not written from.

A held-out case (tests/data/kb-heldout/*.txt) is a real error text from a public report that
no entry cites, with the cause the report established (`expected`: an entry id, or `benign` for
a harmless line). Top-1 accuracy: the first non-harmless match is the expected entry. A benign
line is recognised when every match is harmless and there is at least one.

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


@dataclass
class Figures:
    cases: int = 0
    causes: int = 0
    top1: int = 0
    benign: int = 0
    benign_recognised: int = 0
    missing: int = 0  # real causes labelled `missing`: no entry had them
    misses: list[tuple[str, str, str]] = field(default_factory=list)  # (case, expected, got)

    @property
    def accuracy(self) -> float:
        return self.top1 / self.causes if self.causes else 0.0

    @property
    def benign_share(self) -> float:
        return self.benign_recognised / self.benign if self.benign else 0.0


def parse_case(name: str, raw: str) -> Case:
    head, sep, body = raw.partition("\n---\n")
    if not sep:
        raise ValueError(f"{name}: no '---' line")
    fields: dict[str, str] = {}
    for line in head.splitlines():
        key, colon, value = line.partition(":")
        if colon and key.strip() in {"source", "area", "cause", "expected", "missing"}:
            fields.setdefault(key.strip(), value.strip())
    missing = {"source", "area", "cause", "expected"} - set(fields)
    if missing:
        raise ValueError(f"{name}: missing {sorted(missing)}")
    return Case(name, fields["source"], fields["area"], fields["cause"], fields["expected"], body)


def load_cases(folder: Path) -> list[Case]:
    cases = []
    for path in sorted(folder.glob("*.txt")):
        if path.name == "cited-before-split.txt":
            continue
        with path.open(encoding="utf-8") as fh:
            cases.append(parse_case(path.name, fh.read(MAX_CASE)))
    return cases


def top_answer(text: str, table: Table | None = None) -> str:
    """The id explain puts first among real causes, `benign` when only harmless lines matched,
    or '' when nothing matched."""
    found = match(text, table=table)
    real = [m for m in found if not m.harmless]
    if real:
        return real[0].id
    return BENIGN if found else ""


def evaluate(cases: list[Case], table: Table | None = None) -> Figures:
    table = table or load_table()
    figures = Figures(cases=len(cases))
    for case in cases:
        got = top_answer(case.text, table)
        if case.expected == BENIGN:
            figures.benign += 1
            figures.benign_recognised += got == BENIGN
        else:
            figures.causes += 1
            figures.top1 += got == case.expected
            figures.missing += case.expected == "missing"
        if got != case.expected:
            figures.misses.append((case.name, case.expected, got or "-"))
    return figures


def summary(figures: Figures) -> str:
    return (
        f"top-1 accuracy {figures.accuracy:.1%} ({figures.top1} of {figures.causes} real "
        f"causes); harmless lines recognised {figures.benign_share:.1%} "
        f"({figures.benign_recognised} of {figures.benign})"
    )


def main(argv: list[str]) -> int:
    folder = Path(argv[0] if argv else "tests/data/kb-heldout")
    figures = evaluate(load_cases(folder))
    print(summary(figures))
    for name, expected, got in figures.misses:
        print(f"  miss {name}: expected {expected}, got {got}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
