"""Match error text or a whole log against the troubleshooting table: known causes, ranked.

One pass: every pattern of the table has a literal anchor (see table.py); all anchors are
found in C in one pass (kb/literals.py: Hyperscan, or one trie-shaped regex where it does not
load). Only at an anchor hit does Python look at the line (or the few lines, for a multi-line
pattern) around it and run the full regexes of the entries that own that anchor (kb/scan.py;
linear in the text). Pure functions: no I/O here.

Ranking: root causes above symptoms above noise; within a kind, the entry's priority (specific
above generic); then the earliest evidence. Every matching entry is reported once, with its
first evidence lines, how often it matched, and its captures substituted into the fix.

Two more passes over the whole text: facts seen anywhere in it (gfx target, ROCm and kernel
versions, PCI address, GPU name: kb/context.py) fill every entry's placeholders and choose its
conditional fix; status codes of the ROCm libraries that no entry explained (kb/codes.py, from
the headers) are looked up: a code an entry owns (one of its patterns is the code's name alone)
brings that entry in whichever spelling it was printed (HIP's message, HSA's hex value), any
other is reported with its meaning, below every table entry.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any

from rocmprov.kb import codes as status_codes
from rocmprov.kb.context import FACTS, Fact, extract, hint
from rocmprov.kb.contexts import NVIDIA_MACHINE
from rocmprov.kb.harmlesscodes import harmless_codes, line_codes
from rocmprov.kb.lineends import normalise
from rocmprov.kb.locale import Translation, load_phrases, translate
from rocmprov.kb.ownwords import own_evidence
from rocmprov.kb.reflow import loosen
from rocmprov.kb.scan import (
    MAX_COUNT,
    MAX_EVIDENCE,
    Found,
    clip,
    compile_table,
    scan,
)
from rocmprov.kb.table import PLACEHOLDER_RE, Entry, Table, load_table

KIND_WEIGHT = {"root-cause": 400, "symptom": 200, "noise": 0}
# The text put back (escaped strings, quotes, wrapped lines, spacing: kb/reflow.py) is scanned
# again for a text up to this size (a pasted message), and for a larger one (a whole log) only
# when it showed no real cause: the extra pass is not paid on big logs that already explain.
LOOSEN_ALWAYS = 256 * 1024


@dataclass(frozen=True)
class Match:
    """One known cause found in the text. `lines` are 1-based line numbers of `evidence`."""

    id: str
    title: str
    category: str
    kind: str
    cause: str
    fix: str
    sources: tuple[str, ...]
    harmless: bool
    lines: tuple[int, ...]
    evidence: tuple[str, ...]
    captures: Mapping[str, str] = field(default_factory=dict, hash=False)
    score: int = 0
    count: int = 1
    condition: str = ""  # the condition whose fix was chosen, if any
    notes: tuple[str, ...] = ()  # the entry's conditions: what changes the answer
    # beside each evidence line: its English reading where the line was localised (kb/locale.py;
    # the evidence itself is the user's own line), else ""; empty when no line was
    english: tuple[str, ...] = ()
    # beside each evidence line: where it starts on its line and where the match ends there
    # (kb/found.py's Found.at; -1 not known, () none known): not part of the answer
    at: tuple[tuple[int, int], ...] = field(default=(), compare=False, repr=False)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "title": self.title,
            "category": self.category,
            "kind": self.kind,
            "harmless": self.harmless,
            "score": self.score,
            "cause": self.cause,
            "fix": self.fix,
            "condition": self.condition,
            "notes": list(self.notes),
            "captures": dict(self.captures),
            "count": self.count,
            "count_capped": self.count >= MAX_COUNT,
            "lines": list(self.lines),
            "evidence": list(self.evidence),
            "english": list(self.english),
            "sources": list(self.sources),
        }


def fill(template: str, values: Mapping[str, str]) -> str:
    """Put known values into `{name}` placeholders; an unknown one says how to get the value
    (e.g. {gfx} -> "your GPU's gfx target (`rocminfo | grep ...`)")."""
    return PLACEHOLDER_RE.sub(lambda m: values.get(m.group(1)) or hint(m.group(1)), template)


def _result(entry: Entry, acc: Found, context: Mapping[str, str]) -> Match:
    values: dict[str, str] = dict(entry.defaults)
    values.update(context)
    values.update({k: v for k, v in acc.captures.items() if v})
    chosen = next((c for c in entry.conditions if c.applies(values)), None)
    fix = chosen.fix if chosen and chosen.fix else entry.fix
    order = sorted(range(len(acc.lines)), key=lambda i: acc.lines[i])[:MAX_EVIDENCE]
    return Match(
        id=entry.id,
        title=entry.title,
        category=entry.category,
        kind=entry.kind,
        cause=fill(entry.cause, values),
        fix=fill(fix, values),
        sources=entry.sources,
        harmless=entry.harmless,
        lines=tuple(acc.lines[i] for i in order),
        evidence=tuple(acc.evidence[i] for i in order),
        captures=dict(acc.captures),
        score=KIND_WEIGHT[entry.kind] + entry.priority,
        count=acc.count,
        condition=chosen.when if chosen else "",
        notes=tuple(c.when for c in entry.conditions),
        at=tuple(acc.at[i] for i in order),
    )


def _needed(table: Table, found: dict[int, Found]) -> list[str]:
    """The facts the matched entries use (placeholders, conditions): only those are looked for
    in the whole text (each is one more pass over it). A value the entry's own match captured
    wins over the text's fact (`_result`), so it is not looked for again."""
    names: set[str] = set()
    for i, acc in found.items():
        entry = table.entries[i]
        wanted: set[str] = set()
        for text in (entry.cause, entry.fix, *(c.fix for c in entry.conditions)):
            wanted.update(PLACEHOLDER_RE.findall(text))
        wanted.update(key for c in entry.conditions for key, _ in c.match)
        names |= wanted - {key for key, value in acc.captures.items() if value}
    return [name for name in FACTS if name in names]


