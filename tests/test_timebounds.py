"""tests/timebounds.py's helpers: a left-behind command ends with its group, ours never."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.timebounds import end_processes_naming, processes_naming, within


def test_end_processes_naming_ends_the_group_not_ours(tmp_path: Path) -> None:
    tag = f"{tmp_path}/cut"
    # as on a host: a shell in a group of its own, its child (`sleep`) not naming the tag
    away = subprocess.Popen(["/bin/sh", "-c", f"sleep 60; : {tag}"], start_new_session=True)
    # one process in pytest's own group (no child of its own to leave behind)
    ours = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", f"{tag}/ours"])
    try:
        assert within(lambda: len(processes_naming(tag)) == 2, 15)
        assert within(lambda: len(_children(away.pid)) == 1, 15)
        sleeper = _children(away.pid)
        assert end_processes_naming(tag) == 1
        away.wait(15)
        assert within(lambda: not Path(f"/proc/{sleeper[0]}").exists() or _zombie(sleeper[0]))
        assert ours.poll() is None  # in this process's own group: left alone
    finally:
        ours.kill()
        ours.wait(15)
        away.kill()


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if (
                entry.name.isdigit()
                and int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1]) == pid
            ):
                found.append(int(entry.name))
        except (OSError, ValueError):
            continue
    return found


def _zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True
