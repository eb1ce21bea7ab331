"""ROCm install layouts (issue 29): a TheRock tarball unpacked anywhere, TheRock's pip wheels in a
virtual environment, legacy packages, several at once; the audit names each with its version and
says which one the target python's torch loads.

The layouts are TheRock's own documentation, ROCm/TheRock@89553ce RELEASES.md:
https://github.com/ROCm/TheRock/blob/89553ce3746eda74ade42557470d25e37c91b6f0/RELEASES.md
("Installing multi-arch tarballs": the tarball is a flat /opt/rocm-like tree with the per-GPU
kernel packs in .kpack/, no install step; "Using multi-arch ROCm Python packages": pip wheels
rocm-sdk-core 7.15.0a20260630 ... in a .venv) and its rocm_sdk/_dist_info.py (libamdhip64.so* in
the "core" package's lib/), https://github.com/ROCm/TheRock/blob/89553ce3746eda74ade42557470d25e37c91b6f0/build_tools/packaging/python/templates/rocm/src/rocm_sdk/_dist_info.py
The version file is rocm-core's <prefix>/.info/version, which TheRock's own test helper reads
(tests/extended_tests/utils/system/rocm_detector.py). The probes below run for real (bash,
a real venv); no GPU is needed to find an install.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from rocmprov.audit.host import audit_bundle
from rocmprov.checks.policy import Policy
from rocmprov.collect.bundle import Bundle, ProbeOutput
from rocmprov.collect.probes import _ROCM_INSTALLS, build_probes
from rocmprov.facts.host import build_facts
from rocmprov.model import Severity
from rocmprov.parse.rocm import (
    PIP,
    TARBALL,
    THEROCK,
    VersionRecord,
    find_installs,
    parse_layout_marks,
    parse_version_records,
)
from rocmprov.parse.torch import parse_torch

WHEEL = "7.15.0a20260630"  # RELEASES.md's `pip freeze | grep rocm` example


def _tarball(root: Path, version: str = "10.1.0") -> Path:
    prefix = root / f"rocm-{version}"
    (prefix / ".info").mkdir(parents=True)
    (prefix / ".info" / "version").write_text(f"{version}\n")
    (prefix / ".kpack").mkdir()
    (prefix / ".kpack" / "blas_lib_gfx1100.kpack").write_bytes(b"")
    (prefix / "bin").mkdir()
    return prefix


def _venv(root: Path) -> Path:
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    pyver = f"python{sys.version_info.major}.{sys.version_info.minor}"
    dist = venv / "lib" / pyver / "site-packages" / f"rocm_sdk_core-{WHEEL}.dist-info"
    dist.mkdir(parents=True)
    meta = f"Metadata-Version: 2.1\nName: rocm-sdk-core\nVersion: {WHEEL}\n"
    (dist / "METADATA").write_text(meta)
    return venv


def _run(command: str, **env: str) -> ProbeOutput:
    proc = subprocess.run(
        ["bash", "-c", command], capture_output=True, text=True, timeout=60,
        env={"PATH": os.environ["PATH"], **env},
    )  # fmt: skip
    return ProbeOutput(id="x", command=command, rc=proc.returncode, stdout=proc.stdout,
                       stderr=proc.stderr)  # fmt: skip


def _probe(pid: str, python: str = "python3") -> str:
    return next(p.command for p in build_probes(python=python) if p.id == pid)


def test_installs_probe_finds_a_tarball_at_rocm_path(tmp_path: Path) -> None:
    prefix = _tarball(tmp_path)
    out = _run(_ROCM_INSTALLS, ROCM_PATH=str(prefix))
    assert out.rc == 0 and f"kpack {prefix}" in out.stdout
    facts = build_facts(Bundle(host="h", outputs={"rocm-installs": out}))
    mine = [i for i in facts.rocm_installs or () if i.prefix == str(prefix)]
    assert [(i.stream, i.version, i.layout) for i in mine] == [(THEROCK, "10.1.0", TARBALL)]


def test_torch_probe_reports_the_wheels_of_its_own_venv(tmp_path: Path) -> None:
    venv = _venv(tmp_path)
    out = _run(_probe("torch", python=str(venv / "bin" / "python")))
    info = parse_torch(out.stdout)
    assert info is not None and not info.installed  # no torch in it, still read
    assert (info.rocm_sdk, info.prefix) == (WHEEL, str(venv))


def _done_when_bundle(tmp_path: Path) -> tuple[Bundle, Path, Path]:
    """A host with a TheRock tarball in <root>/rocm-10.1.0 (at ROCM_PATH) and a venv holding
    rocm-sdk-core, whose torch loaded the venv's libamdhip64 (the path torch's probe reads
    from /proc/self/maps; _dist_info.py puts the library in the core package's lib/)."""
    prefix, venv = _tarball(tmp_path), _venv(tmp_path)
    installs = _run(_ROCM_INSTALLS, ROCM_PATH=str(prefix))
    torch = _run(_probe("torch", python=str(venv / "bin" / "python")))
    doc = json.loads(torch.stdout.strip().splitlines()[-1])
    site = next((venv / "lib").glob("python3*/site-packages"))
    doc.update(torch="2.11.0+rocm7.14.0", hip="7.14", error=None,
               hip_library=f"{site}/_rocm_sdk_core/lib/libamdhip64.so.7")  # fmt: skip
    torch = ProbeOutput(id="torch", command="x", rc=0, stdout=json.dumps(doc) + "\n")
    outputs = {"rocm-installs": installs, "torch": torch}
    return Bundle(host="h", outputs=outputs), prefix, venv


