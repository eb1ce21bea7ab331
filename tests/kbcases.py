"""Checks shared by the per-round counter-example files of the troubleshooting table
(tests/test_kb_round*.py, tests/test_kb_review*.py): a text's first known cause, and an entry
that must stay out of a text's causes; and a compiled table whose regexes are wrapped (to count
the characters the scan hands them, tests/test_kb_linear.py)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from rocmprov.kb import match
from rocmprov.kb.compiled import Compiled
from rocmprov.kb.target import Target

# a target's lazily compiled parts
FORMS = ("regex", "width", "prefix", "firsts", "head", "whole", "unless", "near")


def assert_leads(text: str, entry: str) -> None:
    """`entry` is explain's first known cause for `text`."""
    found = [m.id for m in match(text)]
    assert found and found[0] == entry, found


def assert_silent(text: str, wolf: str) -> None:
    """`wolf` is none of explain's known causes for `text`."""
    assert wolf not in [m.id for m in match(text)]


def wrapped(compiled: Compiled, wrap: Callable[[Any], Any], *forms: str) -> Compiled:
    """`compiled` with each target's `forms` (of FORMS) replaced by wrap(the compiled regex)."""
    done: dict[int, Target] = {}

    def one(t: Target) -> Target:
        if id(t) not in done:
            new = dataclasses.replace(t)
            new.__dict__.update({f: getattr(t, f) for f in FORMS})  # compiled now, as they are
            new.__dict__.update({f: wrap(getattr(t, f)) for f in forms})
            done[id(t)] = new
        return done[id(t)]

    targets = {a: tuple(one(t) for t in ts) for a, ts in compiled.targets.items()}
    return dataclasses.replace(compiled, targets=targets)
