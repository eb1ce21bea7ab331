"""rocmprov explain: error text or a whole log -> known causes and fixes, ranked, with sources.

Exit codes: 0 no known cause, or only well-known harmless noise; 1 at least one known problem
found; 64 bad usage (unknown flag, missing or unreadable FILE, no input); 130 Ctrl-C.
"No known cause" is an answer, not an error. JSON (--format json) is one document on stdout,
also on error (then with an "error" key); human messages go to stderr.
"""

from __future__ import annotations

import argparse
import sys
from enum import Enum
from typing import TYPE_CHECKING, Any

from rocmprov.exitcodes import Exit

if TYPE_CHECKING:
    from rocmprov.kb import Match

HELP = "explain error text or a whole log: known causes and fixes, ranked, with sources"
SCHEMA = "rocmprov.explain/1"


class Format(Enum):
    TABLE = "table"
    JSON = "json"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "file", nargs="?", default=None, metavar="FILE",
        help="log or error text to explain; '-' or nothing reads stdin",
    )  # fmt: skip
    parser.add_argument(
        "--format", choices=[f.value for f in Format], default=Format.TABLE.value,
        help="table (default) or json (one document on stdout)",
    )  # fmt: skip
    parser.add_argument(
        "--all", action="store_true",
        help="also show lines that are well-known harmless noise",
    )  # fmt: skip
    parser.add_argument(
        "-c", "--context", action="append", default=[], metavar="KEY=VALUE",
        help="a fact the text may lack, used in fixes (e.g. gfx=gfx1031, container=yes)",
    )  # fmt: skip


class _BadInput(Exception):
    pass


def _parse_context(items: list[str]) -> dict[str, str]:
    context: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise _BadInput(f"--context wants KEY=VALUE, got {item!r}")
        context[key.strip()] = value.strip()
    return context


def _read(name: str | None) -> tuple[str, str]:
    """(label, text) of the input; raises _BadInput with one line on any problem."""
    if name is None or name == "-":
        if name is None and sys.stdin.isatty():
            raise _BadInput("no input: give FILE, or pipe text into 'rocmprov explain -'")
        data = sys.stdin.buffer.read()
        label = "-"
    else:
        try:
            with open(name, "rb") as handle:
                data = handle.read()
        except FileNotFoundError:
            raise _BadInput(f"{name}: no such file") from None
        except IsADirectoryError:
            raise _BadInput(f"{name}: is a directory, not a file") from None
        except PermissionError:
            raise _BadInput(f"{name}: permission denied") from None
        except OSError as exc:
            raise _BadInput(f"{name}: cannot read ({exc.strerror or exc})") from None
        label = name
    return label, data.decode("utf-8", errors="replace")


def _document(label: str, text: str, shown: list[Match], hidden: int, code: int) -> dict[str, Any]:
    from rocmprov.kb import load_table

    return {
        "schema": SCHEMA,
        "input": label,
        "bytes": len(text.encode("utf-8", errors="replace")),
        "lines": text.count("\n") + (1 if text and not text.endswith("\n") else 0),
        "entries": len(load_table()),
        "exit_code": code,
        "hidden_harmless": hidden,
        "matches": [m.to_dict() for m in shown],
    }


def _render_table(shown: list[Match], hidden: int, lines: int, entries: int) -> None:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    # remote text is never markup: rich would eat "[drm]" as a style tag
    out = Console(markup=False, highlight=False, emoji=False)
    if not shown:
        out.print(
            f"No known cause found ({lines} lines checked against {entries} known problems)."
            + (f" {hidden} harmless line(s) hidden; --all shows them." if hidden else "")
        )
        return
    summary = Table(title="Known causes, most likely first", title_justify="left")
    summary.add_column("#", justify="right", no_wrap=True)
    summary.add_column("id", no_wrap=True)
    summary.add_column("kind", no_wrap=True)
    summary.add_column("title")
    summary.add_column("lines", no_wrap=True)
    for rank, m in enumerate(shown, 1):
        where = ",".join(str(n) for n in m.lines[:3]) + ("..." if m.count > 3 else "")
        summary.add_row(str(rank), Text(m.id), m.kind, Text(m.title), where)
    out.print(summary)
    for rank, m in enumerate(shown, 1):
        head = Text(f"\n{rank}. ", style="bold")
        head.append(m.title, style="bold")
        head.append(f"  [{m.id}]", style="dim")
        out.print(head)
        out.print(Text("   cause: ", style="bold") + Text(m.cause))
        out.print(Text("   fix:   ", style="bold") + Text(m.fix))
        if m.condition:
            out.print(Text(f"   (this fix because: {m.condition})", style="dim"))
        out.print(Text("   evidence:", style="bold"))
        for number, line in zip(m.lines, m.evidence, strict=True):
            # remote text: never markup, never wrapped into the next line's indent
            out.print(Text(f"     {number}: ", style="dim") + Text(line), soft_wrap=True)
        if m.count > len(m.lines):
            out.print(Text(f"     ({m.count} occurrences)", style="dim"))
        out.print(Text("   sources: ", style="bold") + Text(" ".join(m.sources)))
    if hidden:
        print(f"{hidden} harmless known line(s) hidden; --all shows them.", file=sys.stderr)


def run(args: argparse.Namespace) -> int:
    import json

    fmt = Format(args.format)
    label = args.file or "-"
    try:
        context = _parse_context(args.context)
        label, text = _read(args.file)
    except _BadInput as exc:
        print(f"rocmprov: {exc}", file=sys.stderr)
        if fmt is Format.JSON:
            doc = {"schema": SCHEMA, "input": label, "exit_code": int(Exit.USAGE),
                   "error": str(exc), "matches": []}  # fmt: skip
            print(json.dumps(doc, indent=2))
        return Exit.USAGE

    from rocmprov.kb import load_table, match

    found = match(text, context=context)
    shown = found if args.all else [m for m in found if not m.harmless]
    hidden = len(found) - len(shown)
    code = Exit.WARNING if any(not m.harmless for m in found) else Exit.OK
    if fmt is Format.JSON:
        print(json.dumps(_document(label, text, shown, hidden, int(code)), indent=2))
    else:
        doc_lines = text.count("\n") + (1 if text and not text.endswith("\n") else 0)
        _render_table(shown, hidden, doc_lines, len(load_table()))
    return code
