"""The command line as a user meets it: help, version, exit codes, bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rocmprov import __version__
from rocmprov.cli import COMMANDS, build_parser
from rocmprov.exitcodes import Exit
from tests.helpers import assert_one_line_error, rocmprov


def test_version_and_help() -> None:
    run = rocmprov("--version")
    assert run.rc == 0 and run.stdout.strip() == f"rocmprov {__version__}"
    run = rocmprov("--help")
    assert run.rc == 0
    for name in COMMANDS:
        assert name in run.stdout


def test_help_does_not_import_ansible_or_paramiko() -> None:
    import subprocess
    import sys

    code = (
        "import sys; from rocmprov.cli import build_parser; build_parser(); "
        "heavy = [m for m in ('ansible', 'ansible_runner', 'paramiko', 'rich', 'pyudev') "
        "if m in sys.modules]; print(','.join(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


@pytest.mark.parametrize(
    "argv",
    [
        ["--no-such-flag"],
        ["audit", "--no-such-flag"],
        ["audit", "--format", "yaml"],
        ["nonsense"],
        ["audit", "--bundle", "/nonexistent/bundle"],
        ["collect"],
    ],
)
def test_usage_errors_exit_64_with_one_line(argv: list[str]) -> None:
    run = rocmprov(*argv)
    assert run.rc == Exit.USAGE, run
    assert_one_line_error(run)


def test_unknown_format_in_json_mode_still_one_document() -> None:
    run = rocmprov("audit", "--bundle", "/nonexistent", "--format", "json")
    assert run.rc == Exit.USAGE
    doc = json.loads(run.stdout)
    assert doc["schema"] == "rocmprov.audit/1"
    assert "no such bundle" in doc["error"]


def test_bad_bundles_exit_3(tmp_path: Path) -> None:
    not_tar = tmp_path / "garbage.tar.gz"
    not_tar.write_bytes(b"\x00\x01 not a tarball")
    other = tmp_path / "other"
    other.mkdir()
    (other / "manifest.json").write_text('{"schema": "someone.else/2", "probes": []}')
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "manifest.json").write_text("{not json")
    empty = tmp_path / "empty"
    empty.mkdir()
    for path, needle in (
        (not_tar, "cannot read"),
        (other, "someone.else/2"),
        (broken, "not JSON"),
        (empty, "no manifest"),
    ):
        run = rocmprov("audit", "--bundle", str(path))
        assert run.rc == Exit.UNKNOWN, (path, run)
        assert_one_line_error(run)
        assert needle in run.stderr


def test_unreadable_bundle_exit_3(tmp_path: Path) -> None:
    d = tmp_path / "b"
    d.mkdir()
    (d / "manifest.json").mkdir()  # unreadable as a file, even for root
    (d / "uname.out").write_text("6.8.0\n")
    run = rocmprov("audit", "--bundle", str(d))
    assert run.rc == Exit.UNKNOWN
    assert_one_line_error(run)
    assert "cannot read bundle" in run.stderr


def test_every_command_has_help() -> None:
    parser = build_parser()
    for name in COMMANDS:
        run = rocmprov(name, "--help")
        assert run.rc == 0, name
        assert name in run.stdout
    assert parser.prog == "rocmprov"


_IMPORTS_OF_HELP = """
import contextlib, io, sys
before = set(sys.modules)
from rocmprov.cli import main
with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):
    main(["--help"])
print(" ".join(sorted({m.split(".")[0] for m in set(sys.modules) - before})))
"""


def test_help_imports_only_the_standard_library() -> None:
    """`rocmprov --help` loads no third-party module: a regression to importing ansible (or
    paramiko, yaml, rich) at start-up costs seconds. Its time is benchmarks/startup.py's
    measure (docs/benchmarks.md), not a bound here."""
    import subprocess
    import sys

    cp = subprocess.run(
        [sys.executable, "-c", _IMPORTS_OF_HELP],
        capture_output=True, text=True, check=True, timeout=60,  # hang guard (~0.1 s)
    )  # fmt: skip
    loaded = set(cp.stdout.split())
    assert "rocmprov" in loaded, cp.stdout
    assert loaded - sys.stdlib_module_names - {"rocmprov"} == set(), cp.stdout
