"""`audit --format html` of a 200-host bundle fleet, opened in a real headless Chromium (Debian's
`chromium` package, installed by tests/lab/prepare.sh): the grid and one host's details render
after the page's script ran, host text stays text, nothing is fetched, the size stays small.
Set ROCMPROV_SCREENSHOT=PATH to keep the screenshot (docs/img/fleet-report.png was made so)."""

from __future__ import annotations

import json
import re
import shutil
import struct
import subprocess
from pathlib import Path
from urllib.parse import quote

import pytest

from rocmprov.report.html import script_json
from tests.fleetbundles import (
    KERNEL_CHANGE,
    NO_TORCH,
    PMFW_CHANGE,
    VBIOS_CHANGE,
    base_bundle,
    host_bundle,
    write_fleet,
)
from tests.helpers import rocmprov

EVIL = 'evil"><img src=x onerror=alert(1)></script><!--'
HOSTS = 200
MAX_BYTES = 2_000_000  # 200 hosts; about 1 KB a host


def _chromium() -> str:
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    assert path, "chromium is not installed (Debian: apt-get install chromium; see prepare.sh)"
    return path


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("fleet200")
    changes = {f"gpu{i:03d}": KERNEL_CHANGE for i in (7, 61, 130)}
    changes.update({f"gpu{i:03d}": VBIOS_CHANGE for i in (42, 150)})
    changes.update({"gpu005": PMFW_CHANGE})
    changes.update({f"gpu{i:03d}": NO_TORCH for i in (12, 99, 180)})
    write_fleet(d / "bundles", HOSTS - 1, changes)
    from rocmprov.collect.bundle import write_bundle

    write_bundle(host_bundle(base_bundle(), EVIL), d / "bundles")
    out = d / "report.html"
    run = rocmprov(
        "audit", "--bundle", str(d / "bundles"), "--format", "html", "--output", str(out)
    )
    assert run.rc == 2, run.stderr  # the H200 bundle has no AMD GPU: critical
    return out


def _browser(path: Path, fragment: str, *extra: str) -> subprocess.CompletedProcess:
    profile = path.parent / "chromium-profile"
    return subprocess.run(
        [
            _chromium(),
            "--headless",
            "--no-sandbox",  # root in CI containers; harmless otherwise
            "--disable-gpu",
            "--hide-scrollbars",
            f"--user-data-dir={profile}",
            "--virtual-time-budget=10000",  # let the page's script run before dump/screenshot
            *extra,
            f"{path.as_uri()}#{fragment}",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_the_file_is_self_contained_small_and_escaped(report: Path) -> None:
    html = report.read_text(encoding="utf-8")
    assert len(html.encode()) < MAX_BYTES
    assert "default-src 'none'" in html  # the browser may fetch nothing
    page = re.sub(r'<script id="data" type="application/json">.*?</script>', "", html, flags=re.S)
    assert not re.search(r"<(link|img|iframe)\b|\bsrc=|https?://", page)
    assert "<img src=x" not in html and "onerror=alert(1)></script>" not in html
    data = json.loads(re.search(r'<script id="data"[^>]*>(.*?)</script>', html, re.S).group(1))
    assert len(data["hosts"]) == HOSTS
    assert EVIL in {h["n"] for h in data["hosts"]}
    assert [d[0] for d in data["drift"]] == ["kernel", "vbios", "pmfw"]


def test_script_json_cannot_end_the_script() -> None:
    text = script_json({"a": "</script><!-- & \u2028 é"})
    assert not set(text) & set("<>&") and text.isascii()
    assert json.loads(text) == {"a": "</script><!-- & \u2028 é"}


def test_chromium_renders_the_grid_and_a_hosts_details(report: Path) -> None:
    run = _browser(report, "host=gpu005", "--dump-dom")
    dom = run.stdout
    assert run.returncode == 0 and 'data-ready="1"' in dom, run.stderr[-2000:]
    rows = re.findall(r'<tr class="host[^"]*" data-i="\d+" data-host="([^"]*)"', dom)
    assert len(rows) == HOSTS and "gpu000" in rows and "gpu199" not in rows
    assert "200 of 200 hosts shown" in dom  # every host has a problem (no AMD GPU on an H200)
    details = dom[dom.index('<section id="details"') :]
    assert details.startswith('<section id="details" data-host="gpu005">')
    assert "fleet.drift.pmfw" in details and "00.59.52.00" in details
    assert "gpu.amd.present" in details and "fix: " in details
    assert "115-D534P00-100" in details  # the GPU's VBIOS from the version inventory
    # the grid cell colours: gpu005's pmfw drift cell is a warning, its neighbour's is ok
    row5 = re.search(r'data-host="gpu005">(.*?)</tr>', dom).group(1)
    row4 = re.search(r'data-host="gpu004">(.*?)</tr>', dom).group(1)
    assert re.search(r'<td class="dv w"[^>]*>00\.59\.52\.00</td>', row5)
    assert re.search(r'<td class="dv o"[^>]*>00\.59\.50\.00</td>', row4)


def test_hostile_host_name_stays_text_in_the_browser(report: Path) -> None:
    dom = _browser(report, "host=" + quote(EVIL, safe=""), "--dump-dom").stdout
    assert "<img" not in dom  # neither in the grid nor in the details
    details = dom[dom.index('<section id="details"') :]
    assert "evil&quot;&gt;&lt;img src=x onerror=alert(1)&gt;&lt;/script&gt;" in details


def test_screenshot(report: Path, tmp_path: Path) -> None:
    import os

    shot = tmp_path / "fleet-report.png"
    run = _browser(report, "host=gpu005", f"--screenshot={shot}", "--window-size=1600,1000")
    assert run.returncode == 0 and shot.is_file(), run.stderr[-2000:]
    png = shot.read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    assert struct.unpack(">II", png[16:24]) == (1600, 1000)
    assert len(png) > 50_000  # a drawn grid, not a blank page
    keep = os.environ.get("ROCMPROV_SCREENSHOT")
    if keep:
        shutil.copyfile(shot, keep)