def _drop_superseded(table: Table, found: dict[int, Found]) -> dict[int, Found]:
    """A specific entry that explains the very lines a generic one matched removes the generic
    one (e.g. rocminfo's "ROCk module is NOT loaded" in a container that only lacks lsmod)."""
    index = {e.id: i for i, e in enumerate(table.entries)}
    drop: set[int] = set()
    for i, acc in found.items():
        for other_id in table.entries[i].supersedes:
            j = index[other_id]
            other = found.get(j)
            if other is not None and set(other.lines) <= set(acc.lines):
                drop.add(j)
    return {i: acc for i, acc in found.items() if i not in drop}


@dataclass(frozen=True)
class Analysis:
    """Everything `explain` says about a text: the known causes (best first), the facts seen in
    it, and names that look like a library's status code but are none (a family hint)."""

    matches: list[Match]
    facts: list[Fact]
    code_like: list[str]
    english: str | None = None  # the text with its localised messages in English (kb/locale.py,
    # line for line), None where it has none: explain's similarity tier reads it, no 2nd pass


def _code_result(hit: status_codes.Hit, codes: status_codes.Codes) -> Match:
    code, family = hit.code, codes.families[hit.code.family]
    number = f"{code.value}" + (f", 0x{code.value:x}" if family.hex else "")
    cause = f"{code.name} ({number}), a {family.type} of {family.title}: {code.meaning or '-'}"
    if code.message and code.message.rstrip(".") != code.meaning.rstrip("."):
        cause += f' (printed as "{code.message}")'
    if code.harmless:
        cause += " This reports a state, not a failure."
    kind = "noise" if code.harmless else "symptom"
    return Match(
        id=f"code.{family.id}.{code.name}",
        title=f"{family.type} {code.name}",
        category=family.category,
        kind=kind,
        cause=cause,
        fix="No action needed for this code by itself." if code.harmless else family.next_step,
        sources=family.sources,
        harmless=code.harmless,
        lines=(hit.line,),
        evidence=(clip(hit.evidence),),
        score=KIND_WEIGHT[kind],
    )


@lru_cache(maxsize=4)
def _code_owners(table: Table, index: status_codes.Codes) -> dict[str, int]:
    """Status codes an entry owns: one of its patterns is the code's name alone, so the entry
    already claims every line that names the code; the code's other spellings (HIP's message,
    HSA's hex value) are then its evidence too."""
    owners: dict[str, int] = {}
    for i, entry in enumerate(table.entries):
        for pattern in entry.patterns:
            name = pattern.regex.replace(r"\b", "")
            if name in index.by_name and not entry.harmless:
                owners.setdefault(name, i)
    return owners


