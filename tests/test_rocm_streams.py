"""Which ROCm is installed, from which stream, and what the audit says about it (issue 12).

The stray-library case is a real bundle (tests/data/h200-vm-bundle-2026-12-01.tar.gz). No
public capture of a TheRock package install was found (tests/fixtures/therock/README.md), so
the TheRock host here is that real bundle with the traces AMD documents for a ROCm Core SDK
install put in: the package names and prefix of the release table's row (AMD's install page),
and rocm-core's .info/version under that prefix.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from rocmprov.audit.host import audit_bundle
from rocmprov.checks.policy import Policy
from rocmprov.collect.bundle import Bundle, ProbeOutput, read_bundle
from rocmprov.facts.host import build_facts
from rocmprov.knowledge import releases
from rocmprov.model import Severity
from rocmprov.parse.rocm import find_installs, parse_version_records

REAL = Path(__file__).parent / "data" / "h200-vm-bundle-2026-12-01.tar.gz"


def real() -> Bundle:
    return read_bundle(REAL)


def with_outputs(bundle: Bundle, **texts: str) -> Bundle:
    outputs = dict(bundle.outputs)
    for key, text in texts.items():
        pid = key.replace("_", "-")
        outputs[pid] = ProbeOutput(pid, "test", 0, text)
    return dataclasses.replace(bundle, outputs=outputs)


def findings(bundle: Bundle, policy: Policy | None = None) -> dict[str, list]:
    out: dict[str, list] = {}
    for f in audit_bundle(bundle, policy or Policy()).findings:
        out.setdefault(f.check, []).append(f)
    return out


def therock_row() -> releases.Release:
    row = releases.find("latest")
    assert row is not None and row.stream == "therock", "the newest production release is TheRock"
    return row


def therock_bundle() -> Bundle:
    row = therock_row()
    base = real()
    packages = base.get("packages").stdout
    packages += "".join(f"{p} {row.version}-1 ii \n" for p in row.packages)
    prefix = row.prefix or f"/opt/rocm/core-{row.minor}"
    return with_outputs(
        base,
        packages=packages,
        rocm_installs=f"{prefix}/.info/version\t{row.version}-1\n{prefix}\n"
        f"ldconf /etc/ld.so.conf.d/rocm.conf {prefix}/lib\n",
    )


# --- the real stray-library host ----------------------------------------------------------


def test_a_distribution_library_is_not_a_rocm_install() -> None:
    facts = build_facts(real())
    assert facts.rocm_installs == ()
    assert facts.rocm_version == ""
    assert "libamdhip64-5 5.7.1" in facts.rocm_stray


def test_the_stray_library_host_gets_one_critical_and_no_pile_up() -> None:
    by = findings(real())
    bad = [
        f for fs in by.values() for f in fs if f.severity in (Severity.WARNING, Severity.CRITICAL)
    ]
    assert [f.check for f in bad] == ["gpu.amd.present"]
    for check in ("rocm.installed", "rocm.packages", "os.supported", "os.kernel"):
        assert by[check][0].severity is Severity.SKIPPED, check
        assert "no AMD GPU" in by[check][0].summary
    assert "libamdhip64-5 5.7.1" in by["rocm.installed"][0].summary


def test_no_fix_text_is_empty_or_dangling() -> None:
    """Fix texts name something to do: never "()" or a trailing colon (issue 12)."""
    for bundle, policy in (
        (real(), Policy()),
        (real(), Policy(rocm_version="5.7")),
        (therock_bundle(), Policy()),
        (therock_bundle(), Policy(rocm_version="6.0.0")),
    ):
        for f in audit_bundle(bundle, policy).findings:
            assert "()" not in f.fix, f
            assert not f.fix.rstrip().endswith(":"), f


# --- TheRock -------------------------------------------------------------------------------


def test_a_therock_install_is_recognised_with_its_release() -> None:
    row = therock_row()
    facts = build_facts(therock_bundle())
    assert facts.rocm_source == "therock"
    assert facts.rocm_version == row.version
    (finding,) = findings(therock_bundle())["rocm.installed"]
    assert finding.severity is Severity.OK
    assert finding.summary == f"AMD ROCm Core SDK (TheRock) {row.version}"


def test_therock_packages_come_from_the_release_table() -> None:
    row = therock_row()
    by = findings(therock_bundle(), Policy(rocm_version=row.version))
    assert by["rocm.packages"][0].severity is Severity.OK
    assert set(row.packages) <= set(by["rocm.packages"][0].actual.split(", "))
    without = therock_bundle()
    pkgs = "".join(
        line + "\n"
        for line in without.get("packages").stdout.splitlines()
        if line.split()[0] not in row.packages
    )
    # the version record alone still says TheRock is there; the meta-package is missing
    by = findings(with_outputs(without, packages=pkgs), Policy(rocm_version=row.version))
    assert by["rocm.packages"][0].severity is Severity.CRITICAL
    assert row.packages[0] in by["rocm.packages"][0].summary


def test_two_streams_at_once_is_a_warning_naming_both() -> None:
    bundle = therock_bundle()
    installs = bundle.get("rocm-installs").stdout + "/opt/rocm-7.2.1/.info/version\t7.2.1-81\n"
    by = findings(with_outputs(bundle, rocm_installs=installs))
    (finding,) = by["rocm.installed"]
    assert finding.severity is Severity.WARNING
    assert "AMD ROCm 7.2.1" in finding.summary and "TheRock" in finding.summary


def test_an_inventory_target_other_than_the_install_is_a_warning_with_the_apply_fix() -> None:
    by = findings(therock_bundle(), Policy(rocm_version="7.2"))
    (finding,) = by["rocm.installed"]
    assert finding.severity is Severity.WARNING
    assert finding.fix == "rocmprov apply INVENTORY -e rocmprov_rocm_version=7.2"


# --- legacy and distribution ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("records", "packages", "stream", "version"),
    [
        ("/opt/rocm/.info/version\t6.2.4-120\n", {}, "legacy", "6.2.4"),
        ("", {"rocm-core": "7.2.1.70201-81~24.04"}, "legacy", "7.2.1"),
        # Ubuntu's own "rocm" package is not AMD's (no 5-digit build in its version)
        ("", {"rocm": "7.1.0-1", "rocminfo": "7.1.0-1", "libamdhip64-6": "7.1.0-1"},
         "distro", "7.1.0"),
        ("/opt/rocm/core-10.0\n", {}, "therock", "10.0"),
        ("", {"amdrocm-core10.0": "10.0.0-4"}, "therock", "10.0.0"),
    ],
)  # fmt: skip
def test_each_stream_leaves_its_own_traces(
    records: str, packages: dict[str, str], stream: str, version: str
) -> None:
    (install,) = find_installs(parse_version_records(records), packages)
    assert (install.stream, install.version) == (stream, version)


def test_apply_variables_decide_which_packages_the_audit_expects() -> None:
    """apply and its audit judge a host by the same variables (issue 12)."""
    bundle = with_outputs(real(), packages="rocminfo 5.7.1-3 ii \nlibamdhip64-5 5.7.1-3 ii \n")
    policy = Policy.from_vars(
        {"rocmprov_repo_source": "distro", "rocmprov_packages_distro": ["rocminfo"]}
    )
    (finding,) = findings(bundle, policy)["rocm.packages"]
    assert finding.severity is Severity.OK, finding
    strict = Policy.from_vars({"rocmprov_repo_source": "distro"})
    (finding,) = findings(bundle, strict)["rocm.packages"]
    assert finding.severity is Severity.CRITICAL  # the per-OS default list wants hipcc too


def test_amds_other_complete_installs_are_not_missing_packages() -> None:
    """A per-architecture TheRock install or a legacy runtime-only install is an install: AMD
    documents both; only "no package of that release at all" is CRITICAL."""
    row = therock_row()
    base = therock_bundle()
    lines = [
        ln for ln in base.get("packages").stdout.splitlines() if ln.split()[0] not in row.packages
    ]
    per_arch = "\n".join([*lines, f"amdrocm{row.minor}-gfx942 {row.version}-1 ii ", ""])
    (finding,) = findings(with_outputs(base, packages=per_arch), Policy())["rocm.packages"]
    assert finding.severity is Severity.OK, finding
    assert f"amdrocm{row.minor}-gfx942" in finding.summary

    legacy = with_outputs(
        real(),
        rocm_installs="/opt/rocm-7.2.1/.info/version\t7.2.1-81\n",
        packages=real().get("packages").stdout + "rocm-hip-runtime 7.2.1.70201-81~24.04 ii \n"
        "rocm-core 7.2.1.70201-81~24.04 ii \n",
    )
    (finding,) = findings(legacy, Policy())["rocm.packages"]
    assert finding.severity is Severity.OK, finding
    assert "rocm-hip-runtime" in finding.summary


@pytest.mark.parametrize(
    ("kernel", "headers", "expect"),
    [
        ("6.8.0-51-generic", "linux-headers-generic", "ok"),
        ("6.8.0-51-generic", "linux-headers-generic-hwe-24.04", "ok"),
        ("6.8.0-1021-azure", "linux-headers-azure", "ok"),
        ("6.8.0-1021-azure", "linux-headers-generic", "linux-headers-azure"),
        ("6.18.44-fc-v973-gpu", "", "ok"),  # a custom kernel: no meta-package to ask for
    ],
)  # fmt: skip
def test_prerequisites_follow_the_running_kernels_flavour(
    kernel: str, headers: str, expect: str
) -> None:
    extra = f"linux-modules-extra-{kernel} 1 ii \n" if kernel.endswith("generic") else ""
    packages = (
        "python3-setuptools 68 ii \npython3-wheel 0.42 ii \namdgpu-dkms 1:6.12 ii \n"
        "rocm-core 7.2.1.70201-81~24.04 ii \n" + extra + (f"{headers} 1 ii \n" if headers else "")
    )
    bundle = with_outputs(
        real(),
        uname=kernel + "\n",
        packages=packages,
        rocm_installs="/opt/rocm-7.2.1/.info/version\t7.2.1\n"
        "ldconf /etc/ld.so.conf.d/x /opt/rocm/lib\n",
    )
    (finding,) = findings(bundle)["rocm.prerequisites"]
    if expect == "ok":
        assert finding.severity is Severity.OK, finding
    else:
        assert finding.severity is Severity.WARNING and expect in finding.summary, finding
