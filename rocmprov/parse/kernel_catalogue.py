"""The kernel-log error catalogue (rocmprov/data/kernel_log.yaml): rules from public rule sets
(amd/node-scraper, ROCm/cvs), each with its source, license and a real line. Pure: the packaged
file is read and compiled once.

A rule's regex is its kernel prefix (PREFIXES) followed by its message, anchored at the start of
the line that parse/dmesg.py has stripped of timestamps, so only a line the kernel's amdgpu code
printed can match. Messages hold bounded repeats only (no nested quantifiers): linear time.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from rocmprov.parse.datafile import load_yaml

_BDF = r"(?:[0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]"
# what amdgpu's own printk wrappers put first (dev_*() with and without the driver's "amdgpu: "
# tag, pr_*() with "amdgpu: ", DRM_ERROR with the function and module)
PREFIXES: dict[str, str] = {
    "amdgpu": rf"amdgpu(?: {_BDF})?: (?:amdgpu: )?",
    "drm_error": rf"(?:amdgpu {_BDF}: )?\[drm:[\w.]{{1,80}} \[amdgpu\]\] \*ERROR\* ",
}
SEVERITIES = ("CRITICAL", "WARNING")


@dataclass(frozen=True)
class CatalogueRule:
    id: str  # the finding it yields (dmesg.*)
    tag: str  # the parser's event tag
    severity: str
    prefix: str
    message: str
    keyword: str
    source: str  # a key of Catalogue.sources
    upstream: str  # the rule's name in the source
    line: str  # a real kernel line it matches
    url: str  # where that line was posted
    afid: int | None = None

    @property
    def pattern(self) -> re.Pattern[str]:
        return _compiled(self.prefix, self.message)


@dataclass(frozen=True)
class CatalogueFinding:
    id: str
    severity: str
    summary: str
    fix: str
    ref: str


@dataclass(frozen=True)
class Catalogue:
    sources: dict[str, dict[str, str]]
    findings: tuple[CatalogueFinding, ...]
    rules: tuple[CatalogueRule, ...]
    afids: tuple[dict[str, Any], ...] = ()


@cache
def _compiled(prefix: str, message: str) -> re.Pattern[str]:
    return re.compile(f"^{PREFIXES[prefix]}(?:{message})", re.IGNORECASE)


@cache
def catalogue() -> Catalogue:
    text = resources.files("rocmprov.data").joinpath("kernel_log.yaml").read_text("utf-8")
    return parse_catalogue(load_yaml(text))


def parse_catalogue(data: dict[str, Any]) -> Catalogue:
    rules = tuple(
        CatalogueRule(**{k: r[k] for k in CatalogueRule.__dataclass_fields__ if k in r})
        for r in data.get("rules") or ()
    )
    for rule in rules:
        if rule.prefix not in PREFIXES:
            raise ValueError(f"kernel_log.yaml: {rule.tag}: unknown prefix {rule.prefix!r}")
        if rule.severity not in SEVERITIES:
            raise ValueError(f"kernel_log.yaml: {rule.tag}: severity {rule.severity!r}")
        rule.pattern  # noqa: B018 (compile now: a bad regex fails at load, not at first use)
    findings = tuple(
        CatalogueFinding(id=k, **{f: v[f] for f in ("severity", "summary", "fix", "ref")})
        for k, v in (data.get("findings") or {}).items()
    )
    return Catalogue(
        sources=dict(data.get("sources") or {}),
        findings=findings,
        rules=rules,
        afids=tuple(data.get("afids") or ()),
    )
