"""The release table (playbooks/data/rocm_releases.yml), its resolver and its checker (issue 12).

The resolver is the playbooks' own filter plugin; these tests call it through knowledge.releases
exactly as the audit does, and the lab tests (test_releases_lab.py) prove the same URLs on real
hosts against repositories laid out as AMD publishes them.
"""

from __future__ import annotations

import copy
import http.server
import threading
from collections.abc import Iterator

import pytest

from rocmprov.data import check
from rocmprov.knowledge import releases
from tests.lab import amd_layout

UBUNTU_2404 = {"os_family": "Debian", "distribution": "Ubuntu", "distribution_version": "24.04",
               "distribution_major_version": "24"}  # fmt: skip
DEBIAN_12 = {"os_family": "Debian", "distribution": "Debian", "distribution_version": "12.11",
             "distribution_major_version": "12"}  # fmt: skip
RHEL = {"os_family": "RedHat", "distribution": "RedHat", "distribution_major_version": "9"}
SLES = {"os_family": "Suse", "distribution": "SLES", "distribution_major_version": "15"}


def rows_with(pred) -> list[releases.Release]:  # type: ignore[no-untyped-def]
    return [r for r in releases.all_releases() if pred(r)]


def test_the_shipped_table_is_sound() -> None:
    assert list(check.problems(releases.load_table())) == []
    assert check.main([]) == 0


def test_both_streams_and_the_newest_releases_are_there() -> None:
    streams = {r.stream for r in releases.all_releases()}
    assert streams == {"legacy", "therock"}
    newest = releases.find("latest")
    assert newest is not None and newest.stream == "therock"
    assert releases.find(releases.default_version()).torch_versions  # type: ignore[union-attr]


def test_a_minor_means_its_newest_point_release() -> None:
    points = rows_with(lambda r: r.minor == "7.2")
    assert len(points) > 1
    newest = max(points, key=lambda r: releases.version_key(r.version))
    assert releases.find("7.2") == newest
    assert releases.find("7.2.1").version == "7.2.1"  # type: ignore[union-attr]


def test_legacy_7x_uses_the_driver_version_in_the_amdgpu_path() -> None:
    """ROCm/ROCm#5881, #6156: amdgpu/<rocm version> does not exist from 7.0 on."""
    proven = 0
    for row in rows_with(lambda r: r.stream == "legacy" and r.minor in ("7.0", "7.1", "7.2")):
        plan = releases.resolve(row.version, UBUNTU_2404)
        if plan["error"] or not plan["amdgpu_url"]:
            continue
        proven += 1
        assert f"/amdgpu/{row.version}/" not in plan["amdgpu_url"], plan
        assert plan["driver"] and f"/amdgpu/{plan['driver']}/" in plan["amdgpu_url"]
        assert plan["graphics_url"].endswith("/ubuntu")
    assert proven >= 3


def test_therock_comes_from_amds_new_repository_with_its_own_key_and_no_pin() -> None:
    row = releases.find("latest")
    assert row is not None
    plan = releases.resolve(row.version, UBUNTU_2404)
    assert plan["error"] == ""
    assert "repo.amd.com" in plan["rocm_url"] and "{distro}" not in plan["rocm_url"]
    assert "repo.amd.com" in plan["key_url"]
    assert plan["pin_origin"] == ""
    assert all(p.startswith("amdrocm") for p in plan["packages"])
    assert plan["prefix"].startswith("/opt/rocm/core")


def test_debian_is_keyed_by_its_major_release() -> None:
    plan = releases.resolve("latest", DEBIAN_12)
    assert plan["error"] == "" and "debian12" in plan["rocm_url"]


def test_rhel_takes_only_a_minor_amd_publishes_the_driver_for() -> None:
    row = next(
        r for r in releases.load_table()["releases"]
        if (r.get("rpm") or {}).get("amdgpu") and r.get("stream") == "legacy"
    )  # fmt: skip
    minors = sorted(row["rpm"]["amdgpu"])
    ok = releases.resolve(
        row["version"],
        {
            **RHEL,
            "distribution_version": minors[-1],
            "distribution_major_version": minors[-1].split(".")[0],
        },
    )
    assert ok["error"] == ""
    assert f"/el/{minors[-1]}/" in ok["amdgpu_url"]
    bad = releases.resolve(row["version"], {**RHEL, "distribution_version": "9.99"})
    assert bad["error"] == "" and bad["rocm_url"]  # ROCm itself still installs
    assert bad["amdgpu_url"] == ""
    assert "no amdgpu driver for RedHat 9.99" in bad["amdgpu_error"]


