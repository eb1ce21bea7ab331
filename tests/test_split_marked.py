"""remote.split_marked: the probe script's output split by str.find, exactly as the regex did."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from rocmprov.collect.probes import Probe
from rocmprov.collect.remote import build_script, split_marked

HEAD = "@@rocmprov-ab12 "


def by_regex(text: str, head: str) -> list[str]:
    return re.split(rf"^{re.escape(head)}([^\n]*)\n", text, flags=re.MULTILINE)


pieces = st.lists(
    st.sampled_from([HEAD, "@@rocmprov-ab12", "\n", "x", " ", "begin p", "end p 0 1 2", "@@", "é"]),
    max_size=40,
).map("".join)


@settings(max_examples=3000, deadline=None)
@given(pieces)
def test_same_split_as_the_regex(text: str) -> None:
    assert split_marked(text, HEAD) == by_regex(text, HEAD)


def test_edges() -> None:
    texts = ["", HEAD, HEAD + "start 1", HEAD + "start 1\n", "a\n" + HEAD + "x\nbody\n"]
    texts += ["a" + HEAD + "x\n", HEAD + "\n" + HEAD + "\n", "\n" + HEAD + "done\n"]
    for text in texts:
        assert split_marked(text, HEAD) == by_regex(text, HEAD), text
    assert split_marked("a\n" + HEAD + "end p 0\nrest", HEAD) == ["a\n", "end p 0", "rest"]


def test_script_body_is_shared_but_the_marker_is_per_host() -> None:
    probes = (Probe("a", "A", "echo a"), Probe("b", "B", "id", needs_root=True))
    one = build_script(probes, "n1", sudo_argv=("sudo", "-n", "--"))
    two = build_script(probes, "n2", sudo_argv=("sudo", "-n", "--"))
    assert one.splitlines()[0] == "M=@@rocmprov-n1" and two.splitlines()[0] == "M=@@rocmprov-n2"
    assert one.splitlines()[1:] == two.splitlines()[1:]
    assert "sudo -n -- true" in one
    assert "sudo" not in build_script(probes, "n3")
