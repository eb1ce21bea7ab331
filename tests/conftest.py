"""Shared pytest setup: the lab fixtures (real systemd hosts over SSH, see tests/lab/README.md).

Lab tests skip with a one-line reason where the lab cannot run (not root, no systemd-nspawn,
no cached base); under CI (env CI set) they fail instead, so CI can never pass by skipping.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # so `tests.lab` imports

from tests.lab import Lab, LabHost, unavailable_reason

LAB_HOSTS = int(os.environ.get("ROCMPROV_LAB_HOSTS", "4"))


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "lab: needs the lab's real systemd hosts (root, nspawn)")
    config.addinivalue_line("markers", "lab_scale: the larger lab scale tests")


def require_lab() -> None:
    """Skip (or, under CI, fail) when the lab cannot run on this machine."""
    reason = unavailable_reason()
    if reason is None:
        return
    if os.environ.get("CI"):
        pytest.fail(f"lab unavailable under CI: {reason}", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="session")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    """A started Lab with ROCMPROV_LAB_HOSTS (4) hosts: lab.hosts, lab.inventory, lab.connect()."""
    require_lab()
    the_lab = Lab(tmp_path_factory.mktemp("lab"))
    snapshot = None
    try:
        the_lab.start(LAB_HOSTS)
        yield the_lab
        snapshot = the_lab.snapshot()
    finally:
        the_lab.stop()
    if snapshot:
        assert the_lab.leftovers(*snapshot) == [], "the lab left things behind"


@pytest.fixture
def clean_host(lab: Lab) -> LabHost:
    """The lab's last host, booted pristine for this test (changes of earlier tests gone)."""
    return lab.reset(lab.hosts[-1])
