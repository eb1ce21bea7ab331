"""rocmprov's own data files (YAML tables with their sources) as Python values. Pure."""

from __future__ import annotations

from typing import Any


def load_yaml(text: str | bytes) -> Any:
    """One of our data files, parsed as safe YAML: with libyaml's loader when PyYAML has it
    (about 10x faster than the pure-Python one, same result; the release table took 0.4 s at
    every audit start)."""
    import yaml  # here: a command that reads no data file does not pay for the import

    return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
