"""CI runs the two commands of the README's first screen, exactly as a new user types them."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def test_ci_runs_the_readme_commands_verbatim() -> None:
    readme = (REPO / "README.md").read_text()
    first_screen = readme[: readme.index("\n## ")]
    commands = re.findall(r"```sh\n(.+?)\n```", first_screen)
    assert len(commands) == 2, commands
    assert "rocmprov audit" in commands[0] and "pytest" in commands[1]
    ci = (REPO / ".ci" / "run").read_text().splitlines()
    for command in commands:
        assert command in ci, f".ci/run does not run the README's command: {command}"


def test_a_skipped_test_fails_the_run(tmp_path: Path) -> None:
    """A skip is a failure (issue 13.14): the same run passes only with the explicit opt-out."""
    import os
    import subprocess
    import sys

    (tmp_path / "test_one.py").write_text(
        "import pytest\n"
        "def test_skips():\n    pytest.skip('no sshd')\n"
        "def test_passes():\n    pass\n"
    )
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "tests.conftest", "--rootdir", str(tmp_path),
           str(tmp_path / "test_one.py")]  # fmt: skip
    env = {k: v for k, v in os.environ.items() if k != "ROCMPROV_ALLOW_SKIP"}
    strict = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    assert strict.returncode == 1, strict.stdout
    assert "test_one.py::test_skips: Skipped: no sshd" in strict.stdout
    allowed = subprocess.run(cmd, cwd=REPO, env={**env, "ROCMPROV_ALLOW_SKIP": "1"},
                             capture_output=True, text=True, timeout=120)  # fmt: skip
    assert allowed.returncode == 0, allowed.stdout
