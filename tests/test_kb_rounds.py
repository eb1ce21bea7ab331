"""Every round's counter-examples of the troubleshooting table, run in one place. Each round or
review file (tests/test_kb_round*.py, tests/test_kb_review*.py) lists (text, entry) pairs whose
first known cause must be that entry, and (text, entry) pairs whose causes must not include it,
with a comment per text saying where it comes from (most are constructed from a program's
format string); the checks themselves are tests/kbcases.py's."""

from __future__ import annotations

import importlib
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.kbcases import assert_leads, assert_silent

# module: (lists whose entry leads, lists whose entry stays out)
LISTS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "test_kb_review14": ((), ("CASES",)),
    "test_kb_review15": ((), ("CASES",)),
    "test_kb_review15_c": (("LEADS",), ("SILENT",)),
    "test_kb_review16_b": ((), ("SILENT",)),
    "test_kb_review17_b": (("LEADS",), ("SILENT",)),
    "test_kb_review18_a": (("LEADS",), ("SILENT",)),
    "test_kb_review18_b": (("LEADS",), ("SILENT",)),
    "test_kb_review18_c": (("LEADS",), ("SILENT",)),
    "test_kb_review19": (("LEADS",), ("SILENT",)),
    "test_kb_round15_e2": (("FIRST",), ("WOLVES",)),
    "test_kb_round15e1": (("LEADS",), ("SILENT",)),
    "test_kb_round16_e1": (("LEADS",), ("SILENT",)),
    "test_kb_round17_e1": (("LEADS",), ("SILENT",)),
    "test_kb_round17_e2": (("LEADS",), ()),
    "test_kb_round17_e3": (("LEADS",), ("SILENT",)),
    "test_kb_round18_e1": (("LEADS",), ("SILENT",)),
    "test_kb_round18_e2": (("LEADS",), ("SILENT",)),
    "test_kb_round18_e3": (
        ("LEADS", "SLURM_LEADS", "PODMAN_LEADS", "CTK_LEADS"),
        ("SILENT", "SLURM_SILENT", "PODMAN_SILENT", "CTK_SILENT"),
    ),
    "test_kb_round18_e5": (("LEADS",), ("SILENT",)),
    "test_kb_round18_e6": (("LEADS",), ("SILENT",)),
}


def _cases(which: int) -> Iterator[Any]:
    for module, lists in LISTS.items():
        found = importlib.import_module(f"tests.{module}")
        for name in lists[which]:
            for i, (text, entry) in enumerate(getattr(found, name)):
                yield pytest.param(text, entry, id=f"{module}.{name}[{i}]")


@pytest.mark.parametrize(("text", "entry"), list(_cases(0)))
def test_the_entry_is_the_first_cause(text: str, entry: str) -> None:
    assert_leads(text, entry)


@pytest.mark.parametrize(("text", "wolf"), list(_cases(1)))
def test_the_entry_stays_out_where_its_cause_is_wrong(text: str, wolf: str) -> None:
    assert_silent(text, wolf)


def test_every_rounds_lists_are_run_here() -> None:
    """A round file's list of (text, entry) pairs that neither LISTS nor a test of its own
    file reads would not run."""
    unread = []
    for path in sorted(Path(__file__).parent.glob("test_kb_r*.py")):
        if path.stem == Path(__file__).stem:
            continue
        module = importlib.import_module(f"tests.{path.stem}")
        named = set().union(*LISTS.get(path.stem, ((), ())))
        source = path.read_text()
        for name, value in vars(module).items():
            pairs = isinstance(value, list) and value and all(
                isinstance(v, tuple) and len(v) == 2 and all(isinstance(x, str) for x in v)
                for v in value
            )
            used_there = len(re.findall(rf"\b{name}\b", source)) > 1
            if pairs and name.isupper() and name not in named and not used_there:
                unread.append(f"{path.stem}.{name}")
    assert unread == []
