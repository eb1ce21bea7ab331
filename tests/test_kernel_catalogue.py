"""The kernel-log catalogue (rocmprov/data/kernel_log.yaml): every rule's real line (posted
publicly, its URL in the catalogue) yields the rule's finding; the same words not printed by the
kernel (a program's output, another facility's journal line, a /dev/kmsg record a process wrote)
yield nothing; every rule names its source, license and line."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from rocmprov.audit.host import audit_bundle
from rocmprov.checks.dmesg import CAUSES, check_dmesg
from rocmprov.checks.policy import Policy
from rocmprov.collect.bundle import Bundle, ProbeOutput
from rocmprov.facts.host import HostFacts
from rocmprov.parse import dmesg as d
from rocmprov.parse.kernel_catalogue import PREFIXES, CatalogueRule, catalogue, parse_catalogue

CAT = catalogue()
RULES = CAT.rules
DOCS = Path(__file__).resolve().parents[1] / "docs" / "checks.md"
PERMISSIVE = ("MIT", "Apache-2.0", "BSD-2-Clause", "BSD-3-Clause")
_PREFIX = {name: re.compile(f"^{p}") for name, p in PREFIXES.items()}


def _ids(rule: CatalogueRule) -> str:
    return rule.tag


def _body(rule: CatalogueRule) -> str:
    """The line as the kernel printed it, without the log's timestamp/host prefix."""
    return d.strip_prefix(rule.line).strip()


def _message(rule: CatalogueRule) -> str:
    """The words after the kernel's own prefix: what a program would have to print."""
    return _PREFIX[rule.prefix].sub("", _body(rule), count=1)


def _findings(text: str) -> dict[str, str]:
    facts = HostFacts(host="h", dmesg=text)
    return {f.check: f.severity.name for f in check_dmesg(facts, Policy())}


@pytest.mark.parametrize("rule", RULES, ids=_ids)
def test_real_line_yields_its_finding(rule: CatalogueRule) -> None:
    log = d.parse_dmesg(rule.line)
    assert rule.tag in log.tags
    assert _findings(rule.line).get(rule.id) == rule.severity
    # a kmsg record of the kernel's own facility (dmesg -r: <3> is kern.err) still counts
    assert rule.tag in d.parse_dmesg(f"<3>{_body(rule)}").tags


@pytest.mark.parametrize("rule", RULES, ids=_ids)
def test_same_words_not_from_the_kernel_yield_nothing(rule: CatalogueRule) -> None:
    msg = _message(rule)
    assert msg and msg != _body(rule)
    not_kernel = [
        msg,  # a program printing the message itself
        f"python3: {msg}",
        f"[   12.345678] {msg}",
        f"Oct 07 15:47:47 node1 myjob[4242]: {_body(rule)}",  # another facility's journal line
        f"2024-05-26T18:09:55+0000 node1 myjob[4242]: {_body(rule)}",
        f"<14>{_body(rule)}",  # /dev/kmsg written by a process (facility 1, user)
        f"<30>{_body(rule)}",  # facility 3, daemon
        f"x{_body(rule)}",  # the prefix not at the start of the line
    ]
    for text in not_kernel:
        assert rule.tag not in d.parse_dmesg(text).tags, text
        assert rule.id not in _findings(text), text


def test_a_detail_is_the_first_group() -> None:
    by_tag = {r.tag: r for r in RULES}
    log = d.parse_dmesg(by_tag["suspend_failed"].line)
    assert [e.detail for e in log.with_tag("suspend_failed")] == ["smu"]
    log = d.parse_dmesg(by_tag["ras_correctable"].line)
    assert [(e.bdf, e.detail) for e in log.with_tag("ras_correctable")] == [
        ("0000:9d:00.0", "xgmi_wafl")
    ]
    # the uncorrectable line is not a correctable one
    unc = by_tag["ras_correctable"].line.replace(" correctable", " uncorrectable")
    assert "ras_correctable" not in d.parse_dmesg(unc).tags