def test_sles_paths_come_from_the_table() -> None:
    row = next(r for r in releases.load_table()["releases"] if (r.get("sles") or {}).get("rocm"))
    version = sorted(row["sles"]["rocm"])[-1]
    plan = releases.resolve(
        row["version"],
        {
            **SLES,
            "distribution_version": version,
            "distribution_major_version": version.split(".")[0],
        },
    )
    assert plan["family"] == "zypper" and plan["rocm_url"].startswith("https://")


def test_mirrors_rewrite_every_url() -> None:
    mirrors = {"https://repo.radeon.com": "http://mirror.test/radeon",
               "https://stable.repo.amd.com": "http://mirror.test/amd"}  # fmt: skip
    for wanted in ("7.2", "latest"):
        plan = releases.resolve(wanted, UBUNTU_2404, mirrors)
        urls = [plan[k] for k in ("rocm_url", "amdgpu_url", "graphics_url", "key_url") if plan[k]]
        assert urls and all(u.startswith("http://mirror.test/") for u in urls), plan


def test_a_release_not_in_the_table_is_a_clear_error() -> None:
    plan = releases.resolve("9.9", UBUNTU_2404)
    assert plan["error"].startswith("ROCm 9.9 is not in the release table (known: 6.0.0")


# --- the checker finds what a careless edit breaks -------------------------------------------


def broken(edit) -> list[str]:  # type: ignore[no-untyped-def]
    table = copy.deepcopy(releases.load_table())
    edit(table)
    return list(check.problems(table))


def test_the_checker_finds_a_row_without_a_source() -> None:
    def edit(t):  # type: ignore[no-untyped-def]
        t["releases"][0].pop("source")

    assert any("no source" in p for p in broken(edit))


def test_the_checker_finds_a_template_in_packages() -> None:
    def edit(t):  # type: ignore[no-untyped-def]
        t["releases"][-1]["packages"] = ["amdrocm10.1-<gfx>"]

    assert any("installable names" in p for p in broken(edit))


def test_the_checker_finds_a_default_that_is_not_the_newest_with_a_wheel() -> None:
    def edit(t):  # type: ignore[no-untyped-def]
        t["default"] = "6.0.0"

    assert any("is not the newest release with a wheel" in p for p in broken(edit))


def test_the_checker_finds_torch_versions_without_an_index() -> None:
    def edit(t):  # type: ignore[no-untyped-def]
        row = next(r for r in t["releases"] if (r.get("torch") or {}).get("versions"))
        row["torch"]["index"] = None

    assert any("torch versions without an index URL" in p for p in broken(edit))


# --- --online, against a real HTTP server on loopback ----------------------------------------


@pytest.fixture
def server() -> Iterator[str]:
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if self.path == "/ok":
                self.send_response(200)
                self.end_headers()
                self.wfile.write(b"Origin: repo.radeon.com\n" * 10_000)  # more than we read
            else:
                self.send_error(404)

        def log_message(self, *args: object) -> None:
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_online_fetch_says_ok_or_the_http_status(server: str) -> None:
    assert check.fetch_status(f"{server}/ok") == "ok"
    assert check.fetch_status(f"{server}/rocm/apt/7.2/dists/noble/Release") == "HTTP 404"
    assert check.fetch_status("http://127.0.0.1:9/").startswith("unreachable")


def test_online_lists_a_release_file_per_suite_and_each_key() -> None:
    urls = list(check.online_urls(releases.load_table()))
    assert any(u.endswith("/dists/noble/Release") for _, u in urls)
    assert any(what == "key" and "repo.amd.com" in u for what, u in urls)
    # the default release's driver repository (amdgpu/31.50/ubuntu, codename suite) is fetched too
    assert ("10.1.0 ubuntu-24.04 amdgpu",
            "https://repo.radeon.com/amdgpu/31.50/ubuntu/dists/noble/Release") in urls
    assert ("7.2.2 ubuntu-24.04 graphics",
            "https://repo.radeon.com/graphics/7.2.1/ubuntu/dists/noble/Release") in urls


