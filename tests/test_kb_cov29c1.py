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


def test_amd_smi_condition_is_only_for_amd_smi() -> None:
    """The January 2026 amd-smi packaging regression is named only when amd-smi failed; any
    other console script gets the generic advice with its own name in it."""
    found = _first(_console_failure("amd-smi"))
    assert found is not None and found.id == CONSOLE
    assert found.condition == AMD_SMI_WHEN, found.condition
    assert "7.11.0a20260112" in found.fix, found.fix
    for script in ("rocminfo", "amdflang", "hipify-perl"):
        found = _first(_console_failure(script))
        assert found is not None and found.id == CONSOLE, script
        assert not found.condition, (script, found.condition)
        assert "7.11.0a20260112" not in found.fix, found.fix
        assert f"bin/{script}" in found.fix, found.fix


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
