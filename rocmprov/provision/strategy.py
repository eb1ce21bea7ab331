"""Which Ansible strategy apply runs: Mitogen's (rocmprov_mitogen) where it is usable, else
Ansible's own `linear`.

Mitogen rides a strategy hook that ansible-core has deprecated and that new ansible-core
releases have broken before (mitogen-hq/mitogen#1522, #1539), so it is used only with the
ansible-core minors tested here (pyproject.toml caps ansible-core to the same range) and only
when it loads; fallback.py reruns hosts it failed with `linear`.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import subprocess
import sys
from pathlib import Path

from packaging.version import InvalidVersion, Version

STRATEGY_DIR = Path(__file__).resolve().parent / "strategy_plugins"
FAST_STRATEGY = "rocmprov_mitogen"
# ansible-core minors that CI runs the lab's applies with under Mitogen's strategy.
MITOGEN_TESTED = (Version("2.19"), Version("2.20"))  # [from, to)
LOAD_TIMEOUT_S = 60.0


def strategy_env(fast: bool = True) -> dict[str, str]:
    """The strategy settings: Mitogen's linear strategy (strategy_plugins/rocmprov_mitogen.py)
    when asked for and Mitogen for Ansible is importable; else Ansible's own `linear`."""
    if not fast or importlib.util.find_spec("ansible_mitogen") is None:
        return {"ANSIBLE_STRATEGY": "linear"}
    return {"ANSIBLE_STRATEGY_PLUGINS": str(STRATEGY_DIR), "ANSIBLE_STRATEGY": FAST_STRATEGY}


def mitogen_problem() -> str | None:
    """Why Mitogen's strategy cannot run here (one line), or None when it can."""
    if importlib.util.find_spec("ansible_mitogen") is None:
        return "Mitogen for Ansible is not installed"
    try:
        core = Version(importlib.metadata.version("ansible-core"))
    except (importlib.metadata.PackageNotFoundError, InvalidVersion):
        return "the ansible-core version cannot be read"
    low, high = MITOGEN_TESTED
    if not low <= Version(f"{core.major}.{core.minor}") < high:
        return f"ansible-core {core} is outside the range tested with Mitogen (>={low},<{high})"
    # Load it as ansible-playbook would, in a child: a Mitogen that breaks on this
    # ansible-core fails here, not halfway through a run.
    try:
        proc = subprocess.run(
            [sys.executable, "-c", "import ansible_mitogen.loaders, ansible_mitogen.strategy"],
            capture_output=True,
            text=True,
            timeout=LOAD_TIMEOUT_S,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"Mitogen could not be loaded ({type(exc).__name__})"
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["no message"])[-1]
        return f"Mitogen does not load: {last[:200]}"
    return None
