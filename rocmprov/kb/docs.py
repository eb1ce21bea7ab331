"""Generate docs/troubleshooting.md from the troubleshooting table, the status codes and the
held-out evaluation.

    python -m rocmprov.kb.docs tests/data/kb-heldout > docs/troubleshooting.md

Pure: `render(table, codes, figures) -> str`; a test regenerates it and compares with the
committed file.
"""

from __future__ import annotations

import sys
from pathlib import Path

from rocmprov.kb.codes import Codes, load_codes
from rocmprov.kb.evaluate import Figures, evaluate, load_cases, summary, table_of_figures
from rocmprov.kb.table import CATEGORIES, Entry, Table, load_table

HEADER = """\
# Troubleshooting: known ROCm errors, causes and fixes

Generated from `rocmprov/data/kb/*.yaml` and `rocmprov/data/kb_codes.yaml` by
`python -m rocmprov.kb.docs tests/data/kb-heldout`; do not edit by hand.
`rocmprov explain FILE` finds these in an error message or a whole log (dmesg, a PyTorch
traceback, rocminfo, apt output) and ranks them: root causes first, then symptoms, then the
status codes no entry explained; harmless lines last, said to be harmless ("no action
needed"). Facts seen anywhere in the text (gfx target, ROCm and kernel versions, PCI address,
GPU name) fill every fix and choose its conditional variant; a value that is nowhere in the text
is replaced by how to get it. When nothing is known, explain says so, names the closest family
and says what to collect and where to report; when no line even looks like a problem (a healthy
`ldconfig -p` or `pip list`: library and package names such as libgpg-error or pytest-timeout
do not count), it says so and guesses no family, but still says where to report the failing
output if something did fail (the general ROCm tracker: a real error may use none of those words;
JSON: the `unknown` object's `looks_like_error` is false, its `closest_family` and `why` are "").
Every entry names the reports or documents that
established the cause. In the JSON (`--format json`), each of `matches` has its `lines` and
`evidence` (the user's own lines) and `english` (beside each, its English reading where a
localised apt, dpkg or loader message was put back in English, else "").

When no pattern matches, explain also lists up to three entries whose real texts resemble the
input's problem-looking lines of at least three known words, as "similar to" with a score
(TF-IDF cosine against each entry's real texts, its title and, at a low weight, its cause; at
least 0.45; `similar` in the JSON, its evidence the line's English reading): a pointer to
read, never a diagnosis,
and it never changes the exit code. The matcher is linear in its input (a line is searched
within 8 KiB of each hit), joins lines a terminal wrapped at 80-200 columns, accepts a log
prefix on every line of a multi-line message (dmesg with or without -T, the journal, ISO time
stamps, torchrun's `[rank0]:`, docker compose's `svc-1  | `, kubectl's `[pod/...]`) and a line
cut after a message's distinctive words, reads a paste with a web page's or a quoted reply's
spacing (no-break spaces, tabs, runs of spaces, `> ` quotes, indentation) or typography (curly
quotes, dashes, ellipsis), HTML escapes, a terminal's colour codes (also with their ESC byte
lost), and a message logged as one escaped string (a JSON log's field, an exception's repr).
A status code
an entry names by itself brings that entry in every spelling of the code (HIP's message, also
behind a source location such as ggml's `CUDA error 98 at file.cu:NN:`, or HSA's hex value).
`tests/test_kb_hygiene.py` checks every entry against variants of its own report's text
(prefixes stripped and added, wrapped, cut, quoted, indented, with a web page's spacing or
typography, HTML-escaped, coloured, logged as JSON, other gfx targets, PCI addresses, versions,
paths); `pytest tests/test_kb_hygiene.py` reruns it.
"""

EVALUATION = """\
## How well it knows errors it was not written from

{cases} real error texts from public reports that no entry cites, split from the table's
sources by report URL before the new entries were written (`tests/data/kb-heldout/`, rules in
its README) and labelled from the cause each report established: **{summary}**. The aim is 90 %
for both. {missing} of the real causes have no entry at all (`expected: missing`); most other
misses are message variants the entry's patterns do not cover, or nothing matched. Rerun:
`python -m rocmprov.kb.evaluate tests/data/kb-heldout` (prints every miss);
`tests/test_kb_heldout.py` runs it in CI. A miss is never fixed by tuning an entry to the
held-out case: the table gets another report of the same problem from a table-side source.
Since round 12 that has been done on purpose for the causes these cases missed (engineers given
the causes in words, never the texts), so the figure above is optimistic: on cases written only
after the table froze it is far lower (0 of 2 in round 18, 1 of 7 in round 17, 0 of 6 in rounds
15 and 16, 0 of 5 in round 14, 22 % of 18 in round 13, 14 % of 22 in round 12, 24-38 % in
rounds 8-11), the least biased estimate. Round by round:
`tests/data/kb-heldout/PROGRESS.md`.

Split by whether the table has an entry for the case's cause ("cited"; a real cause labelled
`missing`, or a harmless line no harmless entry covers, is "not cited"). Top-3: the expected
entry among explain's first three real causes. "similar": the similarity tier (shown as
"similar to", never a diagnosis) when no pattern answered.

{figures}
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


def _codes(codes: Codes) -> list[str]:
    out = ["## Status codes of the ROCm libraries", "",
           "Generated from the public headers by `scripts/gen_kb_codes.py`: any of these names "
           "(and HIP's and RCCL's printed messages, HSA's hex values) gets at least its meaning "
           "and the family's next step when no entry above explains the line.", ""]  # fmt: skip
    by_family: dict[str, list[str]] = {}
    for code in codes.by_name.values():
        by_family.setdefault(code.family, []).append(code.name)
    for family in codes.families.values():
        names = by_family.get(family.id, [])
        out += [f"### {family.type}: {family.title}", "", f"Next step: {family.next_step}", "",
                "Sources: " + ", ".join(f"<{u}>" for u in family.sources), "",
                "| code | value | meaning |", "|---|---|---|"]  # fmt: skip
        for name in names:
            code = codes.described(codes.by_name[name])
            value = f"{code.value}" + (f" (0x{code.value:x})" if family.hex else "")
            meaning = (code.meaning or code.message).replace("|", "\\|")
            out.append(f"| `{name}` | {value} | {meaning} |")
        out.append("")
    return out


def render(table: Table, codes: Codes | None = None, figures: Figures | None = None) -> str:
    lines = [HEADER]
    if figures is not None:
        lines.append(EVALUATION.format(cases=figures.cases, summary=summary(figures),
                                       missing=figures.missing,
                                       figures=table_of_figures(figures)))  # fmt: skip
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
    if codes is not None:
        lines += _codes(codes)
    return "\n".join(lines).rstrip() + "\n"


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    table = load_table()
    figures = evaluate(load_cases(Path(argv[0])), table) if argv else None
    sys.stdout.write(render(table, load_codes(), figures))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
