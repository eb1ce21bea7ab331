"""rocmprov verify: the smoke tests' results, on a real GPU's recorded output, on this machine,
and on the lab's real hosts over SSH (no torch; CPU torch): "no GPU" is a finding, never a crash."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from rocmprov.actions.verify import TESTS, parse_smoke
from rocmprov.model import Severity
from tests.helpers import rocmprov
from tests.lab import Lab, LabHost

H200 = Path(__file__).parent / "data" / "h200-verify.json"
TORCH_WHEEL = Path("/opt/wheels/torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl")
TORCH_CACHE = Path("/var/cache/rocmprov-lab/torch-2.13.0-cpu-site")


def _smoke_json_from_recorded(host: dict) -> str:
    """Turn a recorded rocmprov.verify/1 host back into the smoke script's own output line."""
    backend = host["backend"]
    return json.dumps(
        {
            "python": "3.12.3",
            "torch": host["torch"],
            "hip": backend[4:] if backend.startswith("HIP ") else None,
            "cuda": backend[5:] if backend.startswith("CUDA ") else None,
            "results": [
                {k: r[k] for k in ("test", "status", "seconds", "detail", "error")}
                for r in host["results"]
            ],
        }
    )


def test_recorded_h200_run_parses_to_all_passed() -> None:
    doc = json.loads(H200.read_text())
    assert doc["schema"] == "rocmprov.verify/1"
    host = doc["hosts"][0]
    report = parse_smoke("vm", host["python"], 0, _smoke_json_from_recorded(host), "")
    assert report.backend == "CUDA 13.0"
    assert tuple(r.test for r in report.results) == TESTS
    assert all(r.status == "pass" for r in report.results)
    assert report.severity is Severity.OK
    assert "NVIDIA H200" in report.results[0].detail


def test_script_that_did_not_run_is_an_error_with_its_last_line() -> None:
    report = parse_smoke("h", "/nope/python", 127, "", "sh: 1: /nope/python: not found\n")
    assert report.severity is Severity.CRITICAL
    assert report.error == "sh: 1: /nope/python: not found"


def test_failed_test_is_critical_and_named() -> None:
    out = json.dumps(
        {
            "torch": "2.4.1+rocm6.1",
            "hip": "6.1.40091",
            "cuda": None,
            "results": [
                {
                    "test": "devices",
                    "status": "pass",
                    "seconds": 0.1,
                    "detail": "1 device(s)",
                    "error": "",
                },
                {
                    "test": "matmul",
                    "status": "fail",
                    "seconds": 0.2,
                    "detail": "RuntimeError: HIP error: invalid device function",
                    "error": "Traceback",
                },
            ],
        }
    )
    report = parse_smoke("h", "python3", 0, out, "")
    assert report.backend == "HIP 6.1.40091"
    assert report.severity is Severity.CRITICAL
    assert [r.status for r in report.results] == ["pass", "fail"]


def test_local_python_without_torch(tmp_path: Path) -> None:
    run = rocmprov("verify", "--local", "--python", sys.executable, "--format", "json")
    doc = json.loads(run.stdout)
    host = doc["hosts"][0]
    try:
        import torch  # noqa: F401
    except ImportError:
        assert run.rc == 2
        assert "No module named 'torch'" in host["error"]
    assert doc["schema"] == "rocmprov.verify/1"


def test_verify_needs_a_target() -> None:
    run = rocmprov("verify")
    assert run.rc == 64
    assert "Traceback" not in run.stderr


def _torch_site() -> Path:
    """CPU torch 2.13.0 (the wheel this machine kind carries) and its deps, unpacked once."""
    if (TORCH_CACHE / "torch" / "__init__.py").exists():
        return TORCH_CACHE
    if not TORCH_WHEEL.exists():
        pytest.skip(f"no CPU torch wheel at {TORCH_WHEEL}")
    tmp = TORCH_CACHE.with_suffix(".partial")
    shutil.rmtree(tmp, ignore_errors=True)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "-q",
            "--no-compile",
            "--target",
            str(tmp),
            str(TORCH_WHEEL),
        ],
        check=True,
        timeout=900,
    )
    tmp.rename(TORCH_CACHE)
    return TORCH_CACHE


def _with_cpu_torch(lab: Lab, host: LabHost) -> str:
    """Put CPU torch into a lab host and a venv-like python wrapper in front of it."""
    site = _torch_site()
    shutil.copytree(site, host.root / "opt" / "torch-site", symlinks=True)
    wrapper = host.root / "opt" / "torch-venv" / "bin" / "python"
    wrapper.parent.mkdir(parents=True)
    wrapper.write_text('#!/bin/sh\nPYTHONPATH=/opt/torch-site exec /usr/bin/python3 "$@"\n')
    os.chmod(wrapper, 0o755)
    return "/opt/torch-venv/bin/python"


@pytest.mark.lab
def test_lab_hosts_without_torch_report_it(lab: Lab) -> None:
    # pristine hosts: the worker's lab is shared by files, and one that ran before may have
    # left torch on a host (seen in a CI run: /opt/rocmprov/torch-venv on rpv7-h03)
    for h in lab.hosts:
        lab.reset(h)
    run = rocmprov("verify", str(lab.inventory), "--format", "json")
    doc = json.loads(run.stdout)
    assert run.rc == 2
    assert sorted(h["host"] for h in doc["hosts"]) == sorted(h.name for h in lab.hosts)
    for host in doc["hosts"]:
        assert "No module named 'torch'" in host["error"], host


@pytest.mark.lab
def test_lab_host_with_cpu_torch_says_no_gpu(lab: Lab, clean_host: LabHost) -> None:
    python = _with_cpu_torch(lab, clean_host)
    run = rocmprov(
        "verify",
        str(lab.inventory),
        "--limit",
        clean_host.name,
        "--python",
        python,
        "--format",
        "json",
    )
    doc = json.loads(run.stdout)
    (host,) = doc["hosts"]
    assert host["torch"] == "2.13.0+cpu"
    assert host["backend"] == "CPU"
    status = {r["test"]: r for r in host["results"]}
    assert status["devices"]["status"] == "fail"
    assert "no GPU" in status["devices"]["detail"]
    for name in ("matmul", "amp", "ddp"):
        assert status[name]["status"] == "skip"
    assert run.rc == 2
