"""Kernel log (dmesg, `journalctl -k`, /var/log/syslog lines) -> known amdgpu/PCI events. Pure.

Each event has a short tag (the same tags as tests/fixtures/README.md), the PCI address it names
(when the line names one) and the line itself. Prefixes are stripped first: syslog/journalctl
("Oct  7 12:58:23 host kernel: "), ISO timestamps, and dmesg's "[  12.345678] ".

Only lines that the kernel's GPU, DRM, KFD and PCI code print can carry an event (is_driver_line):
the line must start with that code's own prefix ("amdgpu 0000:03:00.0: ", "amdgpu: ", "[drm] ",
"[drm:func [amdgpu]] ", "kfd kfd: ", "pci 0000:..: ", "pcieport 0000:..: ", "[Hardware Error]: "),
and never has the shape of the kernel's report of a user program's fault ("comm[pid]: segfault
... in FILE", "traps: comm[pid] trap ... in FILE"), whose program and file names any local user
chooses. A /dev/kmsg record ("<N>" prefix, `dmesg -r`) from a facility other than the kernel's
(N >= 8: written by a process) is not a kernel line either.

Besides its own rules the parser runs the kernel-log catalogue's (rocmprov/data/kernel_log.yaml,
parse/kernel_catalogue.py: node-scraper's and cvs's rules, each anchored to amdgpu's prefix).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from rocmprov.parse.kernel_catalogue import catalogue

_BDF = r"(?:[0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]"
_PREFIXES = (  # the first two both hold "kernel:" (see _log_format)
    re.compile(r"^[A-Z][a-z]{2}\s+\d{1,2}\s+\d\d:\d\d:\d\d\s+\S+\s+kernel:\s?"),  # syslog/journal
    re.compile(r"^\d{4}-\d\d-\d\dT\S+\s+\S+\s+kernel:\s?"),  # journalctl -o short-iso
    re.compile(r"^<\d+>"),  # dmesg -r / kmsg priority
    # dmesg's seconds since boot "[  12.345678] ", or its -T clock "[Tue Sep  9 02:30:28 2025] "
    re.compile(r"^\[(?:\s*\d+\.\d+|[A-Z][a-z]{2} [A-Z][a-z]{2}\s+\d{1,2} [\d:]{8} \d{4})\]\s?"),
)
# the code that prints the lines the rules know: amdgpu's dev_*()/pr_*(), DRM, KFD, the PCI core
_SOURCE = re.compile(
    r"^(?:amdgpu(?:\s+" + _BDF + r")?:\s"
    r"|\[drm\]\s|\[drm:[\w.]{1,80}(?: \[\w{1,20}\])?\]\s"
    r"|kfd kfd:\s"
    r"|(?:pci|pcieport)\s+" + _BDF + r":\s"
    r"|\[Hardware Error\]:\s)"
)
# the kernel's report of a user program's fault starts with the program's name (at most 15
# characters, chosen by the user) and its pid: "comm[1234]: segfault at ..."
_USER_FAULT = re.compile(r"^.{0,15}?\[\d+\]:?\s")
_RAW_PRIORITY = re.compile(r"^<(\d{1,4})>")
_MAX_LINE = 2048  # kernel log lines are under 1024 characters; longer is not a kernel line
_HUB = re.compile(r"\[((?:gfx|mm|vm)hub\d{0,2})\] ((?:no-)?retry|VMC)?")
_DEVICE = re.compile(rf"^(?P<drv>amdgpu|pci|kfd kfd)\s+(?P<bdf>{_BDF})?:?\s")


@dataclass(frozen=True)
class DmesgEvent:
    tag: str
    bdf: str = ""  # normalized 0000:bb:dd.f, "" when the line names no device
    line: str = ""
    detail: str = ""  # e.g. the ring name, the probe error code


@dataclass(frozen=True)
class Dmesg:
    events: tuple[DmesgEvent, ...] = ()
    gpu_bdfs: tuple[str, ...] = ()  # devices amdgpu speaks for, in order of first mention
    log_format: str = ""  # dmesg | syslog | journalctl | ""

    @property
    def tags(self) -> tuple[str, ...]:
        """Distinct tags in order of first appearance."""
        return tuple(dict.fromkeys(e.tag for e in self.events))

    def with_tag(self, tag: str) -> tuple[DmesgEvent, ...]:
        return tuple(e for e in self.events if e.tag == tag)


# (tag, pattern); a line can carry several tags. Order does not matter.
_RULES: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (tag, re.compile(pattern, re.IGNORECASE))
    for tag, pattern in (
        ("probe_failed", rf"probe of ({_BDF}) failed with error (-\d+)"),
        ("fatal_gpu_init", r"Fatal error during GPU init"),
        ("atombios_stuck", r"atombios stuck"),
        ("gpu_post_error", r"gpu post error"),
        # amdgpu_device.c: "*ERROR* hw_init of IP block <psp> failed -22" (node-scraper's
        # "IP hardware init error" rule, MIT; real line: tests/fixtures/dmesg, ROCm/ROCm#384)
        ("ip_init_failed", r"\*ERROR\* (?:hw|sw)_init of IP block <(\w{1,32})> failed"),
        ("not_supported_in_kfd", r"(\w{1,32})\s{1,8}not supported in kfd"),
        (
            "bar_resize_failed",
            r"Not enough PCI address space for a large BAR"
            r"|BAR \d+ resize failed|failed to resize BAR",
        ),
        ("bar_assign_failed", r"can't assign; no space|BAR \d+: no space for|failed to assign"),
        ("ring_timeout", r"ring (\S+) timeout"),
        ("ring_reset_failed", r"Ring (\S+) reset failed"),
        ("ring_test_failed", r"ring (\S+) test failed"),
        ("fence_timeout", r"Waiting for fences timed out|fence wait.{0,200}timed out"),
        ("gpu_reset", r"GPU reset begin"),
        ("mode1_reset", r"\bMODE1 reset\b"),
        ("mode2_reset", r"\bMODE2 reset\b"),
        ("mes_failed", r"MES failed to respon"),
        ("vram_lost", r"VRAM is lost"),
        ("ras_uncorrectable", r"uncorrectable hardware error|\buncorrectable error"),
        ("ras_correctable_xgmi_wafl", r"correctable hardware errors? detected.{0,200}xgmi_wafl"),
        ("hardware_error_aca", r"\[Hardware Error\]"),
        ("cp_unrecoverable_preemption_failed", r"unrecoverable state due to an unsuccessful"),
        ("failed_to_restore_process_queues", r"Failed to restore process queues"),
        # gmc_v9_0.c/gmc_v10_0.c: "[gfxhub] page fault", "[gfxhub0] no-retry page fault",
        # "[mmhub0] retry page fault" (the hub's name carries an instance number on gfx9 parts
        # from Aldebaran on, MI300 included); older: "GPU fault detected"
        (
            "page_fault",
            r"\[(?:gfx|mm|vm)hub\d{0,2}\] (?:(?:no-)?retry |VMC )?page fault|GPU fault detected"
            r"|VM_L2_PROTECTION_FAULT_STATUS",
        ),
        ("pcie_bandwidth_limited", r"available PCIe bandwidth, limited by"),
    )
)


def is_driver_line(line: str) -> bool:
    """True for a (prefix-stripped) line that the kernel's GPU/DRM/KFD/PCI code printed."""
    return bool(_SOURCE.match(line)) and not _USER_FAULT.match(line)


