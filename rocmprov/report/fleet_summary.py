"""The terminal view of a fleet of more than a few hosts: counts per severity, the checks that
fail and on how many hosts, the drift, and one line per host with a problem; not every healthy
host's table (`--all-hosts` prints those). Remote text goes through report.safe.printable."""

from __future__ import annotations

from collections import Counter

from rich.console import Console
from rich.table import Table
from rich.text import Text

from rocmprov.fleet.drift import CHECK as DRIFT
from rocmprov.model import AuditResult, FleetGroup, HostReport, Severity, count
from rocmprov.report.safe import STYLE, printable

FLEET_SUMMARY_HOSTS = 5  # more hosts than this: the summary instead of every host's table
MAX_PROBLEM_ROWS = 200  # the hosts-with-problems table stops here (the JSON has every host)

ORDER = (Severity.CRITICAL, Severity.WARNING, Severity.UNKNOWN, Severity.OK)


def problem(h: HostReport) -> bool:
    return h.severity.rank >= Severity.UNKNOWN.rank


def render(console: Console, result: AuditResult) -> None:
    hosts = result.hosts
    per = Counter(h.severity if h.severity is not Severity.SKIPPED else Severity.OK for h in hosts)
    line = Text(f"Fleet: {count(len(hosts), 'host')}  ", style="bold")
    for sev in ORDER:
        line.append(f"{sev.value} {per.get(sev, 0)}  ", style=STYLE[sev])
    console.print(line)

    groups = failing_checks(result)
    checks = Table(title="Checks that fail", title_justify="left")
    for col in ("hosts", "severity", "check", "problem"):
        checks.add_column(col, overflow="fold")
    for g in groups[:MAX_PROBLEM_ROWS]:
        checks.add_row(
            str(len(g.hosts)),
            Text(g.severity.value, style=STYLE[g.severity]),
            Text(printable(g.check, one_line=True)),
            Text(printable(g.summary)),
        )
    if len(groups) > MAX_PROBLEM_ROWS:
        checks.add_row(f"... {len(groups) - MAX_PROBLEM_ROWS} more", "", "", "")
    if not groups:
        checks.add_row(str(len(hosts)), Text("ok", style="green"), "", "no failing check")
    console.print(checks)
    _drift(console, result)

    bad = sorted((h for h in hosts if problem(h)), key=lambda h: (-h.severity.rank, h.host))
    table = Table(
        title=f"Hosts with problems: {len(bad)} of {len(hosts)} (--all-hosts shows every host)",
        title_justify="left",
    )
    for col in ("host", "severity", "problems"):
        table.add_column(col, overflow="fold")
    for h in bad[:MAX_PROBLEM_ROWS]:
        table.add_row(
            Text(printable(h.host, one_line=True)),
            Text(h.severity.value, style=STYLE[h.severity]),
            Text(printable(_problems(h))),
        )
    if len(bad) > MAX_PROBLEM_ROWS:
        table.add_row(f"... {len(bad) - MAX_PROBLEM_ROWS} more", "", "see --format json or html")
    console.print(table)


def failing_checks(result: AuditResult) -> list[FleetGroup]:
    """One row per check and severity (not per summary: "GPU 3: 17 correctable ECC errors"
    differs on every host, and 1,000 hosts would give thousands of rows). The row shows the
    most common summary and how many other wordings it stands for."""
    rows: dict[tuple[str, Severity], tuple[list[str], Counter[str]]] = {}
    for g in result.groups():
        if g.check.startswith(DRIFT + "."):
            continue
        hosts, summaries = rows.setdefault((g.check, g.severity), ([], Counter()))
        hosts.extend(g.hosts)
        summaries[g.summary] += len(g.hosts)
    out = []
    for (check, sev), (hosts, summaries) in rows.items():
        summary = summaries.most_common(1)[0][0]
        if len(summaries) > 1:
            summary += f" (and {len(summaries) - 1} other finding(s) of this check)"
        out.append(FleetGroup(check, sev, summary, tuple(dict.fromkeys(hosts))))
    out.sort(key=lambda g: (-g.severity.rank, -len(g.hosts), g.check))
    return out


def _drift(console: Console, result: AuditResult) -> None:
    rows: dict[tuple[str, str, str], list[str]] = {}
    for h in result.hosts:
        for f in h.findings:
            if f.check.startswith(DRIFT + ".") and f.severity is not Severity.OK:
                rows.setdefault((f.check, f.actual, f.expected), []).append(h.host)
    if not rows:
        return
    table = Table(title="Drift", title_justify="left")
    for col in ("hosts", "field", "value", "reference", "which hosts"):
        table.add_column(col, overflow="fold")
    ordered = sorted(rows.items(), key=lambda x: -len(x[1]))
    for (check, actual, expected), names in ordered[:MAX_PROBLEM_ROWS]:
        shown = ", ".join(names[:8]) + (f" (+{len(names) - 8})" if len(names) > 8 else "")
        table.add_row(
            str(len(names)),
            Text(printable(check.removeprefix(DRIFT + "."), one_line=True)),
            Text(printable(actual, one_line=True)),
            Text(printable(expected, one_line=True)),
            Text(printable(shown, one_line=True)),
        )
    if len(ordered) > MAX_PROBLEM_ROWS:
        table.add_row(f"... {len(ordered) - MAX_PROBLEM_ROWS} more", "", "", "", "")
    console.print(table)


def _problems(h: HostReport) -> str:
    if h.failure:
        return f"not audited ({h.failure}): {h.message}"
    bad = sorted(
        (f for f in h.findings if f.severity.rank >= Severity.UNKNOWN.rank),
        key=lambda f: -f.severity.rank,
    )
    names = [f.check for f in bad]
    return ", ".join(names[:6]) + (f" (+{len(names) - 6})" if len(names) > 6 else "")