# HIP's messages after a "CUDA error" prefix are a HIP code's only on an AMD machine: ggml and
# hipified programs print CUDA's prefix on ROCm builds, but beside an NVIDIA card, driver or
# nvidia-smi table the line is CUDA's own status (same words, NVIDIA's cause and fix).
_CUDA_PREFIX = re.compile(r"CUDA error(?::| \d)")


def _cuda_own(hits: list[status_codes.Hit], text: str) -> set[int]:
    """The hits that are a HIP message found after CUDA's prefix in a text that shows an NVIDIA
    machine (kb/contexts.py, the table's `{context: nvidia}`): their indexes. The text is
    searched once, and only when such a hit exists."""
    cuda = {i for i, h in enumerate(hits)
            if h.how == "message" and _CUDA_PREFIX.search(h.evidence) is not None}  # fmt: skip
    return cuda if cuda and NVIDIA_MACHINE.search(text) is not None else set()


# A hex value is a status code's only when the line says so (not "HSA_ENABLE_SDMA=0 mask 0x2a").
_STATUS_WORDS = re.compile(r"(?i)error|status|fail|returned|code|fault")


def _owned_by_entries(
    table: Table, index: status_codes.Codes, hits: list[status_codes.Hit], found: dict[int, Found]
) -> list[status_codes.Hit]:
    """Adds to `found` the owning entry of each code hit (see _code_owners); returns the hits no
    entry owns, which are reported as bare codes."""
    owners = _code_owners(table, index)
    rest: list[status_codes.Hit] = []
    for hit in hits:
        owner = owners.get(hit.code.name)
        if owner is None or (hit.how == "hex" and not _STATUS_WORDS.search(hit.evidence)):
            rest.append(hit)  # a hex value beside "HSA" without a status word: maybe a mask
        elif owner not in found:
            found[owner] = Found(hit.line, [hit.line], [clip(hit.evidence)], count=1,
                                 at=[(-1, -1)])  # fmt: skip
    return rest


def _add_loosened(text: str, compiled: Any, found: dict[int, Found]) -> set[int]:
    """Entries found only in the text put back (kb/reflow.py: escaped strings, quote marks,
    lines a terminal wrapped, a web page's spacing), with their line numbers in the original
    text. Returns the entries it added."""
    added: set[int] = set()
    for loose, starts in loosen(text):
        for i, acc in scan(loose, compiled, None).items():
            if i not in found:
                if starts:
                    # several lines put back from one original line name it once
                    first = dict(zip((starts[n - 1] for n in acc.lines), acc.evidence, strict=True))
                    acc.first_line = starts[acc.first_line - 1]
                    acc.lines, acc.evidence = list(first), list(first.values())
                # places on the lines put back (quote marks, spaces, entities gone even where no
                # line moved), not on the text's: not known there
                acc.at = [(-1, -1)] * len(acc.lines)
                found[i] = acc
                added.add(i)
    return added


def _own_words(result: Match, translation: Translation) -> Match:
    """`result` with the user's own lines as evidence where kb/locale.py put a line in English
    (that reading goes beside it, in `english`; kb/ownwords.py)."""
    if not any(n in translation.lines for n in result.lines):
        return result
    evidence, english = own_evidence(translation, result.lines, result.evidence, result.at)
    return replace(result, evidence=evidence, english=english)


