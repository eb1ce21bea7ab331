"""rocmprov's own data files (YAML tables with their sources), read by the stage that owns each."""

from __future__ import annotations

from typing import Any


def load_yaml(text: str | bytes) -> Any:
    """One of our data files, parsed as safe YAML: with libyaml's loader when PyYAML has it
    (about 10x faster than the pure-Python one, same result; the release table took 0.4 s at
    every audit start)."""
    import yaml  # here, not at import: resources.files("rocmprov.data") imports this package

    return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
