"""Round 26 (g4): whole install logs. The line that states the root failure ranks above the
lines that only report its consequences; each test fails on the table before its rule."""

from __future__ import annotations

from pathlib import Path

from tests.kb_helpers import first, ids

MISSING = "apt.dpkg-i-rocm-deb-missing-dependency"

# dpkg's lines after rock-dkms's module build failed (ROCm/legacy-rocm-build#604)
NOT_CONFIGURED = (
    "dpkg: error processing package rock-dkms (--configure):\n"
    " installed rock-dkms package post-installation script subprocess returned error exit"
    " status 10\n"
    "dpkg: dependency problems prevent configuration of rocm-dkms:\n"
    " rocm-dkms depends on rock-dkms; however:\n"
    "  Package rock-dkms is not configured yet.\n"
    "\n"
    "dpkg: error processing package rocm-dkms (--configure):\n"
    " dependency problems - leaving unconfigured\n"
)


def test_a_dependency_that_is_not_configured_yet_is_no_missing_dependency() -> None:
    """A "Package X is not configured yet" under "depends on X; however:" says X is installed
    and its own configure step failed (reported above it): a consequence, not a dependency
    that dpkg -i lacked. The failing package's entry answers first."""
    assert MISSING not in ids(NOT_CONFIGURED)
    found = first(NOT_CONFIGURED)
    assert found is not None and found.id == "dkms.amdgpu-dpkg-configure-failed"
    assert found.captures.get("package") == "rock-dkms"


def test_a_dependency_that_is_not_installed_still_is() -> None:
    """dpkg -i without the dependency ("is not installed", the entry's own report) keeps its
    entry first."""
    text = (
        "dpkg: dependency problems prevent configuration of rocm-opencl-dev3.5.0:\n"
        " rocm-opencl-dev3.5.0 depends on mesa-common-dev; however:\n"
        "  Package mesa-common-dev is not installed.\n"
        "\n"
        "dpkg: error processing package rocm-opencl-dev3.5.0 (--install):\n"
        " dependency problems - leaving unconfigured\n"
    )
    found = first(text)
    assert found is not None and found.id == MISSING
    assert found.captures.get("dep") == "mesa-common-dev"


def _wording(name: str) -> str:
    path = Path(__file__).parent / "fixtures" / "kb-wordings" / name
    return path.read_text(encoding="utf-8").partition("\n---\n")[2]


def test_an_image_build_gets_the_host_driver_fix_and_a_host_build_does_not() -> None:
    """dkms's "It is likely that <kernel> belongs to a chroot's host" before the failed build
    (SkyyySi/pytorch-docker-gfx803#1): amdgpu-dkms was installed in an image, which the
    condition says; a failed build on a host (ROCm/legacy-rocm-build#604) keeps the plain fix."""
    image = first(_wording("dkms.amdgpu-build-failed.chroot-host-image-build.txt"))
    assert image is not None and image.id == "dkms.amdgpu-build-failed"
    assert image.condition.startswith("dkms said the running kernel")
    assert "--no-dkms" in image.fix and "6.1.12-artix1-1" in image.fix
    host = first(_wording("dkms.amdgpu-build-failed.rock-dkms-debian-418-whole-log.txt"))
    assert host is not None and host.id == "dkms.amdgpu-build-failed"
    assert host.condition == ""
