"""Review C1 of session 28's table (issue 28: `rocmprov explain`): each test is a finding of a
hostile read of round 28's install coverage, failing on the table before its fix.

The log texts below are synthetic reproducers, constructed to test each rule (the reviewer's
counter-examples); they are not fixtures and quote no report."""

from __future__ import annotations

from rocmprov.kb.table import load_table
from tests.kb_helpers import first as _first
from tests.kb_helpers import ids as _ids

DPKG = "apt.dpkg-i-rocm-deb-missing-dependency"
PACMAN = "apt.pacman-rocm-dependency-renamed"
LIBDRM = "apt.libdrm-amdgpu-rpm-name-on-apt"
UNSATISFIED = "the dependency is installed, but at a version that does not satisfy"


def _entry(entry_id: str):
    return next(e for e in load_table().entries if e.id == entry_id)


# constructed to test the rule: the installed dependency is NEWER than an `=` pin
NEWER = (
    "dpkg: dependency problems prevent configuration of rocm-hip-runtime:\n"
    " rocm-hip-runtime depends on hip-runtime-amd (= 6.2.41133.60200-66~22.04); however:\n"
    "  Version of hip-runtime-amd on system is 6.3.42131.60300-39~22.04.\n"
)


def test_dpkg_version_on_system_is_not_called_older() -> None:
    """F1: dpkg prints "Version of <dep> on system is <v>." for any unsatisfied relation
    (also a newer version than an `=` pin): the answer may not say the dependency is older."""
    found = _first(NEWER)
    assert found is not None and found.id == DPKG
    assert found.condition.startswith(UNSATISFIED), found.condition
    for text in (found.cause, found.condition):
        assert "older than" not in text and "an older version" not in text, text
    assert "(= 6.2.41133.60200-66~22.04)" in found.fix, found.fix


def test_dpkg_version_line_is_the_next_line_and_provided_by_wording() -> None:
    """F1: the reason line is the line after "; however:" (only blanks before "Version of"),
    and dpkg's "Version of %s on system, provided by %s, is %s." is the same cause."""
    # constructed to test the rule: "Version of" inside other text on the next line
    inside = (
        " rocm-dev depends on hip-base (= 6.2.41133.60200-66~22.04); however:\n"
        "  Package hip-base is not installed. Version of hip-base on system is 6.3.0.\n"
    )
    found = _first(inside)
    assert found is not None and found.id == DPKG
    assert not found.condition, found.condition
    # constructed from dpkg's format string (src/main/packages.c)
    provided = (
        " hipblas depends on rocblas (>= 4.2.0); however:\n"
        "  Version of rocblas on system, provided by rocblas-custom, is 4.0.0.\n"
    )
    found = _first(provided)
    assert found is not None and found.id == DPKG
    assert found.condition.startswith(UNSATISFIED), found.condition


# constructed to test the rule: pacman's "target not found" for non-ROCm versioned packages
NOT_ROCM = [
    "resolving dependencies...\nerror: target not found: opencl-nvidia>=550.54\n",
    ":: Resolving dependencies...\nerror: target not found: rocksdb>=9.0\n",
    "error: target not found: opencl-headers>=2:2023.12.14\n",
    "error: target not found: cuda>=12.4\n",
    "error: target not found: hiredis>=1.2\n",
]


def test_pacman_target_not_found_takes_only_rocm_package_names() -> None:
    """F2: without yay's "Wanted by" context the dependency's own name must be a ROCm one."""
    for text in NOT_ROCM:
        assert PACMAN not in _ids(text), text
    for dep in ("hip-runtime-amd>=6.2.0", "hsa-rocr>=6.0.2", "rocm-llvm>=6.1.1", "rocblas=6.2.4",
                "opencl-amd>=6.0", "miopen-hip>=6.2"):
        found = _first(f"error: target not found: {dep}\n")
        assert found is not None and found.id == PACMAN, dep


def test_libdrm_amdgpu_cause_names_amd_repository_not_the_distributions() -> None:
    """F3: only AMD's amdgpu RPM repository calls the package libdrm-amdgpu (RHEL/Fedora ship
    the library in `libdrm`, SUSE as `libdrm_amdgpu1`)."""
    found = _first("sudo apt install libdrm-amdgpu\nE: Unable to locate package libdrm-amdgpu\n")
    assert found is not None and found.id == LIBDRM
    assert "how RHEL, SLES" not in found.cause, found.cause
    assert "AMD's amdgpu RPM repository" in found.cause, found.cause
    assert "libdrm_amdgpu1" in found.cause, found.cause
    assert any("ROCT-Thunk-Interface/issues/73" in url for url in _entry(LIBDRM).sources)