def analyse(
    text: str, *, context: dict[str, Any] | None = None, table: Table | None = None,
    codes: bool = True,
) -> Analysis:  # fmt: skip
    """Known causes in `text`, best first, with the facts seen in it. `context` gives facts the
    text may lack (e.g. {"gfx": "gfx1031", "container": "yes"}); it wins over a fact seen
    elsewhere in the text, and a value captured on the matched line itself wins over both.
    `codes`: also report library status codes no entry explained. Never raises on any text.
    Line ends are made \\n once, first (kb/lineends.py: \\r\\n, \\n\\r and old Mac \\r as \\n, a
    trailing \\r dropped, a lone \\r inside a line kept): every pass reads that. Idempotent, so
    a caller that normalised already (explain) gets the same answer. Then apt's, dpkg's and the
    loader's messages in the user's language are put back in English (kb/locale.py, line for
    line); the evidence shown is the user's own lines, with their English reading beside. The
    first scan reads the text as the user wrote it and also looks for the localised messages'
    literals (English text pays no pass of its own); only a text that has one is put in English
    and scanned again, and what the first scan found stays (a pattern written for a localised
    wording, or a line only half put back, where a translation the po files lack follows a
    phrase they have)."""
    if not isinstance(text, str):
        raise TypeError("match() takes text (str); decode bytes first")
    text = normalise(text)
    table = table or load_table()
    index = status_codes.load_codes() if codes else None
    code_lines: dict[int, tuple[int, str]] = {}
    phrases = load_phrases()
    compiled = compile_table(table, index, phrases.words)
    localised: list[int] = []  # where a localised message's literal is, if anywhere
    found = scan(text, compiled, code_lines, localised) if text else {}
    translation = translate(text, phrases) if localised else Translation(text, {}, text)
    native: set[int] = set()  # found in the user's own words only (a localised pattern)
    if translation.lines:  # the scan again, on the English: the user's own words' finds stay
        own, code_lines, text = found, {}, translation.text
        found = scan(text, compiled, code_lines)
        for i, acc in own.items():
            if i not in found:
                found[i] = acc
                native.add(i)
    loosened: set[int] = set()
    if len(text) <= LOOSEN_ALWAYS or not any(not table.entries[i].harmless for i in found):
        loosened = _add_loosened(text, compiled, found)
    found = _drop_superseded(table, found)
    hits: list[status_codes.Hit] = []
    code_like: list[str] = []
    if index is not None and code_lines:
        # a harmless line put back from a longer one (a JSON log line) explains only the codes
        # it names itself, not every code on that original line, and each on its own line only
        # (kb/harmlesscodes.py; one a more specific harmless entry superseded is gone from
        # `found`)
        put_back = {i for i in loosened if table.entries[i].harmless and i in found}
        # a harmless match found in place explains only the codes inside its matched span (a
        # code printed after it on the same line, e.g. a flattened "... Error {e}", stays)
        spans = {i for i, acc in found.items() if table.entries[i].harmless
                 and i not in put_back and i not in native}  # fmt: skip
        explained = {n for i, acc in found.items() if i not in put_back | spans for n in acc.lines}
        # a code line no span explains is read on its own: a found harmless entry's single-line
        # pattern matches it as written or put back, with the code inside the match
        harmless = {i for i in found if table.entries[i].harmless}
        inside = harmless_codes(text, found, spans, code_lines, index)
        named = line_codes(text, code_lines, harmless, compiled, index, inside)
        hits, code_like = status_codes.find_lines(list(code_lines.values()), index, named)
        cuda_own = _cuda_own(hits, text)
        hits = [h for i, h in enumerate(hits) if h.line not in explained and i not in cuda_own]
        hits = _owned_by_entries(table, index, hits, found)
    facts = extract(text, _needed(table, found)) if found else []
    values = {f.name: f.value for f in facts}
    values.update({str(k): str(v) for k, v in (context or {}).items() if v is not None})
    results = [_result(table.entries[i], acc, values) for i, acc in found.items()]
    if translation.lines:
        results = [r if i in native else _own_words(r, translation)
                   for r, i in zip(results, found, strict=True)]  # fmt: skip
    if index is not None:
        codes_found = [_code_result(h, index) for h in hits]
        if translation.lines:
            codes_found = [_own_words(r, translation) for r in codes_found]
        results += codes_found
    results.sort(key=lambda r: (-r.score, r.lines[0] if r.lines else 0, r.id))
    english = translation.text if translation.lines else None
    return Analysis(matches=results, facts=facts, code_like=code_like, english=english)


def match(
    text: str, *, context: dict[str, Any] | None = None, table: Table | None = None,
    codes: bool = True,
) -> list[Match]:  # fmt: skip
    """Known causes in `text`, best first (see `analyse`). Never raises on any text."""
    return analyse(text, context=context, table=table, codes=codes).matches
