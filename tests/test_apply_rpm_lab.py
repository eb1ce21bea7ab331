"""RHEL and SLES: what `rocmprov apply --check --diff` would write, on a lab host whose facts say
RHEL 9.6 or SLES 15 SP6 (issue 12, "proven as far as this machine allows").

The lab hosts are Debian 12; given /etc/redhat-release or SUSE's os-release, Ansible's facts say
RedHat / SLES, and the repo role's RedHat (yum_repository) and SUSE (.repo files) paths run in
check mode. No RHEL or SLES package manager runs here: docs/apply.md says so. The release rows
are picked from the table by what they publish, never by number.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from rocmprov.knowledge import releases
from tests.lab import Lab, LabHost
from tests.test_apply_lab import apply
from tests.test_releases_lab import gather_facts, inventory, state_of

pytestmark = pytest.mark.lab


def newest_row(section: str, key: str, minor: str) -> dict[str, Any]:
    rows = [r for r in releases.load_table()["releases"]
            if minor in ((r.get(section) or {}).get(key) or {})]  # fmt: skip
    assert rows, f"no release of the table publishes {section} {key} {minor}"
    return max(rows, key=lambda r: releases.version_key(str(r["version"])))


def pretend(host: LabHost, *, os_release: str, extra: dict[str, str]) -> None:
    etc = host.root / "etc"
    (etc / "os-release").unlink()
    (etc / "os-release").write_text(os_release)
    for rel, text in extra.items():
        path = host.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def check_run(lab: Lab, host: LabHost, row: dict[str, Any], tmp: Path) -> tuple[str, dict]:
    facts = gather_facts(lab, [host])[host.name]
    plan = releases.resolve(row["version"], facts)
    assert plan["error"] == "", plan["error"]
    before = state_of(lab, host)
    inv = inventory(lab, tmp, [(host, row["version"])])
    rc, doc, _ = apply(inv, tmp, "--check", "--diff", "--tags", "repo")
    assert rc == 0, json.dumps(doc["hosts"], indent=1)
    assert state_of(lab, host) == before  # check mode changed nothing
    return "\n".join(c for h in doc["hosts"] for c in h["changes"]), plan


def test_rhel_9_6_shows_the_yum_repositories_it_would_write(
    lab: Lab, clean_host: LabHost, tmp_path: Path
) -> None:
    row = newest_row("rpm", "amdgpu", "9.6")
    pretend(
        clean_host,
        os_release='NAME="Red Hat Enterprise Linux"\nVERSION="9.6 (Plow)"\nID="rhel"\n'
        'ID_LIKE="fedora"\nVERSION_ID="9.6"\nPRETTY_NAME="Red Hat Enterprise Linux 9.6 (Plow)"\n',
        extra={
            "etc/redhat-release": "Red Hat Enterprise Linux release 9.6 (Plow)\n",
            "etc/yum.repos.d/.keep": "",
        },  # as on RHEL
    )
    shown, plan = check_run(lab, clean_host, row, tmp_path)
    assert plan["family"] == "rpm"
    print(f"\nRHEL 9.6, ROCm {plan['version']}: {plan['rocm_url']} {plan['amdgpu_url']}")
    assert f"baseurl = {plan['rocm_url']}" in shown, shown
    assert f"baseurl = {plan['amdgpu_url']}" in shown, shown
    assert "/el/9.6/" in plan["amdgpu_url"]


def test_sles_15_sp6_shows_the_zypper_repositories_it_would_write(
    lab: Lab, clean_host: LabHost, tmp_path: Path
) -> None:
    row = newest_row("sles", "rocm", "15.6")
    pretend(
        clean_host,
        os_release='NAME="SLES"\nVERSION="15-SP6"\nVERSION_ID="15.6"\n'
        'PRETTY_NAME="SUSE Linux Enterprise Server 15 SP6"\nID="sles"\nID_LIKE="suse"\n',
        extra={"etc/zypp/repos.d/.keep": ""},
    )
    shown, plan = check_run(lab, clean_host, row, tmp_path)
    assert plan["family"] == "zypper"
    print(f"\nSLES 15 SP6, ROCm {plan['version']}: {plan['rocm_url']} {plan['amdgpu_url']}")
    assert f"+baseurl={plan['rocm_url']}" in shown, shown
    if plan["amdgpu_url"]:
        assert f"+baseurl={plan['amdgpu_url']}" in shown, shown
