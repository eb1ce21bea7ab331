"""`--format html`: one self-contained HTML file for a fleet audit. Pure.

No network fetch at all: CSS and JS are inline and a Content-Security-Policy forbids anything
else (default-src 'none'). Everything that came from a host travels as JSON inside a
<script type="application/json"> (with <, >, & and non-ASCII escaped, so no host text can end the
script) and is put on the page by the script through textContent only; the page is a Jinja2
template (templates/fleet.html, package data) with autoescape on, so the few strings written into
the HTML itself are escaped. Size: strings that repeat across hosts (check ids,
summaries, fixes) are stored once and referenced by number, and a host's grid row is one
character per check, so 1,000 hosts stay a few MB.

The page: a summary (hosts per severity), a hosts x checks grid coloured by severity with the
drift fields as extra columns, filters (severity, text), and one host's details (findings with
actual/expected/fix/reference, the version inventory) when a row is clicked or the URL ends in
#host=NAME.
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

from jinja2 import Environment, PackageLoader
from markupsafe import Markup

from rocmprov import __version__
from rocmprov.fleet.drift import CHECK as DRIFT
from rocmprov.fleet.drift import LABELS, flatten
from rocmprov.model import AuditResult, HostReport, Severity, count

CODE = {
    Severity.OK: "o",
    Severity.SKIPPED: "s",
    Severity.UNKNOWN: "u",
    Severity.WARNING: "w",
    Severity.CRITICAL: "c",
}
ABSENT = "-"


class _Strings:
    """Each distinct string once; findings refer to them by index."""

    def __init__(self) -> None:
        self.items: list[str] = []
        self._index: dict[str, int] = {}

    def __call__(self, text: str) -> int:
        if text not in self._index:
            self._index[text] = len(self.items)
            self.items.append(text)
        return self._index[text]


def columns(result: AuditResult) -> list[str]:
    """The grid's check columns: the checks with a problem on most hosts first, then the rest
    by name (drift fields are columns of their own)."""
    bad: dict[str, int] = {}
    for h in result.hosts:
        for f in h.findings:
            if f.check.startswith(DRIFT):
                continue
            bad.setdefault(f.check, 0)
            if f.severity.rank >= Severity.UNKNOWN.rank:
                bad[f.check] += 1
    return sorted(bad, key=lambda c: (-bad[c], c))


def drift_fields(result: AuditResult) -> list[str]:
    seen = {
        f.check.removeprefix(DRIFT + ".")
        for h in result.hosts
        for f in h.findings
        if f.check.startswith(DRIFT + ".")
    }
    return [name for name in LABELS if name in seen]


def _host(h: HostReport, cols: dict[str, int], fields: list[str], s: _Strings) -> dict[str, Any]:
    cells = [ABSENT] * len(cols)
    for f in h.findings:
        i = cols.get(f.check)
        if i is not None and (cells[i] == ABSENT or f.severity.rank > _rank(cells[i])):
            cells[i] = CODE[f.severity]
    flat = flatten(h.inventory) if h.inventory else {}
    drifted = {
        f.check.removeprefix(DRIFT + "."): CODE[f.severity]
        for f in h.findings
        if f.check.startswith(DRIFT + ".")
    }
    findings = [
        [
            CODE[f.severity],
            s(f.check),
            s(f.subject),
            s(f.summary),
            s(f.actual),
            s(f.expected),
            s(f.fix),
            s(f.ref),
        ]
        for f in sorted(h.findings, key=lambda f: -f.severity.rank)
        if f.severity.rank >= Severity.UNKNOWN.rank
    ]
    return {
        "n": h.host,
        "s": CODE[h.severity],
        "g": "".join(cells),
        "d": [
            [flat.get(name, ""), drifted.get(name, "o" if name in flat else ABSENT)]
            for name in fields
        ],
        "f": findings,
        "p": sum(1 for f in h.findings if f.severity is Severity.OK),
        "x": h.failure and f"{h.failure}: {h.message}",
        "i": h.inventory,
    }


def _rank(code: str) -> int:
    return next((sev.rank for sev, c in CODE.items() if c == code), -1)


def data(result: AuditResult, generated: str = "") -> dict[str, Any]:
    cols = columns(result)
    index = {c: i for i, c in enumerate(cols)}
    fields = drift_fields(result)
    strings = _Strings()
    hosts = [_host(h, index, fields, strings) for h in result.hosts]
    return {
        "v": __version__,
        "generated": generated,
        "severity": result.severity.value,
        "exit": int(result.exit_code),
        "columns": cols,
        "drift": [[name, LABELS[name]] for name in fields],
        "strings": strings.items,
        "hosts": hosts,
    }


def script_json(value: Any) -> str:
    """JSON that is safe inside <script>: no <, > or & (so no </script> and no <!--), ASCII."""
    text = json.dumps(value, ensure_ascii=True, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


@cache
def _environment() -> Environment:
    env = Environment(
        loader=PackageLoader("rocmprov.report", "templates"),
        autoescape=True,
        keep_trailing_newline=True,
    )
    env.filters["script_json"] = lambda value: Markup(script_json(value))
    return env


def render(result: AuditResult, generated: str = "") -> str:
    hosts = count(len(result.hosts), "host")
    title = f"rocmprov fleet audit: {hosts}, {result.severity.value.upper()}"
    return (
        _environment()
        .get_template("fleet.html")
        .render(
            title=title,
            subtitle=f"generated {generated} by rocmprov {__version__}",
            data=data(result, generated),
        )
    )