def test_audit_of_a_bundle_reports_the_rule() -> None:
    text = "\n".join(r.line for r in RULES)
    outs = {"dmesg": ProbeOutput("dmesg", "t", 0, text)}
    report = audit_bundle(Bundle("h", outs), Policy())
    checks = {f.check for f in report.findings}
    assert {r.id for r in RULES} <= checks


def test_hostile_long_lines_end_and_match_nothing() -> None:
    """Bounded repeats only: lines built to make a backtracking regex explode parse (and fail)
    like any other line."""
    hostile = [
        "amdgpu 0000:03:00.0: amdgpu: " + "{1}" * 600 + "socket: 6, die: 1, " * 80,
        "amdgpu: " + "9" * 1900 + " correctable hardware errors detected in total in",
        "[drm:" + "a" * 1900 + " [amdgpu]] *ERROR* suspend of IP block <smu> failed",
        "amdgpu 0000:03:00.0: amdgpu: suspend of IP block <" + "w" * 1900 + ">",
        "[drm:f [amdgpu]] *ERROR* " * 80 + "Failed to terminate",
    ]
    for line in hostile:
        assert d.parse_dmesg(line).events == ()
        for rule in RULES:
            assert rule.pattern.match(line * 20) is None


def test_every_rule_has_source_license_and_a_real_line_with_its_url() -> None:
    assert RULES
    assert len({r.tag for r in RULES}) == len(RULES)
    own_tags = [tag for tag, _ in d._RULES]
    assert len(own_tags) == len(set(own_tags))  # no catalogue tag shadows a parser tag
    findings = {f.id: f for f in CAT.findings}
    cause_sev = {c[0]: c[2].name for c in CAUSES}
    for rule in RULES:
        src = CAT.sources[rule.source]
        assert src["license"] in PERMISSIVE
        assert src["repo"].startswith("https://github.com/")
        assert src["path"] and re.fullmatch(r"[0-9a-f]{40}", src["commit"])
        assert rule.upstream
        assert rule.url.startswith("https://github.com/") and "/issues/" in rule.url
        assert rule.line and rule.keyword == rule.keyword.lower()
        assert rule.keyword in rule.line.lower()
        assert rule.id.startswith("dmesg.") and rule.id in cause_sev
        assert cause_sev[rule.id] == rule.severity
        if rule.id in findings:
            assert findings[rule.id].severity == rule.severity
        assert rule.afid is None or isinstance(rule.afid, int)
        assert rule.pattern.pattern.startswith("^")
    for afid in CAT.afids:
        assert isinstance(afid["afid"], int) and afid["name"] and afid["source"] in CAT.sources


def test_docs_list_every_rule() -> None:
    docs = DOCS.read_text("utf-8")
    for rule in RULES:
        assert rule.tag in docs and rule.url in docs and rule.id in docs


def test_a_bad_catalogue_is_refused_at_load() -> None:
    good = {
        "id": "dmesg.x",
        "tag": "x",
        "severity": "WARNING",
        "prefix": "amdgpu",
        "message": "x",
        "keyword": "x",
        "source": "s",
        "upstream": "u",
        "line": "amdgpu: x",
        "url": "https://github.com/o/r/issues/1",
    }
    assert parse_catalogue({"rules": [good]}).rules[0].tag == "x"
    for bad in ({"prefix": "anything"}, {"severity": "INFO"}, {"message": "(unclosed"}):
        with pytest.raises((ValueError, re.error)):
            parse_catalogue({"rules": [{**good, **bad}]})


def test_a_busy_node_is_not_a_bad_node() -> None:
    """KFD's runlist oversubscription (a real line: https://github.com/ROCm/amdgpu/issues/150)
    means many processes share a GPU: slower, not faulty. No finding above OK comes of it."""
    line = (
        "[  110.313943] amdgpu: Runlist is getting oversubscribed. "
        "Expect reduced ROCm performance."
    )
    found = _findings(line)
    assert found and set(found.values()) <= {"OK", "SKIPPED"}, found
