"""No data file repeats a key in one mapping.

YAML lets a mapping name a key twice and PyYAML keeps the last value silently: a merge of two
branches that each gave an entry `conditions:` (session 24, compiler.cmake-hip-lang-package-missing)
parsed, and one branch's condition was dropped without any test noticing. The loader here is
PyYAML's safe loader with one check added; the packaged loader stays libyaml's (fast) one.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
import yaml

DATA = Path(__file__).resolve().parent.parent / "rocmprov" / "data"
FILES = sorted(DATA.rglob("*.yaml"))


class _Repeats(Exception):
    pass


class _StrictLoader(yaml.SafeLoader):
    pass


def _mapping(loader: _StrictLoader, node: yaml.MappingNode, deep: bool = False) -> dict:
    keys = Counter(loader.construct_object(key, deep=True) for key, _ in node.value)
    repeated = sorted(str(key) for key, count in keys.items() if count > 1)
    if repeated:
        raise _Repeats(f"{', '.join(repeated)} repeated in the mapping at {node.start_mark}")
    return yaml.SafeLoader.construct_mapping(loader, node, deep=deep)


_StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping)


def strict_load(text: str) -> object:
    return yaml.load(text, Loader=_StrictLoader)  # a SafeLoader subclass: safe


def test_the_check_sees_a_repeated_key() -> None:
    with pytest.raises(_Repeats, match="conditions repeated"):
        strict_load("- id: a\n  conditions: [x]\n  fix: y\n  conditions: [z]\n")
    assert strict_load("- id: a\n  conditions: [x]\n- id: b\n  conditions: [z]\n")


def test_there_are_data_files() -> None:
    assert len(FILES) > 20
    assert any(path.parent.name == "kb" for path in FILES)


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(DATA)))
def test_no_mapping_repeats_a_key(path: Path) -> None:
    strict_load(path.read_text(encoding="utf-8"))