def from_kernel(raw: str) -> bool:
    """False for a /dev/kmsg record (`<N>` prefix) that a process wrote (facility N >> 3 not
    0, the kernel's); True for every other line (no priority to read)."""
    m = _RAW_PRIORITY.match(raw)
    return not m or int(m.group(1)) >> 3 == 0


def strip_prefix(line: str) -> str:
    for pattern in _PREFIXES:
        line = pattern.sub("", line, count=1)
    return line


# Literal words (lower case), one of which a line must hold before its rule's regex runs:
# most kernel logs hold none, so the regexes run on a handful of lines, not every line.
_KEYWORDS: dict[str, tuple[str, ...]] = {
    "probe_failed": ("failed with error",),
    "fatal_gpu_init": ("fatal error during gpu init",),
    "atombios_stuck": ("atombios stuck",),
    "gpu_post_error": ("gpu post error",),
    "ip_init_failed": ("of ip block",),
    "not_supported_in_kfd": ("not supported in kfd",),
    "bar_resize_failed": ("large bar", "resize failed", "failed to resize bar"),
    "bar_assign_failed": ("no space", "failed to assign"),
    "ring_timeout": ("timeout",),
    "ring_reset_failed": ("reset failed",),
    "ring_test_failed": ("test failed",),
    "fence_timeout": ("timed out",),
    "gpu_reset": ("gpu reset begin",),
    "mode1_reset": ("mode1 reset",),
    "mode2_reset": ("mode2 reset",),
    "mes_failed": ("mes failed to respon",),
    "vram_lost": ("vram is lost",),
    "ras_uncorrectable": ("uncorrectable",),
    "ras_correctable_xgmi_wafl": ("xgmi_wafl",),
    "hardware_error_aca": ("[hardware error]",),
    "cp_unrecoverable_preemption_failed": ("unrecoverable state",),
    "failed_to_restore_process_queues": ("failed to restore process queues",),
    "page_fault": ("page fault", "gpu fault detected", "vm_l2_protection_fault_status"),
    "pcie_bandwidth_limited": ("available pcie bandwidth",),
}

