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
