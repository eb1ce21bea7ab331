"""Where the packaged playbooks are: in the wheel (rocmprov.playbooks), or beside the package
in a source checkout (the top-level playbooks/ directory)."""

from __future__ import annotations

import importlib.resources
from pathlib import Path


def playbooks_dir() -> Path:
    try:
        return Path(str(importlib.resources.files("rocmprov.playbooks")))
    except ModuleNotFoundError:  # run from a source tree that was not installed editable
        return Path(__file__).resolve().parent.parent / "playbooks"
