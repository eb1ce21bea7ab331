"""rocmprov explain: error text or a whole log -> known causes and fixes, ranked, with sources.

Exit codes: 0 no known cause, or only well-known harmless lines; 1 at least one known problem
found; 64 bad usage (unknown flag, missing or unreadable FILE, no input, stdin closed, input
over MAX_INPUT, FILE not a regular file); 130 Ctrl-C.
"No known cause" is an answer, not an error: it names the closest family (which part of the
stack the text is about, read around the lines that look like a problem first), what to collect
and where to report. When no line looks like a problem (kb/problems.py: a healthy `ldconfig -p`,
`pip list`), it says so plainly and guesses no family, but keeps the neutral path: if something
did fail, collect a bundle and report the failing output to the general ROCm tracker (a real
error worded in none of the problem words must not be told there is nothing to report). JSON:
`unknown.looks_like_error` false, `closest_family` and `why` "", `report` the ROCm tracker.
Harmless lines are always reported as such ("no action needed"), ranked below every real
cause; the table view lists them in one line each (--all: in full).
JSON (--format json) is one document on stdout, also on error (then with an "error" key);
human messages go to stderr.

Input: FILE must be a regular file (a FIFO, a device such as /dev/zero, a socket is refused
before anything is read: it could block or never end); '-' (or nothing, when stdin is not a
terminal) reads stdin. At most MAX_INPUT bytes (16 MiB) are read, from either: more is a usage
error that says how to cut the log down (`tail -c 16M LOG | rocmprov explain -`).

The table view prints log text through report.safe.printable (control characters such as ESC
are shown as `\x1b`, never obeyed by the terminal) with rich markup off.
"""

from __future__ import annotations

import argparse
import os
import stat
import sys
from enum import Enum
from typing import IO, TYPE_CHECKING, Any

from rocmprov.exitcodes import Exit
from rocmprov.report.safe import printable

if TYPE_CHECKING:
    from rocmprov.kb import Match
    from rocmprov.kb.matcher import Analysis
    from rocmprov.kb.similar import Similar

HELP = "explain error text or a whole log: known causes and fixes, ranked, with sources"
SCHEMA = "rocmprov.explain/1"
MAX_INPUT = 16 * 1024 * 1024  # bytes read from FILE or stdin, at most
COLLECT = "rocmprov collect --local -o rocmprov-bundle --tar"
_TOO_BIG = (
    f"more than {MAX_INPUT // (1024 * 1024)} MiB of input; give the part around the failure "
    "(e.g. tail -c 16M LOG | rocmprov explain -)"
)


