"""ECC counts between runs, per GPU serial (issue 29): a rising count is worse than a high one.
The GPU is the MI300X of AMD's amd-smi blog (its real ASIC_SERIAL, static text fixture) with the
ECC view of amd-smi's changelog (metric text fixture, all counts 0); the later runs change only
the counts in that real layout. The state file is real (a temp state directory)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from rocmprov.audit.host import audit_bundle
from rocmprov.checks.health_trend import check_ecc_trend, ecc_counts
from rocmprov.collect.bundle import Bundle, ProbeOutput
from rocmprov.collect.ras_state import NAME, load_ras_counts, save_ras_counts
from rocmprov.facts.host import HostFacts
from rocmprov.model import Severity
from rocmprov.parse.amdsmi_health import build_health, parse_health
from rocmprov.parse.pci import PciDevice
from tests.fixtureload import FIXTURES, load

HEALTH = FIXTURES / "amd-smi-health"
STATIC = load(HEALTH / "static-text-asic-serial-bus-mi300x-blog-excerpt.txt").text
METRIC = load(HEALTH / "metric-text-ecc-ecc-blocks-deferred-changelog.txt").text
SERIAL = "0xAF54E92B0A5D57C8"
MI300X = PciDevice(bdf="0000:05:00.0", vendor_id="1002", device_id="74a1", class_id="1200")


def _metric(ce: int = 0, ue: int = 0, gpu: int = 0) -> str:
    return (
        METRIC.replace("TOTAL_CORRECTABLE_COUNT: 0", f"TOTAL_CORRECTABLE_COUNT: {ce}")
        .replace("TOTAL_UNCORRECTABLE_COUNT: 0", f"TOTAL_UNCORRECTABLE_COUNT: {ue}")
        .replace("GPU: 0", f"GPU: {gpu}")
    )


def _facts(metric: str, static: str = STATIC) -> HostFacts:
    texts = {"amd-smi-static": static, "amd-smi-metric": metric}
    return HostFacts(host="h", pci=(MI300X,), gpu_health=build_health(texts))


def _trend(metric: str, before: dict, static: str = STATIC):
    (f,) = check_ecc_trend(_facts(metric, static), before)
    return f


def test_serial_is_read_as_printed() -> None:
    (g,) = parse_health(STATIC)
    assert (
        g.serial
        == load(HEALTH / "static-text-asic-serial-bus-mi300x-blog-excerpt.txt").expect["serial"]
        == SERIAL
    )
    assert ecc_counts(_facts(_metric(ce=3))) == {SERIAL: {"ce": 3, "ue": 0, "de": 0}}


def test_first_run_has_no_trend() -> None:
    assert check_ecc_trend(_facts(_metric(ce=50)), {}) == []


def test_rising_is_worse_than_high() -> None:
    high = {SERIAL: {"ce": 50, "ue": 0, "de": 0}}
    assert _trend(_metric(ce=50), high).severity is Severity.OK  # high, stable: health.py warns
    assert _trend(_metric(ce=53), high).severity is Severity.WARNING
    rising = _trend(_metric(ce=60), high)
    assert rising.severity is Severity.CRITICAL and "+10 correctable" in rising.summary
    assert _trend(_metric(ce=50, ue=1), high).severity is Severity.CRITICAL


def test_keyed_by_serial_not_index() -> None:
    # the same GPU now enumerated as GPU 3 (another GPU dropped out): still compared
    moved = STATIC.replace("GPU: 0", "GPU: 3")
    f = _trend(_metric(ce=12, gpu=3), {SERIAL: {"ce": 0, "ue": 0, "de": 0}}, moved)
    assert f.severity is Severity.CRITICAL and f.subject == f"gpu3 ({SERIAL})"
    # another GPU's serial in the state: no comparison at all
    assert check_ecc_trend(_facts(_metric(ce=12)), {"0x1": {"ce": 0, "ue": 0, "de": 0}}) == []


def test_driver_reload_resets_the_baseline() -> None:
    f = _trend(_metric(ce=2), {SERIAL: {"ce": 40, "ue": 0, "de": 0}})
    assert f.severity is Severity.OK and "reset" in f.summary


def test_state_file_private_and_round_trip(tmp_path: Path) -> None:
    state = tmp_path / "state"
    save_ras_counts({SERIAL: {"ce": 5, "ue": 0, "de": 1}}, {"0x1": {"ce": 1, "ue": 0, "de": 0}},
                    path=state)  # fmt: skip
    assert stat.S_IMODE(state.stat().st_mode) == 0o700
    assert stat.S_IMODE((state / NAME).stat().st_mode) == 0o600
    assert load_ras_counts(state) == {
        SERIAL: {"ce": 5, "ue": 0, "de": 1},
        "0x1": {"ce": 1, "ue": 0, "de": 0},
    }


def test_state_file_untrusted_is_no_previous_run(tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    (state / NAME).write_text('{"0xA": {"ce": -1, "ue": 0, "de": 0}, "bad name": 1}')
    assert load_ras_counts(state) == {}
    (state / NAME).unlink()
    (tmp_path / "elsewhere").write_text('{"0xA": {"ce": 1, "ue": 0, "de": 0}}')
    os.symlink(tmp_path / "elsewhere", state / NAME)
    assert load_ras_counts(state) == {}  # a link is never followed
    assert load_ras_counts(tmp_path / "absent") == {}


def test_audit_bundle_adds_the_trend_only_with_a_previous_run() -> None:
    outs = {
        "amd-smi-static": ProbeOutput(id="amd-smi-static", command="x", rc=0, stdout=STATIC),
        "amd-smi-metric": ProbeOutput(id="amd-smi-metric", command="x", rc=0,
                                      stdout=_metric(ce=20)),
    }  # fmt: skip
    bundle = Bundle(host="h", outputs=outs)
    report = audit_bundle(bundle, ras_before={SERIAL: {"ce": 0, "ue": 0, "de": 0}})
    rising = [f for f in report.findings if f.check == "gpu.ecc.rising"]
    assert [f.severity for f in rising] == [Severity.CRITICAL]
    plain = audit_bundle(bundle)
    assert plain.facts == report.facts  # the bundle's facts are the bundle's alone
    assert not [f for f in plain.findings if f.check == "gpu.ecc.rising"]


def test_save_after_audit_keeps_counts(tmp_path: Path, monkeypatch) -> None:
    from rocmprov.audit.host import _save_ecc_counts

    monkeypatch.setenv("ROCMPROV_STATE_DIR", str(tmp_path / "state"))
    outs = {
        "amd-smi-static": ProbeOutput(id="amd-smi-static", command="x", rc=0, stdout=STATIC),
        "amd-smi-metric": ProbeOutput(id="amd-smi-metric", command="x", rc=0,
                                      stdout=_metric(ce=7)),
    }  # fmt: skip
    bundle = Bundle(host="h", outputs=outs)
    _save_ecc_counts(audit_bundle(bundle), bundle, {})
    assert load_ras_counts() == {SERIAL: {"ce": 7, "ue": 0, "de": 0}}


def test_a_count_one_run_did_not_report_is_not_a_rise_or_a_reset() -> None:
    """amd-smi before deferred counts existed prints no TOTAL_DEFERRED_COUNT line (the fixture
    with that line taken out): the deferred count is unknown, not 0. After an upgrade the same
    GPU's standing deferred count is not '+N deferred since the last run'; and a run that
    could not read a count does not make it look reset, nor store 0 as the next baseline."""
    no_de = _metric(ce=5).replace("TOTAL_DEFERRED_COUNT: 0\n", "")
    assert ecc_counts(_facts(no_de)) == {SERIAL: {"ce": 5, "ue": 0}}
    upgraded = _metric(ce=5).replace("TOTAL_DEFERRED_COUNT: 0", "TOTAL_DEFERRED_COUNT: 2")
    f = _trend(upgraded, ecc_counts(_facts(no_de)))
    assert f.severity is Severity.OK and "deferred" not in f.actual
    was = {SERIAL: {"ce": 5, "ue": 0, "de": 2}}
    f = _trend(no_de, was)
    assert f.severity is Severity.OK and "reset" not in f.summary


def test_state_keeps_a_count_that_was_not_reported(tmp_path: Path) -> None:
    save_ras_counts({SERIAL: {"ce": 5, "ue": 0}}, {SERIAL: {"ce": 1, "ue": 0, "de": 2}}, tmp_path)
    assert load_ras_counts(tmp_path) == {SERIAL: {"ce": 5, "ue": 0, "de": 2}}
