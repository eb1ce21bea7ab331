"""Small helpers shared by the spine's tests: run the real CLI as a user would."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass


@dataclass
class Run:
    rc: int
    stdout: str
    stderr: str


def rocmprov(*args: str, stdin: str | None = None, env: dict | None = None) -> Run:
    """`python -m rocmprov ARGS` in a subprocess: the real entry point, exit code and streams."""
    full_env = {**os.environ, "NO_COLOR": "1", **(env or {})}
    proc = subprocess.run(
        [sys.executable, "-m", "rocmprov", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=300,
        env=full_env,
        check=False,
    )
    return Run(proc.returncode, proc.stdout, proc.stderr)


def assert_one_line_error(run: Run) -> None:
    """Bad input: exactly one line on stderr, starting with 'rocmprov:', never a traceback."""
    assert "Traceback" not in run.stderr
    lines = [line for line in run.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, run.stderr
    assert lines[0].startswith("rocmprov: ")