class Format(Enum):
    TABLE = "table"
    JSON = "json"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "file", nargs="?", default=None, metavar="FILE",
        help="log or error text to explain (a regular file, at most 16 MiB); "
        "'-' or nothing reads stdin",
    )  # fmt: skip
    parser.add_argument(
        "--format", choices=[f.value for f in Format], default=Format.TABLE.value,
        help="table (default) or json (one document on stdout)",
    )  # fmt: skip
    parser.add_argument(
        "--all", action="store_true",
        help="show harmless lines in full (they are always listed, one line each)",
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
        return "-", _decode(_read_stdin(explicit=name == "-"))
    try:
        # O_NONBLOCK: opening a FIFO that has no writer must not wait for one
        fd = os.open(name, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise _BadInput(f"{name}: no such file") from None
    except PermissionError:
        raise _BadInput(f"{name}: permission denied") from None
    except OSError as exc:
        raise _BadInput(f"{name}: cannot open ({exc.strerror or exc})") from None
    info = os.fstat(fd)
    mode = info.st_mode
    if stat.S_ISREG(mode) and info.st_size > MAX_INPUT:
        os.close(fd)
        raise _BadInput(f"{name}: {_TOO_BIG}")
    if not stat.S_ISREG(mode):
        os.close(fd)
        if stat.S_ISDIR(mode):
            raise _BadInput(f"{name}: is a directory, not a file")
        raise _BadInput(
            f"{name}: not a regular file ({_kind(mode)}); to read a stream, pipe it: "
            "... | rocmprov explain -"
        )
    with os.fdopen(fd, "rb") as handle:
        try:
            data = handle.read(MAX_INPUT + 1)
        except OSError as exc:
            raise _BadInput(f"{name}: cannot read ({exc.strerror or exc})") from None
    if len(data) > MAX_INPUT:
        raise _BadInput(f"{name}: {_TOO_BIG}")
    return name, _decode(data)


def _read_stdin(*, explicit: bool) -> bytes:
    stdin = sys.stdin
    if stdin is None or stdin.closed:  # started with fd 0 closed (`<&-`)
        raise _BadInput("no input: stdin is closed; give FILE, or pipe text into it")
    try:
        if not explicit and stdin.isatty():
            raise _BadInput("no input: give FILE, or pipe text into 'rocmprov explain -'")
        data = stdin.buffer.read(MAX_INPUT + 1)
    except (OSError, ValueError) as exc:  # EBADF, EISDIR (`< /`), a detached buffer
        reason = getattr(exc, "strerror", None) or exc
        raise _BadInput(f"-: cannot read stdin ({reason})") from None
    if len(data) > MAX_INPUT:
        raise _BadInput(f"-: {_TOO_BIG}")
    return data


def _kind(mode: int) -> str:
    for test, kind in ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket")):  # fmt: skip
        if test(mode):
            return kind
    return "not a file"


def _decode(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")


def _similar(text: str, analysis: Analysis) -> list[Similar]:
    """The similarity tier (kb/similar.py), only when no real cause matched: over the lines no
    harmless match covers."""
    if any(not m.harmless for m in analysis.matches):
        return []
    from rocmprov.kb.similar import suggest

    # the words it compares are English (analyse put them back once, kb/locale.py); line for
    # line, so the harmless matches' line numbers still name the lines to leave out
    english = analysis.english if analysis.english is not None else text
    return suggest(english, analysis.matches)


def _document(
    label: str, text: str, analysis: Analysis, code: int, entries: int,
    near: list[Similar] | None = None, size: int | None = None,
) -> dict[str, Any]:  # fmt: skip
    """`size`: the input's bytes as read (before its line ends were normalised)."""
    found = analysis.matches
    doc: dict[str, Any] = {
        "schema": SCHEMA,
        "input": label,
        "bytes": size if size is not None else len(text.encode("utf-8", errors="replace")),
        "lines": _line_count(text),
        "entries": entries,
        "exit_code": code,
        "harmless": sum(1 for m in found if m.harmless),
        "context": [{"name": f.name, "value": f.value, "line": f.line} for f in analysis.facts],
        "matches": [m.to_dict() for m in found],
        # not a diagnosis: entries whose real texts resemble the input's lines that no pattern
        # matched, when no real cause matched
        "similar": [s.to_dict() for s in near or []],
    }
    if not any(not m.harmless for m in found):
        doc["unknown"] = _unknown(text, analysis)
    return doc


def _line_count(text: str) -> int:
    return text.count("\n") + (1 if text and not text.endswith("\n") else 0)


def _unknown(text: str, analysis: Analysis) -> dict[str, Any]:
    """What to do when nothing is known: the closest family, what to collect, where to report.
    When no line outside the harmless matches' lines looks like a problem: no family guess, and
    the general tracker (the text may still be a failure worded in none of the problem words)."""
    from rocmprov.kb import load_table
    from rocmprov.kb.codes import load_codes
    from rocmprov.kb.families import ROCM_ISSUES, closest
    from rocmprov.kb.problems import problem_lines
    from rocmprov.kb.similar import covered

    skip, unless = covered(analysis.matches, load_table())
    # read in English where kb/locale.py put lines back (line for line, as the similar tier)
    english = analysis.english if analysis.english is not None else text
    problems = problem_lines(english, skip, unless)
    if not (problems.any or analysis.code_like):
        return {"closest_family": "", "why": "", "collect": COLLECT, "report": ROCM_ISSUES,
                "looks_like_error": False}  # fmt: skip
    near = closest(text, analysis.code_like, load_codes(), [n for n, _ in problems.lines])
    return {
        "closest_family": near.family if near else "",
        "why": near.why if near else "",
        "collect": COLLECT,
        "report": near.report if near else ROCM_ISSUES,
        "looks_like_error": True,
    }


def _render_table(
    analysis: Analysis, text: str, entries: int, show_harmless: bool, file: IO[str] | None = None,
    near: list[Similar] | None = None,
) -> None:  # fmt: skip
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    def safe(text: str) -> Text:  # log text (and fixes with its captures) never reaches the
        return Text(printable(text))  # terminal raw: control characters spelled out

    # remote text is never markup: rich would eat "[drm]" as a style tag
    out = Console(file=file, markup=False, highlight=False, emoji=False)
    real = [m for m in analysis.matches if not m.harmless]
    harmless = [m for m in analysis.matches if m.harmless]
    shown = real + harmless if show_harmless else real
    if not real:
        unknown = _unknown(text, analysis)
        out.print(f"No known cause found ({_line_count(text)} lines checked against {entries} "
                  "known problems and the ROCm libraries' status codes).")  # fmt: skip
        quiet = not unknown["looks_like_error"]
        if quiet:
            besides = ", apart from the harmless lines below," if harmless else ""
            out.print(f"Nothing in it looks like an error{besides} (no line says error, failed, "
                      "cannot, not found or the like).")  # fmt: skip
        if unknown["closest_family"]:
            out.print(safe(f"Closest family: {unknown['closest_family']} ({unknown['why']})."))
        for s in near or []:  # never a diagnosis: a pointer to read, with how alike it is
            out.print(safe(f"Similar to (not a diagnosis, similarity {s.score:.2f}, line "
                           f"{s.line}): {s.title} [{s.id}]"))  # fmt: skip
        if quiet:  # the neutral path: an error worded in none of those words still has one
            out.print(f"If something did fail, collect a support bundle: {unknown['collect']}")
            out.print(f"and report the failing output: {unknown['report']}")
        else:
            out.print(f"Collect a support bundle: {unknown['collect']}")
            out.print(f"and report it with this log: {unknown['report']}")
    if shown:
        summary = Table(title="Known causes, most likely first", title_justify="left")
        summary.add_column("#", justify="right", no_wrap=True)
        summary.add_column("id", no_wrap=True)
        summary.add_column("kind", no_wrap=True)
        summary.add_column("title")
        summary.add_column("lines", no_wrap=True)
        for rank, m in enumerate(shown, 1):
            where = ",".join(str(n) for n in m.lines[:3]) + ("..." if m.count > 3 else "")
            summary.add_row(str(rank), safe(m.id), safe(m.kind), safe(m.title), where)
        out.print(summary)
    for rank, m in enumerate(shown, 1):
        _render_match(out, rank, m, safe)
    if harmless and not show_harmless:
        out.print(Text("\nHarmless (no action needed; --all shows them in full):", style="bold"))
        for m in harmless:
            out.print(safe(f"  line {m.lines[0] if m.lines else '?'}: {m.title} [{m.id}]"))
    if analysis.facts:
        seen = ", ".join(f"{f.name}={f.value} (line {f.line})" for f in analysis.facts)
        out.print(Text("\nSeen in the text: ", style="dim") + safe(seen))


def _render_match(out: Any, rank: int, m: Match, safe: Any) -> None:
    from rich.text import Text

    head = Text(f"\n{rank}. ", style="bold")
    head.append(printable(m.title), style="bold")
    head.append(f"  [{printable(m.id, one_line=True)}]", style="dim")
    out.print(head)
    out.print(Text("   cause: ", style="bold") + safe(m.cause))
    out.print(Text("   fix:   ", style="bold") + safe(m.fix))
    if m.condition:
        out.print(Text(f"   (this fix because: {printable(m.condition)})", style="dim"))
    out.print(Text("   evidence:", style="bold"))
    english = m.english or ("",) * len(m.lines)
    for number, line, reading in zip(m.lines, m.evidence, english, strict=True):
        # remote text: never markup, never wrapped into the next line's indent
        evidence = printable(line.removesuffix("\r"))  # tabs kept: smi tables use them
        out.print(Text(f"     {number}: ", style="dim") + Text(evidence), soft_wrap=True)
        if reading:  # the user's line was localised: what the table read (kb/locale.py)
            out.print(Text("        in English: ", style="dim") + Text(printable(reading)),
                      soft_wrap=True)  # fmt: skip
    if m.count > len(m.lines):
        out.print(Text(f"     ({m.count} occurrences)", style="dim"))
    out.print(Text("   sources: ", style="bold") + safe(" ".join(m.sources)))


def run(args: argparse.Namespace) -> int:
    import json

    fmt = Format(args.format)
    label = args.file or "-"
    try:
        context = _parse_context(args.context)
        label, text = _read(args.file)
    except _BadInput as exc:
        print(f"rocmprov: {printable(str(exc), one_line=True)}", file=sys.stderr)
        if fmt is Format.JSON:
            doc = {"schema": SCHEMA, "input": label, "exit_code": int(Exit.USAGE),
                   "error": str(exc), "matches": []}  # fmt: skip
            print(json.dumps(doc, indent=2))
        return Exit.USAGE

    from rocmprov.kb import load_table
    from rocmprov.kb.lineends import normalise
    from rocmprov.kb.matcher import analyse

    # once for the whole command: analyse, similar and the line count read the same lines,
    # so "lines" agrees with the matches' line numbers (a \r-only text has several lines)
    size = len(text.encode("utf-8", errors="replace"))
    text = normalise(text)
    analysis = analyse(text, context=context)
    code = Exit.WARNING if any(not m.harmless for m in analysis.matches) else Exit.OK
    entries = len(load_table())
    near = _similar(text, analysis)
    if fmt is Format.JSON:
        doc = _document(label, text, analysis, int(code), entries, near, size)
        print(json.dumps(doc, indent=2))
    else:
        _render_table(analysis, text, entries, args.all, near=near)
    return code
