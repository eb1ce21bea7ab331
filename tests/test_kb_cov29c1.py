"""Session 29, coverage C1 (install and packages): the conditions and boundaries of the entries
this round added or widened.

The log texts below are synthetic reproducers, constructed to test each rule; they are not
fixtures and quote no report (the fixtures in tests/fixtures/kb*/ are the real texts)."""

from __future__ import annotations

from tests.kb_helpers import first as _first
from tests.kb_helpers import ids as _ids

CONSOLE = "pytorch.rocm-sdk-test-console-script-failed"
ROC_OBJ = "rocm.roc-obj-ls-perl-modules-missing"
WHEEL_LIB = "pytorch.wheel-rocm-lib-not-bundled"
AMD_SMI_WHEN = "the failing console script is amd-smi"


def _console_failure(script: str) -> str:
    # constructed to test the rule: unittest's header for one failing subTest
    return (
        "ERROR: testConsoleScripts (rocm_sdk.tests.core_test.ROCmCoreTest.testConsoleScripts)"
        f" [Check console-script {script}]\n"
        "subprocess.CalledProcessError: Command '[PosixPath('/venv/bin/x')]' returned"
        " non-zero exit status 1.\n"
    )


def test_amd_smi_failure_gets_the_no_gpu_advice_before_the_january_2026_nightlies() -> None:
    """Every amd-smi failure is not the January 2026 nightlies' packaging regression (the move
    landed 2026-01-10 and was reverted 2026-01-12): no condition replaces the general fix, which
    names the missing GPU / driver first and the 7.11.0a2026011[0-2] builds as one case."""
    found = _first(_console_failure("amd-smi"))
    assert found is not None and found.id == CONSOLE
    assert not found.condition, found.condition
    assert "7.11.0a20260110" in found.fix and "7.11.0a20260112" in found.fix, found.fix
    assert found.fix.index("no AMD GPU") < found.fix.index("7.11.0a20260110"), found.fix
    for script in ("rocminfo", "amdflang", "hipify-perl"):
        found = _first(_console_failure(script))
        assert found is not None and found.id == CONSOLE, script
        assert not found.condition, (script, found.condition)
        assert f"bin/{script}" in found.fix, found.fix


def test_console_script_failure_under_python_3_10_and_in_the_profiler_test() -> None:
    """Python 3.10's unittest header has no method name inside the parentheses, and the
    profiler wheel's test runs the same subTests under another class and method."""
    # constructed to test the rule: Python 3.10's header for a failing subTest
    py310 = (
        "ERROR: testConsoleScripts (rocm_sdk.tests.core_test.ROCmCoreTest)"
        " [Check console-script amd-smi]\n"
    )
    found = _first(py310)
    assert found is not None and found.id == CONSOLE
    assert "bin/amd-smi" in found.fix, found.fix
    # constructed to test the rule: profiler_test.py's method, Python 3.11+
    profiler = (
        "FAIL: test_rocprof_sys_console_scripts (rocm_sdk.tests.profiler_test.ROCmProfilerTest"
        ".test_rocprof_sys_console_scripts) [Check console-script rocprof-sys-run]\n"
    )
    found = _first(profiler)
    assert found is not None and found.id == CONSOLE
    assert "bin/rocprof-sys-run" in found.fix, found.fix


def test_console_script_cause_names_a_missing_script_and_hipconfig_runs_bare() -> None:
    """A FAIL can be "Console script None does not exist" (not installed), and a FAIL from the
    output check shows the output: the cause names all three; hipconfig runs without --help."""
    found = _first(_console_failure("hipconfig"))
    assert found is not None and found.id == CONSOLE
    assert "does not exist" in found.cause and "Expected" in found.cause, found.cause
    bare = found.fix[found.fix.index("no argument for") :].split(")")[0]
    assert "hipconfig" in bare, found.fix


def test_passing_console_script_lines_are_not_a_failure() -> None:
    """A verbose `rocm-sdk test` run prints every subTest; only ERROR / FAIL ones count."""
    # constructed to test the rule: a passing run's verbose lines
    ok = (
        "testConsoleScripts (rocm_sdk.tests.core_test.ROCmCoreTest.testConsoleScripts)"
        " [Check console-script amd-smi] ... ok\n"
        "testInstallationLayout (rocm_sdk.tests.core_test.ROCmCoreTest.testInstallationLayout)"
        " ... ok\n"
    )
    assert CONSOLE not in _ids(ok)