# the catalogue's rules (rocmprov/data/kernel_log.yaml: node-scraper, cvs), anchored to the
# kernel's amdgpu prefixes; their first group, when they have one, is the event's detail
_CATALOGUE = catalogue().rules
_RULES += tuple((rule.tag, rule.pattern) for rule in _CATALOGUE)
_KEYWORDS.update({rule.tag: (rule.keyword,) for rule in _CATALOGUE})
_CATALOGUE_TAGS = frozenset(rule.tag for rule in _CATALOGUE)


def parse_dmesg(text: str) -> Dmesg:
    lowered = text.lower()
    active = [
        (tag, pattern, _KEYWORDS[tag])
        for tag, pattern in _RULES
        if any(k in lowered for k in _KEYWORDS[tag])
    ]
    events: list[DmesgEvent] = []
    bdfs: dict[str, None] = {}
    joined = "\n".join(text.splitlines())
    fmt = _log_format(joined) if text.strip() else ""
    # a line matters when amdgpu speaks (its devices) or it holds an active rule's keyword
    words = ["amdgpu"] + [k for _, _, kws in active for k in kws]
    for raw in _lines_with(words, joined, lowered):
        if not from_kernel(raw):
            continue
        line = strip_prefix(raw[:_MAX_LINE]).strip()
        if not line or not is_driver_line(line):
            continue
        dev = _DEVICE.match(line)
        bdf = _norm(dev.group("bdf")) if dev and dev.group("bdf") else ""
        if dev and dev.group("drv") == "amdgpu" and bdf:
            bdfs.setdefault(bdf, None)
        low = line.lower() if active else ""
        for tag, pattern, words in active:
            if not any(k in low for k in words):
                continue
            m = pattern.search(line)
            if not m:
                continue
            detail = ""
            where = bdf
            if tag == "probe_failed":
                where, code = _norm(m.group(1)), m.group(2)
                tag = f"probe_failed_{code}"
                detail = code
                if "amdgpu" in line:
                    bdfs.setdefault(where, None)
            elif tag in (
                "ring_timeout",
                "ring_reset_failed",
                "ring_test_failed",
                "not_supported_in_kfd",
                "ip_init_failed",
            ):
                detail = m.group(1).rstrip(",")
            elif tag == "page_fault" and (hub := _HUB.search(line)):
                detail = f"{hub.group(1)} {hub.group(2) or ''}".strip()
            elif tag in _CATALOGUE_TAGS and m.lastindex:
                detail = m.group(1)
            elif tag == "pcie_bandwidth_limited" and where:
                bdfs.setdefault(where, None)
            events.append(DmesgEvent(tag, where, line[:500], detail))
    return Dmesg(tuple(events), tuple(bdfs), fmt)


def _lines_with(words: list[str], joined: str, lowered: str) -> Iterator[str]:
    """The lines of `joined` whose first _MAX_LINE characters, lower-cased, hold one of the
    (lower-case) `words`, in order. One scan of the whole lower-cased text (most kernel log
    lines hold no word), not a search per line; per line only where lower-casing changed the
    text's length (rare letters), as positions then no longer line up."""
    needle = re.compile("|".join(re.escape(w) for w in words))
    low = "\n".join(lowered.splitlines())
    if len(low) != len(joined):
        yield from (raw for raw in joined.split("\n") if needle.search(raw[:_MAX_LINE].lower()))
        return
    pos = 0
    while pos <= len(low) and (m := needle.search(low, pos)):
        start = low.rfind("\n", 0, m.start()) + 1
        end = low.find("\n", m.end())
        end = len(low) if end < 0 else end
        if needle.search(low, start, min(end, start + _MAX_LINE)):
            yield joined[start:end]
        pos = end + 1


def _log_format(joined: str) -> str:
    """syslog or journalctl, from the first line with such a prefix; else dmesg. Both
    prefixes hold "kernel:", so only lines that do are tried (a fast substring scan)."""
    at = joined.find("kernel:")
    while at >= 0:
        start = joined.rfind("\n", 0, at) + 1
        end = joined.find("\n", at)
        end = len(joined) if end < 0 else end
        line = joined[start:end]
        if m := _PREFIXES[0].match(line) or _PREFIXES[1].match(line):
            return "syslog" if _PREFIXES[3].match(line[m.end() :]) else "journalctl"
        at = joined.find("kernel:", end)
    return "dmesg"


def _norm(bdf: str) -> str:
    bdf = bdf.lower()
    return bdf if bdf.count(":") == 2 else f"0000:{bdf}"
