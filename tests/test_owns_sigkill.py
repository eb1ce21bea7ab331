"""apply killed with SIGKILL leaves no ansible-playbook behind (issue 26, r13): ansible-runner
starts it in a session of its own with SIGHUP ignored, so without rocmprov's PR_SET_PDEATHSIG
wrapper (rocmprov/provision/deathsig.py) it and its task workers ran on under init, forever."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from rocmprov.provision import deathsig
from tests.test_apply_strategy import _processes_naming, sleeping_apply


def test_sigkilled_apply_leaves_no_ansible_playbook(tmp_path: Path) -> None:
    inv, script = sleeping_apply(tmp_path, "killed", 300)
    child = subprocess.Popen(
        [sys.executable, "-c", script],
        env={**os.environ, "PYTHONPATH": str(Path.cwd())},
        start_new_session=True,
    )
    left: list[int] = []
    try:
        deadline = time.monotonic() + 120
        while len(_processes_naming(str(inv))) < 4 and time.monotonic() < deadline:
            assert child.poll() is None, "apply ended early"
            time.sleep(0.2)
        time.sleep(1)
        os.killpg(child.pid, signal.SIGKILL)  # as a CI job timeout or `kill -9 -PGID` does
        child.wait(timeout=30)
        # ansible-playbook's own cleanup after SIGINT: polled, the test ends as soon as it has
        deadline = time.monotonic() + 30
        while _processes_naming(str(inv)) and time.monotonic() < deadline:
            time.sleep(0.5)
        left = _processes_naming(str(inv))
        assert left == [], f"left running after SIGKILL of apply: {left}"
    finally:
        for pid in left:  # this test's own orphans only (their command line names its tmp_path)
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def test_the_run_record_shows_the_command_without_the_wrapper() -> None:
    cmd = ["ansible-playbook", "-i", "inv.ini", "site.yml"]
    wrapped = deathsig.wrap(cmd)
    assert wrapped[-4:] == cmd and wrapped[3] == str(os.getpid())
    assert deathsig.unwrap(wrapped) == cmd
    assert deathsig.unwrap(cmd) == cmd


def test_the_wrapper_refuses_when_its_parent_is_gone_already() -> None:
    """A parent pid that is not the wrapper's parent: it ends at once, running nothing."""
    cp = subprocess.run(
        [sys.executable, "-I", deathsig.SCRIPT, "1", "sh", "-c", "echo ran"],
        capture_output=True, text=True, timeout=30, check=False,
    )  # fmt: skip
    assert cp.returncode == 1 and "ran" not in cp.stdout
    cp = subprocess.run(
        [sys.executable, "-I", deathsig.SCRIPT, str(os.getpid()), "sh", "-c", "echo ran"],
        capture_output=True, text=True, timeout=30, check=False,
    )  # fmt: skip
    assert cp.returncode == 0 and cp.stdout == "ran\n"
