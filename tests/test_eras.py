"""Output formats of other eras and layouts (issue 29): amd-smi's XGMI table without PCI domains,
the ROCm 6.0-6.2 THROTTLE_STATUS field, amd-smi bad-pages in text and JSON, rocm-smi
--showrasinfo, and the gfxhub/mmhub fault lines of newer amdgpu. Every text is a fixture with
its source (tests/fixtures/amd-smi-health, ras-views, dmesg); the source-derived ones say so."""

from __future__ import annotations

from pathlib import Path

import pytest

from rocmprov.checks import health, health_limits
from rocmprov.checks.policy import Policy
from rocmprov.facts.host import HostFacts
from rocmprov.model import Severity
from rocmprov.parse.amdsmi_health import build_health, full_bdf, parse_health, parse_xgmi
from rocmprov.parse.dmesg import parse_dmesg
from rocmprov.parse.pci import PciDevice
from rocmprov.parse.ras_views import parse_amd_smi_bad_pages, parse_rocm_smi_rasinfo
from tests.fixtureload import FIXTURES, load

VIEWS = sorted((FIXTURES / "ras-views").glob("*.txt"))
HEALTH = FIXTURES / "amd-smi-health"
MI300X = PciDevice(bdf="0000:05:00.0", vendor_id="1002", device_id="74a1", class_id="1200")


def _facts(**texts: str | None) -> HostFacts:
    return HostFacts(host="h", pci=(MI300X,), gpu_health=build_health(texts))


def _text(kind: str, name: str) -> str:
    return load(FIXTURES / kind / name).text


@pytest.mark.parametrize("path", VIEWS, ids=[p.name for p in VIEWS])
def test_ras_view_fixture(path: Path) -> None:
    fx = load(path)
    assert str(fx.header["source"]).startswith("https://") and fx.header["what"]
    derived = "derived-from-source" in path.name
    assert bool(fx.header.get("derived")) == derived
    if derived:
        assert fx.header["what"].startswith("NOT a capture")
    exp = fx.expect
    if fx.header["tool"].startswith("amd-smi bad-pages"):
        pages = parse_amd_smi_bad_pages(fx.text)
        assert [[p.index, p.retired, p.pending, p.unreservable] for p in pages] == exp["pages"]
    else:
        (doc,) = parse_rocm_smi_rasinfo(fx.text)
        assert len([doc]) == exp["gpus"]
        state = doc["ras"]["ecc_block_state"]
        assert [b.upper() for b, s in state.items() if s == "ENABLED"] == exp["enabled"]
        assert [b.upper() for b, s in state.items() if s == "DISABLED"] == exp["disabled"]
        assert [b.upper() for b in doc["ecc_blocks"]] == exp["counted_blocks"]


def test_bad_pages_na_gpu_is_not_zero_pages() -> None:
    text = _text("ras-views", "amd-smi-bad-pages-json-single-page-dict-derived-from-source.txt")
    # one page as a bare object counts one (not its three keys); the all-"N/A" GPU is absent
    assert [(p.index, p.retired) for p in parse_amd_smi_bad_pages(text)] == [(0, 1)]


def test_bad_pages_text_reaches_the_check() -> None:
    text = _text("ras-views", "amd-smi-bad-pages-text-listed-pages-derived-from-source.txt")
    found = health.check_bad_pages(_facts(**{"amd-smi-bad-pages": text}), Policy())
    retired = {f.subject: f.severity for f in found if f.check == "gpu.bad-pages.retired"}
    pending = {f.subject: f.severity for f in found if f.check == "gpu.bad-pages.pending"}
    assert retired["gpu0"] is not Severity.OK and retired["gpu1"] is Severity.OK
    assert pending["gpu0"] is not Severity.OK and pending["gpu1"] is Severity.OK
    none = _text("ras-views", "amd-smi-bad-pages-text-none-mi300x-blog-excerpt.txt")
    quiet = health.check_bad_pages(_facts(**{"amd-smi-bad-pages": none}), Policy())
    assert {f.severity for f in quiet} == {Severity.OK} and len(quiet) == 4


def test_rocm_smi_rasinfo_feeds_ecc_and_ras_checks() -> None:
    text = _text("ras-views", "rocm-smi-showrasinfo-text-mi50-wiki-excerpt.txt")
    facts = _facts(**{"rocm-smi-ras": text})
    ecc = health.check_ecc(facts, Policy())
    assert {(f.check, f.severity) for f in ecc} == {
        ("gpu.ecc.uncorrectable", Severity.OK),
        ("gpu.ecc.correctable", Severity.OK),
    }
    (ras,) = health.check_ras(facts, Policy())
    assert ras.severity is Severity.OK and "UMC" in ras.summary
    # a count in the same table layout: the check reads it (the capture's UMC row, changed)
    worse = text.replace(
        "UMC        ENABLED                  0                    0",
        "UMC        ENABLED                  7                    2",
    )
    bad = health.check_ecc(_facts(**{"rocm-smi-ras": worse}), Policy())
    ue = next(f for f in bad if f.check == "gpu.ecc.uncorrectable")
    assert ue.severity is Severity.CRITICAL and "UMC ue=2 ce=7" in ue.summary


def test_amd_smi_ras_wins_over_rocm_smi() -> None:
    metric = _text("amd-smi-health", "metric-text-ecc-ecc-blocks-deferred-changelog.txt")
    rocm = _text("ras-views", "rocm-smi-showrasinfo-text-mi50-wiki-excerpt.txt")
    facts = build_health({"amd-smi-metric": metric, "rocm-smi-ras": rocm})
    assert facts is not None and facts.gpus
    assert {b.name for b in facts.gpus[0].blocks} == {"UMC", "SDMA"}  # amd-smi's blocks kept
    assert "MMHUB" not in {b.name for b in facts.gpus[0].blocks}


