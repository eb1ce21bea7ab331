"""The walk over a regex's source that kb/redact.py and kb/prefixes.py share (kb/regexatoms.py):
classes and groups end where Python's own parser says they do, on every pattern of the table."""

from __future__ import annotations

import re

import pytest

from rocmprov.kb import load_table
from rocmprov.kb.prefixes import LOG_PREFIX, continued
from rocmprov.kb.regexatoms import class_end, group_close, structure


@pytest.mark.parametrize("regex,end", [("[a]b", 3), ("[]a]b", 4), ("[^]a]b", 5),
                                       (r"[\]a]b", 5), (r"[a\\]b", 5), ("[abc", 5)])  # fmt: skip
def test_a_class_ends_after_its_own_closing_bracket(regex: str, end: int) -> None:
    assert class_end(regex, 0) == end


GROUPS = [("(a)b", 2), ("((a)b)c", 5), ("(a[)]b)c", 6), (r"(a\)b)c", 5), ("(a", -1),
          ("(?P<x>[(])", 9)]  # fmt: skip


@pytest.mark.parametrize("regex,close", GROUPS)
def test_a_group_closes_at_its_own_parenthesis(regex: str, close: int) -> None:
    assert group_close(regex, 1) == close


def test_the_walk_skips_escapes_and_class_members() -> None:
    regex = r"a\(b[()|]c|(d)"
    assert [regex[i] for i in structure(regex)] == ["a", "b", "[", "c", "|", "(", "d", ")"]


def _sources() -> list[str]:
    out = set()
    for entry in load_table().entries:
        for pattern in entry.patterns:
            out.add(getattr(pattern.regex, "pattern", str(pattern.regex)))
    return sorted(out)


def test_every_class_and_group_of_the_tables_patterns_is_a_regex_of_its_own() -> None:
    """Each `(`...`)` and `[`...`]` the walk finds in a table pattern compiles alone (Python's
    parser agrees where it ends), and no group is left unclosed."""
    sources = _sources()
    assert len(sources) > 800
    groups = 0
    for regex in sources:
        for i in structure(regex):
            if regex[i] == "[":
                re.compile(regex[i : class_end(regex, i)])
            elif regex[i] == "(":
                close = group_close(regex, i + 1)
                assert close > i, regex
                # a backreference to a group outside the piece is dropped to compile it alone
                re.compile(re.sub(r"\\[1-9]|\(\?P=\w+\)", "", regex[i : close + 1]))
                groups += 1
    assert groups > 1000


@pytest.mark.parametrize("regex,breaks", [(r"[]\n]x\n", 1), (r"[^]\n]\n?y", 1),
                                          (r"[\]\n]a\n{2}\n", 2), (r"\\n[\n]\n", 1)])  # fmt: skip
def test_continued_prefixes_only_the_breaks_outside_classes(regex: str, breaks: int) -> None:
    """prefixes.continued copies a class whole with class_end (review 29R: it had its own copy
    of the walk): a break inside a class, or an escaped backslash before an n, takes no prefix."""
    out = continued(regex)
    assert out.count(LOG_PREFIX) == breaks
    assert out.replace(f"(?:\\n{LOG_PREFIX}?+)", "\\n").replace(f"{LOG_PREFIX}?+", "") == regex
    re.compile(out)