# --- AMD's layout rules (tests/lab/amd_layout.yaml) against every row (issue 24) ------------
# Expected strings below are AMD's own instructions with the template variables filled in by
# hand (sources in amd_layout.yaml), not output of the code under test.


def test_every_row_matches_amds_layout_rules() -> None:
    table = releases.load_table()
    layout = amd_layout.Layout()
    found = [p for row in amd_layout_rows(table)
             for p in amd_layout.row_problems(table, row, layout)]
    assert found == []


def amd_layout_rows(table: dict) -> list[dict]:  # type: ignore[type-arg]
    return [r for r in table["releases"] if isinstance(r, dict) and r.get("version")]


@pytest.mark.parametrize(("version", "stream", "driver", "kind", "os", "family", "want"), [
    # amdgpu-docs 30.10.2 RHEL template: RHEL 9 by minor, RHEL 8 and 10 by major.
    ("7.0.2", "legacy", "30.10.2", "amdgpu", "8.10", "rpm", "amdgpu/30.10.2/el/8/main/x86_64"),
    ("7.0.2", "legacy", "30.10.2", "amdgpu", "10.0", "rpm", "amdgpu/30.10.2/el/10/main/x86_64"),
    ("7.0.2", "legacy", "30.10.2", "amdgpu", "9.6", "rpm", "amdgpu/30.10.2/el/9.6/main/x86_64"),
    # amdgpu-docs 30.10.1 (main, 2025-09-17): only RHEL 10 by major.
    ("7.0.1", "legacy", "30.10.1", "amdgpu", "8.10", "rpm",
     "amdgpu/30.10.1/el/8.10/main/x86_64"),
    ("7.2.3", "legacy", "30.30.3", "rocm", "10.1", "rpm", "rocm/el10/7.2.3/main"),
    ("6.2.0", "legacy", "", "amdgpu", "8.10", "rpm", "amdgpu/6.2/el/8.10/main/x86_64"),
    ("7.0.2", "legacy", "30.10.2", "amdgpu", "15.7", "sles", "amdgpu/30.10.2/sle/15.7/main/x86_64"),
    ("10.1.0", "therock", "31.50", "amdgpu", "8.10", "rpm", "amdgpu/31.50/el/8/main/x86_64"),
    ("10.1.0", "therock", "31.50", "rocm", "9.6", "rpm", "rocm/core/packages/rhel9/x86_64"),
])
def test_layout_rules_give_amds_rpm_paths(version: str, stream: str, driver: str, kind: str,
                                          os: str, family: str, want: str) -> None:
    rel = amd_layout.Release(version, stream, driver)
    assert amd_layout.Layout().rpm_path(rel, kind, os, family) == want


def test_layout_rules_give_amds_apt_lines() -> None:
    layout = amd_layout.Layout()

    def urls(v: str, s: str, d: str, distro: str) -> dict[str, tuple[str, str, str]]:
        repos = layout.apt_repos(amd_layout.Release(v, s, d), distro)
        return {r.kind: (r.url, r.suite, r.key_url) for r in repos}

    radeon_key = "https://repo.radeon.com/rocm/rocm.gpg.key"
    # rocm.list for 7.2.x: rocm/apt/<ver> and graphics/<ver>/ubuntu; 7.2.2's graphics is 7.2.1's.
    assert urls("7.2.2", "legacy", "30.30.2", "ubuntu-24.04") == {
        "rocm": ("https://repo.radeon.com/rocm/apt/7.2.2", "noble", radeon_key),
        "amdgpu": ("https://repo.radeon.com/amdgpu/30.30.2/ubuntu", "noble", radeon_key),
        "graphics": ("https://repo.radeon.com/graphics/7.2.1/ubuntu", "noble", radeon_key)}
    assert urls("6.2.0", "legacy", "", "ubuntu-22.04") == {
        "rocm": ("https://repo.radeon.com/rocm/apt/6.2", "jammy", radeon_key),
        "amdgpu": ("https://repo.radeon.com/amdgpu/6.2/ubuntu", "jammy", radeon_key)}
    # 10.x: stable.repo.amd.com for ROCm, AMD's driver repository amdgpu/31.50/ubuntu (Debian
    # 12 uses jammy there, as amdgpu-docs' Debian page says).
    assert urls("10.1.0", "therock", "31.50", "debian-12") == {
        "rocm": ("https://stable.repo.amd.com/rocm/core/packages/debian12/", "stable",
                 "https://stable.repo.amd.com/rocm/gpg/packages.gpg"),
        "amdgpu": ("https://repo.radeon.com/amdgpu/31.50/ubuntu", "jammy", radeon_key)}
    # Ubuntu 26.04: AMD's 10.0 page fetches amdgpu-install/31.50/ubuntu/resolute/...
    assert urls("10.0.0", "therock", "31.50", "ubuntu-26.04")["amdgpu"] == (
        "https://repo.radeon.com/amdgpu/31.50/ubuntu", "resolute", radeon_key)