@pytest.mark.parametrize(
    "name, bdfs",
    [
        ("xgmi-text-no-pci-domain-mi300x-blog-excerpt.txt", ["0000:05:00.0", "0000:26:00.0"]),
        (
            "xgmi-text-8gpu-link-metric-table-changelog.txt",
            ["0000:0c:00.0", "0000:22:00.0", "0000:38:00.0", "0000:5c:00.0",
             "0000:9f:00.0", "0000:af:00.0", "0000:bf:00.0", "0000:df:00.0"],
        ),
    ],
)
def test_xgmi_table_with_and_without_pci_domain(name: str, bdfs: list[str]) -> None:
    fx = load(HEALTH / name)
    rows = parse_xgmi(fx.text)
    assert [r.bdf for r in rows] == bdfs
    assert {r.xgmi_link_type for r in rows} == {"XGMI"}
    links = [f for f in health.check_xgmi(_facts(**{"amd-smi-xgmi": fx.text}), Policy())
             if f.check == "gpu.xgmi.links"]  # fmt: skip
    assert len(links) == len(bdfs) and {f.severity for f in links} == {Severity.OK}


def test_full_bdf_both_spellings() -> None:
    assert full_bdf("05:00.0") == full_bdf("0000:05:00.0") == "0000:05:00.0"
    assert full_bdf("0000:C1:00.0") == "0000:c1:00.0"
    assert full_bdf("GPU0") == "" and full_bdf("05:00") == ""


@pytest.mark.parametrize(
    "name",
    ["metric-text-power-throttle-status-mi300x-blog-excerpt.txt",
     "metric-text-power-throttle-status-navi-changelog-6.1.1.txt",
     "metric-json-power-throttle-status-changelog-6.1.0.txt"],
)
def test_throttle_status_of_rocm_6_0_to_6_2(name: str) -> None:
    fx = load(HEALTH / name)
    gpus = parse_health(fx.text)
    assert len(gpus) == fx.expect["gpus"]
    assert all(g.throttle_seen and not g.throttle_active for g in gpus)
    ok = health_limits.check_throttle(_facts(**{"amd-smi-metric": fx.text}), Policy())
    assert {f.severity for f in ok} == {Severity.OK} and len(ok) == len(gpus)
    # the other value the 6.x CLI prints (amdsmi_commands.py: THROTTLED when the status is set)
    hot = fx.text.replace("THROTTLE_STATUS: UNTHROTTLED", "THROTTLE_STATUS: THROTTLED", 1)
    hot = hot.replace('"throttle_status": "UNTHROTTLED"', '"throttle_status": "THROTTLED"', 1)
    found = health_limits.check_throttle(_facts(**{"amd-smi-metric": hot}), Policy())
    assert found[0].severity is Severity.WARNING and "THROTTLE_STATUS" in found[0].summary


@pytest.mark.parametrize(
    "name, detail",
    [
        ("mi300x-mmhub0-retry-page-fault-excerpt.txt", "mmhub0 retry"),
        ("gfxhub0-no-retry-page-fault-c6-pt-main-thread-excerpt.txt", "gfxhub0 no-retry"),
        ("vega-psp-hw-init-failed-mmhub-vmc-page-fault-excerpt.txt", "mmhub VMC"),
    ],
)
def test_hub_page_fault_lines(name: str, detail: str) -> None:
    log = parse_dmesg(_text("dmesg", name))
    assert detail in {e.detail for e in log.with_tag("page_fault")}


def test_page_fault_needs_the_kernel_prefix() -> None:
    line = "[ 4778.915423] amdgpu 0000:c6:00.0: amdgpu: [gfxhub0] retry page fault (src_id:0)"
    assert parse_dmesg(line).tags == ("page_fault",)
    # the same words in a user program's own report, or in a line no driver printed
    forged = [
        "[ 4778.915423] python3[1234]: amdgpu: [gfxhub0] retry page fault (src_id:0)",
        "[ 4778.915423] myapp: [gfxhub0] retry page fault (src_id:0)",
        "<14>[ 4778.915423] amdgpu: [mmhub0] retry page fault (src_id:0)",
    ]
    assert all(parse_dmesg(f).tags == () for f in forged)


def test_dmesg_wall_clock_prefix() -> None:
    log = parse_dmesg(_text("dmesg", "mi300-dmesg-T-clock-prefix-two-gpus-fault-excerpt.txt"))
    assert set(log.gpu_bdfs) == {"0000:a6:00.0", "0000:06:00.0"}


def test_ip_block_init_failure_names_the_block() -> None:
    log = parse_dmesg(_text("dmesg", "vega-psp-hw-init-failed-mmhub-vmc-page-fault-excerpt.txt"))
    assert [e.detail for e in log.with_tag("ip_init_failed")] == ["psp"]


def test_bad_pages_text_hostile_long_line_is_linear() -> None:
    """A value line padded with 256 KiB of blanks (the probe's byte cap) is read in linear time
    (no lazy group before a trailing-blank anchor) and, longer than any line amd-smi prints, is
    not read as a value; the next GPU of the same (captured, MI300X blog) text still is."""
    none = _text("ras-views", "amd-smi-bad-pages-text-none-mi300x-blog-excerpt.txt")
    pad = " " * 262144
    hostile = "GPU: 7\n    RETIRED: x" + pad + "y\n    PENDING: x" + pad + "y\n"
    got = parse_amd_smi_bad_pages(hostile + none)
    assert [p.index for p in got] == [p.index for p in parse_amd_smi_bad_pages(none)]
