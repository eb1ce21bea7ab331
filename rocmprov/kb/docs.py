"""Generate docs/troubleshooting.md from the troubleshooting table.

    python -m rocmprov.kb.docs > docs/troubleshooting.md

Pure: `render(table) -> str`; a test regenerates it and compares with the committed file.
"""

from __future__ import annotations

import sys

from rocmprov.kb.table import CATEGORIES, Entry, Table, load_table

HEADER = """\
# Troubleshooting: known ROCm errors, causes and fixes

Generated from `rocmprov/data/kb/*.yaml` by `python -m rocmprov.kb.docs`; do not edit by hand.
`rocmprov explain FILE` finds these in an error message or a whole log (dmesg, a PyTorch
traceback, rocminfo, apt output) and ranks them: root causes first, then symptoms; well-known
harmless lines only with `--all`. Every entry names the reports or documents that established
the cause.
"""


def _entry(entry: Entry) -> list[str]:
    out = [f"### {entry.title}", ""]
    tags = f"`{entry.id}` · {entry.kind}" + (" · harmless" if entry.harmless else "")
    out += [tags, ""]
    out += ["Matches:", ""]
    out += [f"- `{p.regex}`" + (f" (spans {p.lines} lines)" if p.lines > 1 else "")
            for p in entry.patterns]  # fmt: skip
    out += ["", f"**Cause.** {entry.cause}", "", f"**Fix.** {entry.fix}", ""]
    if entry.conditions:
        out += ["**What changes the answer:**", ""]
        for cond in entry.conditions:
            out.append(f"- *{cond.when}*" + (f": {cond.fix}" if cond.fix else ""))
        out.append("")
    out += ["Sources: " + ", ".join(f"<{url}>" for url in entry.sources), ""]
    return out


def render(table: Table) -> str:
    lines = [HEADER]
    counts = {c: sum(1 for e in table.entries if e.category == c) for c in CATEGORIES}
    lines.append(f"{len(table)} entries: " + ", ".join(
        f"{c} {n}" for c, n in counts.items() if n) + ".\n")  # fmt: skip
    for category in CATEGORIES:
        entries = [e for e in table.entries if e.category == category]
        if not entries:
            continue
        lines += [f"## {category}", ""]
        for entry in entries:
            lines += _entry(entry)
    return "\n".join(lines).rstrip() + "\n"


def main() -> int:
    sys.stdout.write(render(load_table()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
