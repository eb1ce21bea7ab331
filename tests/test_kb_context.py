"""kb/context: every fact pattern is found through a literal (its prefix or the literals inside
it), and the inner-literal search finds what a plain regex scan finds."""

from __future__ import annotations

import re

import pytest

from rocmprov.kb import context
from rocmprov.kb.context import extract


def test_every_fact_pattern_has_a_literal_prefix_or_inner_literals() -> None:
    """A pattern without one is scanned by the regex engine at every position of the text."""
    bare = [
        (name, i)
        for name, prefixes in context._PREFIXES.items()
        for i, prefix in enumerate(prefixes)
        if not prefix and not context._INNER.get((name, i))
    ]
    assert bare == []
    for (name, i), literals in context._INNER.items():
        pattern = context._PATTERNS[name][i]
        assert literals and all(re.sub(r"\\(.)", r"\1", pattern).find(lit) >= 0 for lit in literals)


NOISE = "Nov 10 21:23:08 node8 systemd[1]: Started Session 8 of User root.\n" * 50


@pytest.mark.parametrize(
    "kernel",
    [
        "5.15.153.1-microsoft-standard-WSL2",
        "4.19.128-microsoft-standard",
        "6.6.36.3-microsoft-standard-WSL2",
    ],
)
def test_a_wsl_kernel_is_found_among_other_lines_as_a_plain_scan_finds_it(kernel: str) -> None:
    text = f"{NOISE}Linux DESKTOP-1 {kernel} #1 SMP x86_64 GNU/Linux\n{NOISE}"
    facts = {f.name: f for f in extract(text, ["kernel"])}
    assert facts["kernel"].value == kernel and facts["kernel"].line == 51
    plain = [m.group(1) for m in re.finditer(context._PATTERNS["kernel"][2], text)]
    assert plain == [kernel]


def test_a_wsl_literal_without_a_version_before_it_is_no_fact() -> None:
    text = f"{NOISE}see the microsoft-standard kernels and the -Microsoft builds\n"
    assert [f for f in extract(text, ["kernel"])] == []


def test_the_first_of_several_wsl_kernels_is_taken() -> None:
    text = "a 5.10.16.3-microsoft-standard-WSL2 b\nc 5.15.90.1-microsoft-standard-WSL2 d\n"
    assert extract(text, ["kernel"])[0].value == "5.10.16.3-microsoft-standard-WSL2"
