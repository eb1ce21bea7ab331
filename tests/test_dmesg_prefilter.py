"""The dmesg keyword prefilter never changes the result: compared with every rule on every line."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from rocmprov.parse import dmesg as d
from tests.fixtureload import all_fixtures

LINES = [line for fx in all_fixtures(("dmesg",)) for line in fx.text.splitlines()]


def _all_rules(text: str) -> d.Dmesg:
    """The same parse with a keyword list that lets every rule run on every line."""
    saved = dict(d._KEYWORDS)
    try:
        for tag in d._KEYWORDS:
            d._KEYWORDS[tag] = ("",)  # "" is in every string
        return d.parse_dmesg(text)
    finally:
        d._KEYWORDS.clear()
        d._KEYWORDS.update(saved)


def test_fixtures_give_the_same_events_as_every_rule_everywhere() -> None:
    text = "\n".join(LINES)
    fast = d.parse_dmesg(text)
    assert fast == _all_rules(text)
    assert len(fast.events) > 20  # the fixtures are full of failures


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(LINES), st.text(max_size=120)), max_size=40))
def test_any_mix_of_real_lines_and_noise(lines: list[str]) -> None:
    text = "\n".join(lines)
    assert d.parse_dmesg(text) == _all_rules(text)
