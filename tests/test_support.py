"""The support data (AMD's matrix, pytorch.org's ROCm wheels) and the lookups over it.

The asserted facts are the ones checked against the sources named in the YAML files; a change
to one of them should come with a new source, not just a new number.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from packaging.version import Version

from rocmprov.knowledge import gpus, matrix, torch_wheels
from rocmprov.knowledge.gpus import gfx_for_pci, gpu_verdict, pci_name
from rocmprov.knowledge.matrix import Verdict, load_matrix, load_torch
from rocmprov.knowledge.os_kernel import kernel_verdict, os_verdict
from rocmprov.knowledge.torch_wheels import (
    parse_torch_version,
    rocm_for_hip,
    torch_pairing,
    torch_verdict,
)
from rocmprov.model import Severity

STATUSES = {"ok", "warning", "critical", "unknown"}


# --- the data files themselves ----------------------------------------------------------------


def _is_https(value: Any) -> bool:
    return isinstance(value, str) and value.startswith("https://")


def test_every_release_os_gpu_pci_entry_has_an_https_source() -> None:
    m = load_matrix()
    for rel in m["releases"]:
        assert _is_https(rel["source"]), rel["rocm"]
        for entry in rel["os"]:
            assert _is_https(entry["source"]), (rel["rocm"], entry)
            if entry.get("kernels"):
                assert _is_https(entry["kernels_source"]), (rel["rocm"], entry)
    for gpu in m["gpus"]:
        assert _is_https(gpu["source"]), gpu["gfx"]
        for stage in gpu.get("lifecycle", []):
            assert _is_https(stage["source"]), gpu["gfx"]
    for pci in m["pci_ids"]:
        assert _is_https(pci["source"]), pci["id"]
    assert _is_https(m["hip_builds"]["source"])
    assert all(_is_https(url) for url in m["sources"].values())


def test_every_torch_entry_has_an_https_source() -> None:
    t = load_torch()
    assert t["releases"]
    for row in t["releases"]:
        assert _is_https(row["source"]), row["torch"]
    assert _is_https(t["local_version"]["source"])
    assert t["index_url"].startswith("https://download.pytorch.org/whl/rocm")


def test_unverified_entries_say_why() -> None:
    for rel in load_matrix()["releases"]:
        if rel.get("confidence") == "unverified":
            assert rel.get("why"), rel["rocm"]


def test_versions_in_the_data_parse_with_packaging() -> None:
    m = load_matrix()
    assert len(m["releases"]) >= 8
    for rel in m["releases"]:
        # "as of" names the point release the row was read from: never older than the release
        assert Version(rel["as_of"]) >= Version(rel["rocm"]), rel["rocm"]
        for entry in rel["os"]:
            if "since" in entry:
                Version(entry["since"])
            for kernel in entry.get("kernels", []):
                Version(kernel)
    for gpu in m["gpus"]:
        if "min_rocm" in gpu:
            Version(gpu["min_rocm"])
        for stage in gpu.get("lifecycle", []):
            Version(stage["from"])
    for rocm in m["hip_builds"]["builds"].values():
        Version(rocm)
    for row in load_torch()["releases"]:
        Version(row["torch"])
        for tag in row["rocm"]:
            Version(tag)


def test_release_gpu_rows_only_name_targets_the_gpu_table_knows() -> None:
    m = load_matrix()
    known = {g["gfx"] for g in m["gpus"]}
    for rel in m["releases"]:
        assert set(rel["gpus"]) <= known, rel["rocm"]
    for pci in m["pci_ids"]:
        assert pci["gfx"] in known, pci["id"]


def test_every_production_release_of_the_release_table_has_a_support_matrix_row() -> None:
    """The audit judges OS/kernel/GPU for every release apply can install (issue 12): each
    production minor of the release table (both streams) is a row of the support matrix."""
    from rocmprov.knowledge import releases

    minors = {r.minor for r in releases.all_releases() if r.status == "production"}
    assert {"6.0", "7.2", "7.14", "10.0"} <= minors  # both streams are in the table
    assert minors - set(matrix.supported_releases()) == set()


# --- OS --------------------------------------------------------------------------------------


def test_debian_12_first_listed_in_rocm_6_3_1_and_only_for_mi300x() -> None:
    assert os_verdict("6.2.4", "debian", "12").status == "warning"
    early = os_verdict("6.3.0", "debian", "12")
    assert early.status == "warning" and "6.3.1" in early.reason
    assert os_verdict("6.3.1", "debian", "12", gfx="gfx942").status == "ok"
    assert os_verdict("6.3.1", "debian", "12", gfx="gfx90a").status == "warning"
    # 7.0.0 widens Debian 12 to MI300A and the MI200 series
    assert os_verdict("7.0.0", "debian", "12", gfx="gfx90a").status == "ok"
    assert os_verdict("7.2.1", "debian", "13").status == "ok"


def test_ubuntu_per_release() -> None:
    assert os_verdict("6.1.2", "ubuntu", "24.04").status == "warning"  # first in 6.2
    assert os_verdict("6.2.0", "ubuntu", "24.04").status == "ok"
    assert os_verdict("6.1.0", "ubuntu", "20.04").status == "ok"
    assert os_verdict("6.2.0", "ubuntu", "20.04").status == "warning"  # dropped in 6.2
    ok = os_verdict("7.0.1", "ubuntu", "22.04")
    assert ok.status == "ok" and ok.source.startswith("https://")
    assert os_verdict("6.4.1", "ubuntu", "22.04.5").status == "ok"  # a point VERSION_ID too


def test_rhel_sles_ol_rocky() -> None:
    assert os_verdict("6.3.2", "rhel", "9.5").status == "ok"
    assert os_verdict("6.3.2", "rhel", "9.3").status == "warning"
    assert os_verdict("7.2.2", "rhel", "10.1").status == "ok"
    assert os_verdict("7.1.0", "rhel", "10.1").status == "warning"
    assert os_verdict("6.4.3", "sles", "15-SP7").status == "ok"
    assert os_verdict("6.4.3", "SLES", "15-sp7").status == "ok"
    assert os_verdict("7.0.0", "ol", "9.6", gfx="gfx950").status == "ok"
    assert os_verdict("7.0.0", "ol", "8.10", gfx="gfx950").status == "warning"  # OL8: MI300X
    assert os_verdict("7.0.0", "rocky", "9.6", gfx="gfx942:sramecc+:xnack-").status == "ok"


def test_unsupported_os_lists_what_is_supported() -> None:
    v = os_verdict("6.2.4", "fedora", "40")
    assert v.status == "warning"
    assert "ubuntu 24.04" in v.expected and "rhel 9.4" in v.expected


def test_unknown_release_and_unverified_release() -> None:
    assert os_verdict("5.4.3", "ubuntu", "22.04").status == "unknown"
    assert os_verdict("9.9", "ubuntu", "22.04").status == "unknown"
    v = os_verdict("5.7.1", "ubuntu", "22.04")
    assert v.status == "unknown" and "5.7" in v.reason


# --- kernel ----------------------------------------------------------------------------------


def test_ubuntu_22_04_kernels_ga_and_hwe() -> None:
    assert kernel_verdict("6.2.4", "ubuntu", "22.04", "5.15.0-125-generic").status == "ok"
    assert kernel_verdict("6.2.4", "ubuntu", "22.04", "6.8.0-45-generic").status == "ok"
    assert kernel_verdict("6.3.1", "ubuntu", "22.04", "6.5.0-44-generic").status == "warning"
    assert kernel_verdict("7.0.0", "ubuntu", "24.04", "6.14.0-29-generic").status == "ok"
    assert kernel_verdict("6.3.1", "ubuntu", "24.04", "6.14.0-29-generic").status == "warning"


def test_enterprise_kernels() -> None:
    el9 = "5.14.0-427.13.1.el9_4.x86_64"
    assert kernel_verdict("6.4.3", "rhel", "9.4", el9).status == "ok"
    assert kernel_verdict("6.4.3", "rhel", "8.10", "4.18.0-553.el8_10.x86_64").status == "ok"
    assert kernel_verdict("7.0.0", "debian", "12", "6.1.0-18-amd64").status == "ok"
    assert kernel_verdict("6.3.1", "debian", "12", "6.12.9-amd64").status == "warning"


def test_kernel_unknowns() -> None:
    assert kernel_verdict("7.2.1", "ubuntu", "24.04", "6.8.0-1-generic").status == "unknown"
    assert kernel_verdict("6.2.4", "fedora", "40", "6.8.0").status == "unknown"
    assert kernel_verdict("6.2.4", "ubuntu", "22.04", "not-a-kernel").status == "unknown"


# --- GPUs ------------------------------------------------------------------------------------


def test_gfx942_needs_rocm_6_0() -> None:
    assert gpu_verdict("gfx942", "5.7.1").status == "critical"
    assert gpu_verdict("gfx942", "6.0.0").status == "ok"
    assert gpu_verdict("gfx942", "7.2.1").status == "ok"


def test_gfx950_needs_rocm_7_0() -> None:
    old = gpu_verdict("gfx950", "6.4.3")
    assert old.status == "critical" and old.expected == "ROCm >= 7.0"
    assert gpu_verdict("gfx950", "7.0.2").status == "ok"


def test_rdna_targets() -> None:
    assert gpu_verdict("gfx1100", "6.0.2").status == "ok"
    assert gpu_verdict("gfx1030", "7.1.0").status == "ok"
    assert gpu_verdict("gfx1201", "6.3.2").status == "critical"
    assert gpu_verdict("gfx1201", "6.4.3").status == "ok"
    assert gpu_verdict("gfx1101", "6.4.3").status == "ok"


def test_gfx906_maintenance_then_deprecated_and_gfx900_unsupported() -> None:
    maint = gpu_verdict("gfx906", "5.7.1")
    assert maint.status == "warning" and "maintenance" in maint.reason
    dep = gpu_verdict("gfx906", "6.2.4")
    assert dep.status == "warning" and "deprecated" in dep.reason
    assert gpu_verdict("gfx900", "6.1.0").status == "critical"


def test_gpu_without_rocm_and_older_than_the_data() -> None:
    assert gpu_verdict("gfx90a", None).status == "ok"
    assert gpu_verdict("gfx906", None).status == "warning"
    # MI200 before 6.0: the matrix does not go back that far, so no claim either way
    assert gpu_verdict("gfx90a", "5.7.1").status == "unknown"


def test_products_per_target() -> None:
    assert "Instinct MI250X" in gpus.products_for_gfx("gfx90a")
    assert "Instinct MI300X" in gpus.products_for_gfx("gfx942")
    assert "Radeon RX 7900 XTX" in gpus.products_for_gfx("gfx1100")
    assert gpus.products_for_gfx("gfx1234") == ()


@pytest.mark.parametrize(
    ("device_id", "gfx"),
    [
        ("0x738c", "gfx908"),
        ("738C", "gfx908"),
        ("0x740f", "gfx90a"),
        ("0x740c", "gfx90a"),
        ("1002:74a1", "gfx942"),
        ("0x744c", "gfx1100"),
        ("0x73a3", "gfx1030"),
        ("0x66af", "gfx906"),
    ],
)
def test_pci_ids(device_id: str, gfx: str) -> None:
    assert gfx_for_pci(device_id) == gfx


def test_pci_names_and_misses() -> None:
    assert pci_name("0x740f") == "Aldebaran/MI200 [Instinct MI210]"
    assert pci_name("744c") == "Navi 31 [Radeon RX 7900 XT/7900 XTX]"
    assert gfx_for_pci("10de:2335") is None  # NVIDIA H200: not AMD
    assert gfx_for_pci("0xffff") is None
    assert gfx_for_pci("") is None


# --- torch -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("torch", "rocm"),
    [
        ("2.3.1", ["6.0"]),
        ("2.4.1", ["6.1"]),
        ("2.4.0+rocm6.1", ["6.1"]),
        ("2.5.1", ["6.1", "6.2"]),
        ("2.6.0", ["6.1", "6.2.4"]),
        ("2.7.1", ["6.3"]),
        ("2.8.0", ["6.4"]),
        ("2.9.1", ["6.4"]),
        ("2.10.0", ["7.1"]),
        ("2.2.0", ["5.6"]),
        ("2.2.2", ["5.7"]),
        ("2.0.1", ["5.4.2"]),
        ("2.5", ["6.1", "6.2"]),
    ],
)
def test_torch_pairing(torch: str, rocm: list[str]) -> None:
    """pytorch.org's history (torch_rocm.yaml); the release table may add indexes (AMD's)."""
    assert set(rocm) <= set(torch_pairing(torch))


def test_every_torch_wheel_of_the_release_table_is_paired_with_its_release() -> None:
    from rocmprov.knowledge import releases

    rows = [r for r in releases.all_releases() if r.torch_index and r.torch_versions]
    assert any(r.stream == "therock" for r in rows)  # AMD's own wheels for the Core SDK
    for row in rows:
        for torch in row.torch_versions:
            tags = torch_pairing(torch)
            assert any(row.version.startswith(t) or t == row.version for t in tags), (row, tags)
            assert row.torch_index in {torch_wheels.index_url(t) for t in tags}


def test_torch_pairing_misses() -> None:
    assert torch_pairing("1.0.0") == []
    assert torch_pairing("banana") == []
    assert torch_pairing("") == []


def test_parse_torch_local_tags() -> None:
    assert parse_torch_version("2.4.1+rocm6.1") == torch_wheels.TorchBuild("2.4.1", "rocm", "6.1")
    assert parse_torch_version("2.6.0+rocm6.2.4").accel == "6.2.4"  # type: ignore[union-attr]
    assert parse_torch_version("2.4.0+rocm6.3.4.git7cecbf6d").accel == "6.3.4"  # type: ignore[union-attr]
    assert parse_torch_version("2.1.0+cu121") == torch_wheels.TorchBuild("2.1.0", "cuda", "12.1")
    assert parse_torch_version("2.1.0+cpu") == torch_wheels.TorchBuild("2.1.0", "cpu")
    assert parse_torch_version("2.4.1") == torch_wheels.TorchBuild("2.4.1", "none")
    assert parse_torch_version("2.5.0a0+git1234").kind == "other"  # type: ignore[union-attr]
    assert parse_torch_version("not a version") is None


def test_torch_wheel_for_an_older_rocm_is_a_warning() -> None:
    v = torch_verdict("2.4.1+rocm6.1", "6.1.40091-a8dbc0c19", "6.3.1")
    assert v.status == "warning"
    assert "6.1" in v.reason and "6.3.1" in v.reason


def test_torch_matching_wheel_is_ok() -> None:
    assert torch_verdict("2.7.1+rocm6.3", "6.3.42131-fa1d09cbd", "6.3.2").status == "ok"
    assert torch_verdict("2.6.0+rocm6.2.4", None, "6.2.4").status == "ok"


def test_torch_hip_build_number_maps_rocm_6_0() -> None:
    # ROCm 6.0 reports HIP 6.1.3283x (AMD's matrix, HIP row)
    assert rocm_for_hip("6.1.32830-d62f6a171") == "6.0"
    assert rocm_for_hip("6.1.40091-a8dbc0c19") == "6.1"
    assert rocm_for_hip("7.9.12345-x") == "7.9"  # unknown build: major.minor
    assert rocm_for_hip("garbage") is None
    assert torch_verdict("2.3.1", "6.1.32830-d62f6a171", "6.0.2").status == "ok"


def test_cuda_and_cpu_builds_on_an_amd_host_are_critical() -> None:
    cuda = torch_verdict("2.4.1+cu121", None, "6.1.2")
    assert cuda.status == "critical" and "CUDA" in cuda.reason
    assert "https://download.pytorch.org/whl/rocm6.1" in cuda.expected
    assert torch_verdict("2.4.1+cpu", None, "6.1.2").status == "critical"
    plain = torch_verdict("2.4.1", None, "6.1.2")
    assert plain.status == "critical" and "PyPI" in plain.reason


def test_torch_index_suggestion_follows_the_installed_rocm() -> None:
    v = torch_verdict("2.5.1+cu124", None, "6.2.4")
    assert v.expected.endswith("https://download.pytorch.org/whl/rocm6.2")


def test_torch_unknowns() -> None:
    assert torch_verdict("nonsense", None, "6.1").status == "unknown"
    assert torch_verdict("2.4.1+rocm6.1", None, None).status == "unknown"
    assert torch_verdict("2.4.1+rocm6.1", None, "garbage").status == "unknown"
    assert torch_verdict("2.5.0a0+git1234", None, "6.1").status == "unknown"


def test_custom_rocm_build_is_noted() -> None:
    v = torch_verdict("2.4.0+rocm6.3.4.git7cecbf6d", None, "6.3.4")
    assert v.status == "ok" and "custom or vendor build" in v.reason


# --- never an exception ----------------------------------------------------------------------

GARBAGE: list[Any] = ["", " ", "x.y", "6", "-1.2", "☃", "6.4.1\n", "gfx", None, 6.4, "0x", "::"]


@pytest.mark.parametrize("junk", GARBAGE)
def test_garbage_never_raises(junk: Any) -> None:
    verdicts = [
        os_verdict(junk, "ubuntu", "22.04"),
        os_verdict("6.4.1", junk, junk),
        os_verdict("6.3.1", "debian", "12", gfx=junk),
        kernel_verdict(junk, "ubuntu", "22.04", "6.8.0"),
        kernel_verdict("6.2.4", "ubuntu", "22.04", junk),
        gpu_verdict(junk, "6.4.1"),
        gpu_verdict("gfx942", junk),
        torch_verdict(junk, junk, junk),
        torch_verdict("2.4.1+rocm6.1", junk, junk),
    ]
    for v in verdicts:
        assert isinstance(v, Verdict)
        assert v.status in STATUSES
        assert isinstance(v.severity, Severity)
    assert gfx_for_pci(junk) in (None, *(p["gfx"] for p in load_matrix()["pci_ids"]))
    assert isinstance(torch_pairing(junk), list)
    assert rocm_for_hip(junk) is None or isinstance(rocm_for_hip(junk), str)


def test_verdict_is_frozen() -> None:
    v = Verdict("ok")
    with pytest.raises(AttributeError):
        v.status = "critical"  # type: ignore[misc]


# --- the doc -----------------------------------------------------------------------------------


def test_docs_table_is_generated_from_the_data() -> None:
    doc = Path(__file__).resolve().parent.parent / "docs" / "support-matrix.md"
    assert doc.read_text(encoding="utf-8") == matrix.matrix_markdown(), (
        "docs/support-matrix.md is stale: regenerate it with "
        "python -c 'from rocmprov.knowledge.matrix import matrix_markdown as m; "
        "print(m(), end=\"\")' "
        "> docs/support-matrix.md"
    )
