"""Shared pytest setup: the lab fixtures (real systemd hosts over SSH, see tests/lab/README.md).

Lab tests skip with a one-line reason where the lab cannot run (not root, no systemd-nspawn,
no cached base); under CI (env CI set) they fail instead, so CI can never pass by skipping.
Any skipped test makes the whole run fail (exit 1, the skipped tests listed): the README's test
command installs everything the suite needs, so on a fresh machine nothing may skip. A developer
who knowingly runs part of the suite somewhere lesser sets ROCMPROV_ALLOW_SKIP=1.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # so `tests.lab` imports
from tests.lab import Lab, LabHost, amdrepo, unavailable_reason
from tests.lab.amdrepo import AmdRepos, Served

LAB_HOSTS = int(os.environ.get("ROCMPROV_LAB_HOSTS", "4"))


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "lab: needs the lab's real systemd hosts (root, nspawn)")
    config.addinivalue_line("markers", "lab_scale: the larger lab scale tests")
    config.addinivalue_line("markers", "long: a test file that takes minutes (runs first)")


LAB_FIXTURES = frozenset(("lab", "make_lab", "clean_host", "amd_mirror", "lab_available"))


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Files marked `long` run first, then the other files whose tests boot lab hosts.
    pytest-xdist (--dist loadfile --no-loadscope-reorder: by default, xdist 3.6 and later
    reorder the files by their number of tests, which put these last) hands files to workers
    in this order, so the long, mostly
    waiting lab files start at once on every worker and the many short in-process files fill
    the gaps at the end, instead of one worker finishing a long file alone while the others
    idle."""
    def needs_lab(item: pytest.Item) -> bool:
        names = getattr(item, "fixturenames", ())
        return item.get_closest_marker("lab") is not None or not LAB_FIXTURES.isdisjoint(names)

    lab_files = {item.path for item in items if needs_lab(item)}
    # files marked `long` (minutes each in CI's --durations list) start before the other lab
    # files: the last file to start is then a short one, not a ten-minute one
    long_files = {item.path for item in items if item.get_closest_marker("long") is not None}
    items.sort(key=lambda item: (item.path not in long_files, item.path not in lab_files))


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    skipped = terminalreporter.stats.get("skipped", [])
    if not skipped or os.environ.get("ROCMPROV_ALLOW_SKIP") == "1":
        return
    terminalreporter.section("skipped tests are failures here", sep="=", red=True, bold=True)
    for report in skipped:
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        terminalreporter.write_line(f"{report.nodeid}: {reason}")


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    skipped = reporter.stats.get("skipped", []) if reporter is not None else []
    if skipped and exitstatus == 0 and os.environ.get("ROCMPROV_ALLOW_SKIP") != "1":
        session.exitstatus = 1


def require_lab() -> None:
    """Skip (or, under CI, fail) when the lab cannot run on this machine."""
    reason = unavailable_reason()
    if reason is None:
        return
    if os.environ.get("CI"):
        pytest.fail(f"lab unavailable under CI: {reason}", pytrace=False)
    pytest.skip(reason)


def stop_and_check(lab: Lab) -> None:
    """Stop a lab and fail if any of its netns, mounts, processes, cgroups or rules is left."""
    snapshot = lab.snapshot() if lab.number is not None else None
    lab.stop()
    if snapshot:
        assert lab.leftovers(*snapshot) == [], "the lab left things behind"


@pytest.fixture
def lab_available() -> None:
    """For tests that start their own lab: skip (or fail under CI) where it cannot run."""
    require_lab()


@pytest.fixture(scope="session")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    """A started Lab with ROCMPROV_LAB_HOSTS (4) hosts: lab.hosts, lab.inventory, lab.connect()."""
    require_lab()
    the_lab = Lab(tmp_path_factory.mktemp("lab"))
    try:
        the_lab.start(LAB_HOSTS)
        yield the_lab
    finally:
        stop_and_check(the_lab)


@pytest.fixture
def clean_host(lab: Lab) -> LabHost:
    """The lab's last host, booted pristine for this test (changes of earlier tests gone)."""
    return lab.reset(lab.hosts[-1])


@pytest.fixture(scope="session")
def amd_repos(tmp_path_factory: pytest.TempPathFactory) -> AmdRepos:
    """Every apt repository of the release table, signed, at AMD's paths (built once, seconds)."""
    return amdrepo.build(tmp_path_factory.mktemp("amdrepos") / "root")


@pytest.fixture(scope="session")
def amd_mirror(lab: Lab, amd_repos: AmdRepos) -> Served:
    """amd_repos served on the session lab's bridge; .mirrors is rocmprov_mirrors for apply."""
    return amdrepo.serve(lab, amd_repos)


@pytest.fixture
def make_lab(tmp_path: Path) -> Iterator[Callable[[int], Lab]]:
    """make_lab(n): a Lab of its own with n started hosts, stopped (and checked) after the test."""
    require_lab()
    labs: list[Lab] = []

    def make(n: int) -> Lab:
        new = Lab(tmp_path / f"lab{len(labs)}")
        labs.append(new)
        new.start(n)
        return new

    yield make
    for one in labs:
        stop_and_check(one)
