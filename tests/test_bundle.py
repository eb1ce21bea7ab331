"""Bundles: write, read (dir and tar.gz), scrub, partial bundles, same findings as live."""

from __future__ import annotations

import json
import tarfile
from pathlib import Path

from rocmprov.audit.host import audit_bundle, audit_local
from rocmprov.collect.bundle import SCHEMA, Bundle, ProbeOutput, read_bundle, write_bundle
from rocmprov.collect.scrub import scrub
from rocmprov.model import Severity
from tests.helpers import rocmprov


def _key(report) -> list[tuple]:
    return sorted(
        (f.check, f.severity.value, f.subject, f.summary, f.actual) for f in report.findings
    )


def test_collect_then_audit_bundle_gives_the_live_findings(tmp_path: Path) -> None:
    live, bundle = audit_local()
    path = write_bundle(bundle, tmp_path)
    again = audit_bundle(read_bundle(path))
    assert _key(again) == _key(live)
    assert again.facts == live.facts


def test_cli_collect_and_audit_bundle_agree_with_live(tmp_path: Path) -> None:
    run = rocmprov("collect", "-o", str(tmp_path / "out"), "--tar")
    assert run.rc == 0, run.stderr
    (host_dir,) = [p for p in (tmp_path / "out").iterdir() if p.is_dir()]
    live = json.loads(rocmprov("audit", "--format", "json").stdout)
    for target in (host_dir, host_dir.parent / f"{host_dir.name}.tar.gz"):
        from_bundle = json.loads(
            rocmprov("audit", "--bundle", str(target), "--format", "json").stdout
        )
        for doc in (live, from_bundle):
            for h in doc["hosts"]:
                h.pop("duration", None)
        assert from_bundle["hosts"][0]["findings"] == live["hosts"][0]["findings"]
        assert from_bundle["hosts"][0]["facts"] == live["hosts"][0]["facts"]


def test_manifest_contract(tmp_path: Path) -> None:
    _, bundle = audit_local()
    path = write_bundle(bundle, tmp_path)
    manifest = json.loads((path / "manifest.json").read_text())
    assert manifest["schema"] == SCHEMA
    assert manifest["host"] == bundle.host
    assert manifest["rocmprov_version"]
    for probe in manifest["probes"]:
        assert {"id", "command", "rc", "status", "duration", "collected_at"} <= set(probe)
        assert (path / f"{probe['id']}.out").is_file()
        assert (path / f"{probe['id']}.out").stat().st_mode & 0o077 == 0


def test_partial_bundle_is_analysed_as_far_as_it_goes(tmp_path: Path) -> None:
    bundle = Bundle(
        "partial",
        {
            "os-release": ProbeOutput(
                "os-release", "cat /etc/os-release", 0, 'ID=ubuntu\nVERSION_ID="22.04"\n'
            ),
            "uname": ProbeOutput("uname", "uname -r", 0, "5.15.0-91-generic\n"),
        },
    )
    report = audit_bundle(read_bundle(write_bundle(bundle, tmp_path)))
    by_check = {f.check: f for f in report.findings}
    assert report.facts["os"] == "ubuntu 22.04"
    assert by_check["gpu.amd.present"].severity is Severity.UNKNOWN
    assert by_check["rocm.installed"].severity is Severity.UNKNOWN
    assert by_check["user.groups"].severity is Severity.UNKNOWN
    assert report.severity is Severity.UNKNOWN


def test_tar_with_a_top_directory(tmp_path: Path) -> None:
    _, bundle = audit_local()
    path = write_bundle(bundle, tmp_path / "d")
    tar_path = tmp_path / "b.tar.gz"
    with tarfile.open(tar_path, "w:gz") as tar:
        tar.add(path, arcname="some/deeper/dir")
    assert read_bundle(tar_path).outputs.keys() == bundle.outputs.keys()


def test_scrub_removes_secrets_and_home_names() -> None:
    text = (
        "HF_TOKEN=hf_abcdefghijklmnopqrstuvwxyz123\n"
        "password: hunter2\n"
        "/home/alice/venv/bin/python\n"
        "-----BEGIN OPENSSH PRIVATE KEY-----\nAAAA\n-----END OPENSSH PRIVATE KEY-----\n"
        "api_key='sk-123'\n"
        "ghp_0123456789abcdefghijABCDEFGHIJ\n"
    )
    out = scrub(text)
    for secret in (
        "hunter2",
        "alice",
        "AAAA",
        "sk-123",
        "abcdefghijklmnopqrstuvwxyz123",
        "ghp_0123456789abcdefghij",
    ):
        assert secret not in out
    assert "/home/USER/venv/bin/python" in out
    assert "password: [removed]" in out


def test_collected_bundle_is_scrubbed_on_disk(tmp_path: Path) -> None:
    bundle = Bundle(
        "h",
        {
            "cmdline": ProbeOutput(
                "cmdline", "cat /proc/cmdline", 0, "root=/dev/sda1 token=s3cr3t quiet\n"
            )
        },
    )
    path = write_bundle(bundle, tmp_path)
    assert "s3cr3t" not in (path / "cmdline.out").read_text()