def test_audit_names_a_rocm_10_1_0_tarball_and_a_rocm_sdk_venv(tmp_path: Path) -> None:
    bundle, prefix, venv = _done_when_bundle(tmp_path)
    report = audit_bundle(bundle, Policy())
    (layouts,) = [f for f in report.findings if f.check == "rocm.layouts"]
    assert f"AMD ROCm Core SDK (TheRock) 10.1.0 (tarball at {prefix})" in layouts.summary
    assert f"ROCm SDK wheels (TheRock, pip) {WHEEL} (pip in {venv})" in layouts.summary
    assert f"loads ROCm SDK wheels (TheRock, pip) {WHEEL} (pip in {venv})" in layouts.summary
    # the system-wide release is the tarball's; the venv is not a second system install
    facts = build_facts(bundle)
    assert facts.rocm_version == "10.1.0" and facts.rocm_source == THEROCK
    installed = [f for f in report.findings if f.check == "rocm.installed"]
    assert not [f for f in installed if "more than one" in f.summary]


def test_pip_only_host_is_not_rocm_not_installed(tmp_path: Path) -> None:
    venv = _venv(tmp_path)
    torch = _run(_probe("torch", python=str(venv / "bin" / "python")))
    installs = ProbeOutput(id="rocm-installs", command="x", rc=0, stdout="")
    report = audit_bundle(Bundle(host="h", outputs={"rocm-installs": installs, "torch": torch}))
    (inst,) = [f for f in report.findings if f.check == "rocm.installed"]
    assert "only in virtual environments" in inst.summary and str(venv) in inst.summary


def test_several_layouts_at_once_in_order() -> None:
    records = (
        VersionRecord("/opt/rocm/.info/version", "7.2.1"),
        VersionRecord("/opt/rocm-7.2.1/.info/version", "7.2.1"),
        VersionRecord("/opt/rocm/core-7.14/.info/version", "7.14.0"),
        VersionRecord("/home/u/sdk/rocm-10.1.0/.info/version", "10.1.0"),
    )
    wheels = (VersionRecord("/home/u/.venv", WHEEL), VersionRecord("/home/u/.venv", WHEEL))
    got = find_installs(records, {}, kpacks=("/home/u/sdk/rocm-10.1.0",), wheels=wheels)
    assert [(i.stream, i.version, i.layout, i.prefix) for i in got] == [
        (THEROCK, "10.1.0", TARBALL, "/home/u/sdk/rocm-10.1.0"),
        (THEROCK, "7.14.0", "packages", "/opt/rocm/core-7.14"),
        ("legacy", "7.2.1", "", "/opt/rocm-7.2.1"),  # the real prefix, not the /opt/rocm link
        (THEROCK, WHEEL, PIP, "/home/u/.venv"),
    ]
    # a TheRock release (7.12 on) outside /opt/rocm/core is a tarball even without .kpack
    (one,) = find_installs((VersionRecord("/opt/rocm-7.13.0/.info/version", "7.13.0"),), {})
    assert (one.stream, one.layout) == (THEROCK, TARBALL)


