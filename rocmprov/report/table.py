"""The human view: problems first, with the fix. Colour off under NO_COLOR or a pipe (rich).

Everything that came from a host (its name, what the checks quote from its outputs, failure
messages) is remote text: it passes through report.safe.printable (control characters spelled
out, never obeyed by the terminal) and rich prints it with markup off ("[drm]" stays)."""

from __future__ import annotations

from typing import IO

from rich.console import Console
from rich.table import Table
from rich.text import Text

from rocmprov.model import AuditResult, HostReport, Severity, count
from rocmprov.report import fleet_summary
from rocmprov.report.safe import STYLE, printable


def render(
    result: AuditResult, file: IO[str], *, verbose: bool = False, all_hosts: bool = False
) -> None:
    """One table per host; a fleet of more than FLEET_SUMMARY_HOSTS hosts gets the fleet summary
    and the hosts with problems instead (report.fleet_summary), unless all_hosts."""
    # a pipe or file gets a wide table; a terminal gets its own width (COLUMNS is honoured)
    width = None if file.isatty() else 160
    console = Console(file=file, highlight=False, soft_wrap=False, width=width, markup=False)
    if len(result.hosts) > fleet_summary.FLEET_SUMMARY_HOSTS and not all_hosts:
        fleet_summary.render(console, result)
        sev = result.severity
        console.print(
            Text(f"overall: {sev.value.upper()} (exit {int(result.exit_code)})", style=STYLE[sev])
        )
        return
    for host in result.hosts:
        _host(console, host, verbose)
    if len(result.hosts) > 1:
        groups = result.groups()
        table = Table(title=f"Fleet: {count(len(result.hosts), 'host')}", title_justify="left")
        for col in ("hosts", "severity", "check", "problem"):
            table.add_column(col)
        for g in groups:
            table.add_row(
                str(len(g.hosts)),
                Text(g.severity.value, style=STYLE[g.severity]),
                Text(printable(g.check, one_line=True)),
                Text(printable(g.summary)),
            )
        if not groups:
            table.add_row(str(len(result.hosts)), Text("ok", style="green"), "", "no problems")
        console.print(table)
    sev = result.severity
    console.print(
        Text(f"overall: {sev.value.upper()} (exit {int(result.exit_code)})", style=STYLE[sev])
    )


def _host(console: Console, host: HostReport, verbose: bool) -> None:
    head = Text(f"{printable(host.host, one_line=True)}: ", style="bold")
    head.append(host.severity.value.upper(), style=STYLE[host.severity])
    if host.failure:
        failure = printable(host.failure, one_line=True)
        head.append(f"  not audited ({failure}): {printable(host.message)}")
    console.print(head)
    shown = [
        f for f in host.findings if verbose or f.severity not in (Severity.OK, Severity.SKIPPED)
    ]
    shown.sort(key=lambda f: -f.severity.rank)
    if shown:
        table = Table(show_edge=False, pad_edge=False, expand=False)
        for col in ("severity", "check", "subject", "finding", "fix"):
            table.add_column(col, overflow="fold")
        for f in shown:
            # remote text goes in as Text, never markup: rich would eat "[drm]" as a style tag
            table.add_row(
                Text(f.severity.value, style=STYLE[f.severity]),
                Text(printable(f.check, one_line=True)),
                Text(printable(f.subject, one_line=True)),
                Text(printable(f.summary)),
                Text(printable(f.fix)),
            )
        console.print(table)
    passed = sum(1 for f in host.findings if f.severity is Severity.OK)
    skipped = sum(1 for f in host.findings if f.severity is Severity.SKIPPED)
    if not verbose and (passed or skipped):
        console.print(
            Text(f"  {passed} passed, {skipped} not applicable (--verbose shows them)", style="dim")
        )
