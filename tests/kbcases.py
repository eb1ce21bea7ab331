"""Checks shared by the per-round counter-example files of the troubleshooting table
(tests/test_kb_round*.py, tests/test_kb_review*.py): a text's first known cause, and an entry
that must stay out of a text's causes."""

from __future__ import annotations

from rocmprov.kb import match


def assert_leads(text: str, entry: str) -> None:
    """`entry` is explain's first known cause for `text`."""
    found = [m.id for m in match(text)]
    assert found and found[0] == entry, found


def assert_silent(text: str, wolf: str) -> None:
    """`wolf` is none of explain's known causes for `text`."""
    assert wolf not in [m.id for m in match(text)]