def wrong(edit) -> list[str]:  # type: ignore[no-untyped-def]
    table = copy.deepcopy(releases.load_table())
    edit({str(r["version"]): r for r in amd_layout_rows(table)})
    return [p for row in amd_layout_rows(table) for p in amd_layout.row_problems(table, row)]


def test_a_graphics_path_amd_never_published_is_caught() -> None:
    def edit(rows: dict) -> None:  # type: ignore[type-arg]
        rows["7.2.2"]["apt"]["graphics"] = "graphics/7.2.2/ubuntu"
    found = wrong(edit)
    assert found and all("graphics/7.2.2/ubuntu" in p and "graphics/7.2.1/ubuntu" in p
                         for p in found)


def test_an_el_minor_where_amd_uses_the_major_is_caught() -> None:
    def edit(rows: dict) -> None:  # type: ignore[type-arg]
        rows["7.2.3"]["rpm"]["amdgpu"]["8.10"] = "amdgpu/30.30.3/el/8.10/main/x86_64"
    assert wrong(edit) == ["7.2.3 (legacy): rpm amdgpu 8.10: amdgpu/30.30.3/el/8.10/main/x86_64, "
                           "AMD: amdgpu/30.30.3/el/8/main/x86_64"]


def test_a_default_release_without_its_driver_repository_is_caught() -> None:
    def edit(rows: dict) -> None:  # type: ignore[type-arg]
        rows["10.1.0"]["apt"]["amdgpu"] = None
    found = wrong(edit)
    assert "10.1.0 (therock): apt amdgpu ubuntu-24.04: none, AMD: amdgpu/31.50/ubuntu" in found


def test_the_lab_serves_the_rules_not_the_tables_paths() -> None:
    """A wrong path in the table must not be served by the lab (tests/lab/amdrepo.py)."""
    from tests.lab import amdrepo

    table = copy.deepcopy(releases.load_table())
    row = next(r for r in amd_layout_rows(table) if r["version"] == "7.2.2")
    row["apt"]["graphics"] = "graphics/7.2.2/ubuntu"
    row["apt"]["rocm"] = "rocm/apt/7.2.2-wrong"
    served = {(r.host, r.path) for r in amdrepo.plan(table, ["7.2.2"])}
    assert ("repo.radeon.com", "graphics/7.2.1/ubuntu") in served
    assert ("repo.radeon.com", "rocm/apt/7.2.2") in served
    assert not any(p in ("graphics/7.2.2/ubuntu", "rocm/apt/7.2.2-wrong") for _, p in served)


def test_the_default_release_installs_amds_driver_repository() -> None:
    plan = releases.resolve("default", UBUNTU_2404)
    assert plan["amdgpu_url"] == "https://repo.radeon.com/amdgpu/31.50/ubuntu"
    assert plan["amdgpu_suite"] == "noble" and plan["suite"] == "stable"
    assert plan["amdgpu_key_url"] == "https://repo.radeon.com/rocm/rocm.gpg.key"
    assert plan["key_url"] != plan["amdgpu_key_url"] and plan["dkms_package"] == "amdgpu-dkms"
    rhel8 = releases.resolve("default", {"os_family": "RedHat", "distribution": "RedHat",
                                         "distribution_version": "8.10",
                                         "distribution_major_version": "8"})
    assert rhel8["amdgpu_url"] == "https://repo.radeon.com/amdgpu/31.50/el/8/main/x86_64"