def test_opt_rocm_10_1_0_tarball_from_the_probe_text() -> None:
    # what the rocm-installs probe prints for /opt/rocm-10.1.0 (the loop above, run for real,
    # prints the same lines for its prefix) and for a venv found in the usual places
    text = (
        "/opt/rocm-10.1.0/.info/version\t10.1.0\nkpack /opt/rocm-10.1.0\n"
        f"rocmsdk /home/alice/.venv/lib/python3.12/site-packages/rocm_sdk_core-{WHEEL}.dist-info\n"
    )
    kpacks, wheels = parse_layout_marks(text)
    got = find_installs(parse_version_records(text), None, kpacks=kpacks, wheels=wheels)
    assert [i.label + " (" + i.where + ")" for i in got] == [
        "AMD ROCm Core SDK (TheRock) 10.1.0 (tarball at /opt/rocm-10.1.0)",
        f"ROCm SDK wheels (TheRock, pip) {WHEEL} (pip in /home/alice/.venv)",
    ]


def _on_real_ubuntu(bundle: Bundle) -> Bundle:
    """The layouts' probes on top of a real Ubuntu 24.04 host's collected outputs (this
    project's H200 bundle: its dpkg list holds no AMD ROCm package and no ld.so.conf entry)."""
    from rocmprov.collect.bundle import read_bundle

    real = read_bundle(Path(__file__).parent / "data" / "h200-vm-bundle-2026-12-01.tar.gz")
    keep = ("os-release", "uname", "packages", "apt-rocm")
    outputs = {k: v for k, v in real.outputs.items() if k in keep}
    return Bundle(host="h", outputs={**outputs, **bundle.outputs})


def test_tarball_and_pip_hosts_are_not_missing_packages_or_prerequisites(tmp_path: Path) -> None:
    """A TheRock tarball (no install step: RELEASES.md) and TheRock's pip wheels install no
    package and no ld.so.conf entry: neither is missing. Packages are still asked for when the
    inventory asks for a release to be installed."""
    bundle = _on_real_ubuntu(_done_when_bundle(tmp_path)[0])
    report = audit_bundle(bundle, Policy())
    by = {f.check: f for f in report.findings}
    assert by["rocm.packages"].severity is Severity.OK, by["rocm.packages"].summary
    assert "tarball" in by["rocm.packages"].summary
    assert by["rocm.prerequisites"].severity is Severity.SKIPPED
    venv = _venv(tmp_path / "pip-only")
    torch = _run(_probe("torch", python=str(venv / "bin" / "python")))
    installs = ProbeOutput(id="rocm-installs", command="x", rc=0, stdout="")
    pip_only = _on_real_ubuntu(
        Bundle(host="h", outputs={"rocm-installs": installs, "torch": torch})
    )
    by = {f.check: f for f in audit_bundle(pip_only, Policy()).findings}
    assert by["rocm.packages"].severity in (Severity.OK, Severity.SKIPPED)
    assert by["rocm.prerequisites"].severity is Severity.SKIPPED
    asked = audit_bundle(bundle, Policy.from_vars({"rocmprov_rocm_version": "7.2.1"}))
    (pkgs,) = [f for f in asked.findings if f.check == "rocm.packages"]
    assert pkgs.severity is Severity.CRITICAL


def test_venv_scan_is_its_own_probe_so_a_hung_home_cannot_hide_the_release() -> None:
    """The venv places include /home/*: on a cluster node /home is NFS, and a stale mount
    blocks a glob until the probe times out. The release's version files are read by a probe
    that never walks /home; the venv scan is its own probe (full profile, short timeout), and
    its timeout leaves the system install found."""
    probes = {p.id: p for p in build_probes()}
    assert "/home/" not in probes["rocm-installs"].command
    venvs = probes["rocm-venvs"]
    assert "/home/*/.venv" in venvs.command and venvs.profile == "full"
    assert venvs.timeout <= 15
    records = "/opt/rocm-10.1.0/.info/version\t10.1.0\nkpack /opt/rocm-10.1.0\n"
    installs = ProbeOutput(id="rocm-installs", command="x", rc=0, stdout=records)
    hung = ProbeOutput(id="rocm-venvs", command="x", rc=124, stdout="", duration=15.0)
    facts = build_facts(Bundle(host="h", outputs={"rocm-installs": installs, "rocm-venvs": hung}))
    assert [(i.version, i.layout) for i in facts.rocm_installs or ()] == [("10.1.0", TARBALL)]
    dist = "/opt/ml/.venv/lib/python3.12/site-packages/rocm_sdk_core-7.15.0a20260630.dist-info"
    found = ProbeOutput(id="rocm-venvs", command="x", rc=0, stdout=f"rocmsdk {dist}\n")
    facts = build_facts(Bundle(host="h", outputs={"rocm-installs": installs, "rocm-venvs": found}))
    assert [i.where for i in facts.rocm_installs or ()] == [
        "tarball at /opt/rocm-10.1.0",
        "pip in /opt/ml/.venv",
    ]
