"""A DKMS failure of another module is not reported as amdgpu-dkms's (session 23: the
generic dkms lines named amdgpu for an NVIDIA, NIC or ZFS module's build)."""

from __future__ import annotations

from pathlib import Path

import pytest

from rocmprov.kb import match

FIXTURES = Path(__file__).resolve().parent / "fixtures"
OTHER = sorted((FIXTURES / "kb-wordings").glob("dkms.other-module-build-failed.*.txt"))
OTHER.append(FIXTURES / "kb" / "dkms.other-module-build-failed.txt")
AMDGPU = [
    FIXTURES / "kb" / "dkms.amdgpu-build-failed.txt",
    FIXTURES / "kb" / "dkms.amdgpu-pci-resize-resource-args.txt",
]


def _ids(path: Path) -> list[str]:
    return [m.id for m in match(path.read_text(encoding="utf-8").partition("\n---\n")[2])]


@pytest.mark.parametrize("path", OTHER, ids=lambda p: p.name)
def test_another_modules_build_failure_is_not_amdgpus(path: Path) -> None:
    ids = _ids(path)
    assert ids[0] == "dkms.other-module-build-failed" and "dkms.amdgpu-build-failed" not in ids


@pytest.mark.parametrize("path", AMDGPU, ids=lambda p: p.name)
def test_amdgpus_own_build_failure_still_is(path: Path) -> None:
    ids = _ids(path)
    assert "dkms.amdgpu-build-failed" in ids and "dkms.other-module-build-failed" not in ids


def test_the_module_is_named() -> None:
    text = FIXTURES / "kb-wordings" / "dkms.other-module-build-failed.nvidia-bad-return-status.txt"
    (hit,) = [m for m in match(text.read_text(encoding="utf-8")) if m.id.startswith("dkms.other")]
    assert hit.captures["module"] == "nvidia" and hit.captures["kernel"] == "6.5.2-arch1-1"
    assert "/var/lib/dkms/nvidia/" in hit.fix
