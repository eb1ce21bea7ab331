"""The shape of the package (docs/architecture.md): every import of rocmprov, read with ast
(nothing is imported), runs down the stages below and never back up; no circle between packages
or modules; at most six loose modules at the top of rocmprov/.

Lazy imports inside functions and imports under TYPE_CHECKING count like any other: a circle
hidden in a function is still a circle.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "rocmprov"

# Who may import whom, bottom row first: a package (or loose module) may import only what sits
# in a row BELOW its own; two entries of one row never import each other. The same list, drawn,
# is in docs/architecture.md. A new package goes in the row that says what it may read.
STAGES: tuple[tuple[str, ...], ...] = (
    ("rocmprov", "rocmprov.exitcodes", "rocmprov.paths"),  # __version__, exit codes, where
    ("rocmprov.model",),  # Severity, Finding, HostReport, AuditResult
    ("rocmprov.store", "rocmprov.parse"),  # private files; text -> typed values (pure)
    ("rocmprov.knowledge", "rocmprov.kb"),  # release table, support matrices; troubleshooting
    ("rocmprov.data",),  # the data files and their checker (reads knowledge)
    ("rocmprov.inventory",),  # inventory -> HostSpec
    ("rocmprov.transport",),  # local | ssh: one CommandResult
    ("rocmprov.collect",),  # probes -> raw outputs (a bundle), scrubbed
    ("rocmprov.facts",),  # bundle -> HostFacts (through parse)
    ("rocmprov.checks",),  # facts + policy -> findings (pure)
    ("rocmprov.audit",),  # one host: collect -> facts -> checks -> HostReport
    ("rocmprov.actions", "rocmprov.active"),  # repair plan, verify; level-2 tools
    ("rocmprov.fleet",),  # fan-out over an inventory, fleet checks, drift
    ("rocmprov.report",),  # one renderer per format
    ("rocmprov.provision", "rocmprov.gate"),  # ansible-runner; the Slurm node gate
    ("rocmprov.commands",),  # one module per command: argparse -> typed options
    ("rocmprov.cli",),  # the entry point: argparse, dispatch to commands
    ("rocmprov.__main__",),  # python -m rocmprov
)
LOOSE = {"__init__", "__main__", "cli", "exitcodes", "paths", "model"}
MAX_LOOSE = 6


def _modules() -> dict[str, Path]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


MODULES = _modules()


def _imports(name: str, path: Path) -> set[str]:
    """The rocmprov modules that `name` imports, anywhere in its file."""
    is_package = path.name == "__init__.py"
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name.split(".")[0] == "rocmprov")
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: resolve against this module's package
                here = name.split(".") if is_package else name.split(".")[:-1]
                here = here[: len(here) - (node.level - 1)]
                base = ".".join([*here, *([node.module] if node.module else [])])
            if base.split(".")[0] != "rocmprov":
                continue
            for alias in node.names:  # `from pkg import module` imports that module
                sub = f"{base}.{alias.name}"
                out.add(sub if sub in MODULES else base)
    return out


IMPORTS = {name: _imports(name, path) for name, path in MODULES.items()}


def unit(module: str) -> str:
    """The package (rocmprov.checks) or loose module (rocmprov.model) that a module belongs to."""
    return ".".join(module.split(".")[:2])


RANK = {u: row for row, units in enumerate(STAGES) for u in units}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one node (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_walk_sees_the_imports() -> None:
    """The walk itself: it finds the arrows it must (else every other test here passes empty)."""
    assert len(MODULES) > 50
    assert "rocmprov.facts.host" in IMPORTS["rocmprov.checks.pcie"]
    assert "rocmprov.model" in IMPORTS["rocmprov.report.json_report"]
    assert "rocmprov" in IMPORTS["rocmprov.report.json_report"]  # from rocmprov import __version__


def test_every_package_has_a_stage() -> None:
    units = {unit(m) for m in MODULES}
    missing = sorted(units - RANK.keys())
    assert not missing, f"add these to STAGES (and docs/architecture.md): {missing}"
    stale = sorted(RANK.keys() - units)
    assert not stale, f"STAGES names what no longer exists: {stale}"


def test_few_loose_modules() -> None:
    loose = sorted(p.stem for p in PACKAGE.glob("*.py"))
    assert len(loose) <= MAX_LOOSE, f"{len(loose)} loose modules in rocmprov/: {loose}"
    assert set(loose) <= LOOSE, f"put these in a package of their stage: {set(loose) - LOOSE}"


def test_imports_run_down_the_stages() -> None:
    """A package imports only packages of a lower row: none of the same row, none above."""
    wrong = []
    for module, targets in IMPORTS.items():
        for target in targets:
            a, b = unit(module), unit(target)
            if a != b and a in RANK and b in RANK and RANK[b] >= RANK[a]:
                wrong.append(f"{module} -> {target} ({a} row {RANK[a]}, {b} row {RANK[b]})")
    assert not wrong, "imports running up (or across) the stages:\n" + "\n".join(sorted(wrong))


def test_no_circle_between_packages() -> None:
    graph: dict[str, set[str]] = defaultdict(set)
    for module, targets in IMPORTS.items():
        graph[unit(module)].update(unit(t) for t in targets if unit(t) != unit(module))
    assert _cycles(graph) == []


def test_no_circle_between_modules() -> None:
    """Within a package too: an import circle between two modules (even a lazy one) means the
    code in them belongs together or a third module is missing."""
    graph = {m: {t for t in targets if t != m} for m, targets in IMPORTS.items()}
    # a module importing its own package's __init__ (from rocmprov.report import FORMATS) is
    # part of the package, not a circle through it
    for module, targets in graph.items():
        graph[module] = {t for t in targets if not module.startswith(t + ".")}
    assert _cycles(graph) == []


def test_the_doc_names_every_stage() -> None:
    """docs/architecture.md's table is this list: every package and loose module is in it."""
    doc = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    for name in RANK:
        short = name.removeprefix("rocmprov.") if name != "rocmprov" else "__init__"
        assert f"`{short}/`" in doc or f"`{short}`" in doc, name


# modules with a command line of their own (python -m ...), not rocmprov's commands
OWN_COMMAND_LINE = {"rocmprov.data.check"}


def test_argparse_stays_in_the_commands() -> None:
    """Below commands/ functions take typed options (fleet.options.FleetOptions, ...), never an
    argparse Namespace: argparse is imported by cli and commands/ only."""
    users = set()
    for name, path in MODULES.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = {a.name for a in node.names}
            elif isinstance(node, ast.ImportFrom):
                names = {node.module or ""}
            else:
                continue
            if "argparse" in names:
                users.add(name)
    below = {
        m for m in users if unit(m) not in ("rocmprov.commands", "rocmprov.cli")
    } - OWN_COMMAND_LINE
    assert not below, f"argparse below commands/: {sorted(below)}"


@pytest.mark.parametrize(
    ("module", "target", "allowed"),
    [
        ("rocmprov.checks.pcie", "rocmprov.facts.host", True),
        ("rocmprov.facts.host", "rocmprov.checks.pcie", False),
        ("rocmprov.parse.lspci", "rocmprov.collect.bundle", False),
        ("rocmprov.actions.verify", "rocmprov.active.runner", False),
        ("rocmprov.commands.audit", "rocmprov.fleet.fanout", True),
    ],
)
def test_the_rule_itself(module: str, target: str, allowed: bool) -> None:
    assert (RANK[unit(target)] < RANK[unit(module)]) is allowed