def test_perl_module_missing_in_another_program_is_not_roc_obj_ls() -> None:
    """The roc-obj entry needs the ROCm tool's own name after "at": the same Perl error from
    any other script is not this cause."""
    # constructed to test the rule: another Perl script missing the same module
    other = (
        "Can't locate File/Which.pm in @INC (you may need to install the File::Which module)"
        " (@INC contains: /etc/perl /usr/share/perl5) at /usr/bin/informan line 5.\n"
        "BEGIN failed--compilation aborted at /usr/bin/informan line 5.\n"
    )
    assert ROC_OBJ not in _ids(other)
    # constructed to test the rule: roc-obj-extract, URI::Escape (ROCm 6+)
    extract = (
        "Can't locate URI/Escape.pm in @INC (you may need to install the URI::Escape module)"
        " (@INC contains: /etc/perl) at /opt/rocm-6.4.0/bin/roc-obj-extract line 29.\n"
    )
    found = _first(extract)
    assert found is not None and found.id == ROC_OBJ
    assert "URI/Escape.pm" in found.cause and "roc-obj-extract" in found.cause


def test_hipsparselt_only_as_python_import_error_is_the_wheel_cause() -> None:
    """libhipsparselt missing at `import torch` is the nightly wheel's bundling gap; the same
    library missing for a native program stays the generic missing-library answer."""
    # constructed to test the rule: Python's ImportError
    imported = "ImportError: libhipsparselt.so.0: cannot open shared object file: No such file\n"
    found = _first(imported)
    assert found is not None and found.id == WHEEL_LIB
    # constructed to test the rule: the dynamic loader for a native program
    native = (
        "./bench: error while loading shared libraries: libhipsparselt.so.0: cannot open"
        " shared object file: No such file or directory\n"
    )
    found = _first(native)
    assert found is not None and found.id != WHEEL_LIB, found and found.id


def test_rocpd_python_version_needs_the_launcher_wording() -> None:
    """Only rocprofiler-sdk's launcher wording (with "(sys.executable=") is the rocpd cause;
    another package's "not supported for Python version" is not."""
    # constructed to test the rule: another extension's refusal
    other = (
        "ImportError: The _cinderx native extension is not supported for Python version"
        " '3.12.1' on platform 'linux'\n"
    )
    assert "rocm.rocpd-python-version-unsupported" not in _ids(other)
    # constructed to test the rule: another rocpd tool, the first line only
    found = _first(
        "ImportError: rocpd2csv not supported for Python version 3.14"
        " (sys.executable='/usr/bin/python3').\n"
    )
    assert found is not None and found.id == "rocm.rocpd-python-version-unsupported"
    assert "rocpd2csv" in found.fix and "3.14" in found.cause


def test_every_rocpd_launcher_is_the_rocpd_cause() -> None:
    """rocprofiler-sdk's CMake list names rocpd, rocpd2csv, rocpd2otf2, rocpd2pftrace and
    rocpd2summary; the digit in rocpd2otf2 stopped the old name pattern."""
    for tool in ("rocpd", "rocpd2csv", "rocpd2otf2", "rocpd2pftrace", "rocpd2summary"):
        # constructed to test the rule: the launcher's first line with this tool's name
        found = _first(
            f"ImportError: {tool} not supported for Python version 3.14"
            " (sys.executable='/usr/bin/python3').\n"
        )
        assert found is not None and found.id == "rocm.rocpd-python-version-unsupported", tool
        assert f"{tool} (" in found.cause, found.cause


def test_roc_obj_names_only_the_module_perl_named() -> None:
    """roc-obj-ls loads File::Copy first (line 23): without it perl names File/Copy.pm, and the
    answer must say so; a lone BEGIN line names no module at all."""
    # constructed to test the rule: perl-base only, the script's first `use` fails
    copy = (
        "Can't locate File/Copy.pm in @INC (you may need to install the File::Copy module)"
        " (@INC contains: /usr/lib/x86_64-linux-gnu/perl-base) at /opt/rocm/bin/roc-obj-ls"
        " line 23.\n"
        "BEGIN failed--compilation aborted at /opt/rocm/bin/roc-obj-ls line 23.\n"
    )
    found = _first(copy)
    assert found is not None and found.id == ROC_OBJ
    assert "find File/Copy.pm" in found.cause, found.cause
    assert "perl-File-Copy" in found.fix, found.fix
    # constructed to test the rule: only perl's last line survived
    found = _first("BEGIN failed--compilation aborted at /opt/rocm/bin/roc-obj-ls line 23.\n")
    assert found is not None and found.id == ROC_OBJ
    assert "Which.pm" not in found.cause and "Copy.pm" not in found.cause, found.cause
