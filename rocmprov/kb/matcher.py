"""Match error text or a whole log against the troubleshooting table: known causes, ranked.

One pass: every pattern of the table has a literal anchor (see table.py); all anchors are
compiled once into one trie-shaped regex, so the regex engine skips, in C, every position whose
character cannot start an anchor. Only at an anchor hit does Python look at the line (or the
few lines, for a multi-line pattern) around it and run the full regexes of the entries that own
that anchor. Pure functions: no I/O here.

Ranking: root causes above symptoms above noise; within a kind, the entry's priority (specific
above generic); then the earliest evidence. Every matching entry is reported once, with its
first evidence lines, how often it matched, and its captures substituted into the fix.

Two more passes over the whole text: facts seen anywhere in it (gfx target, ROCm and kernel
versions, PCI address, GPU name: kb/context.py) fill every entry's placeholders and choose its
conditional fix; status codes of the ROCm libraries that no entry explained (kb/codes.py, from
the headers) are reported with their meaning, below every table entry.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from rocmprov.kb import codes as status_codes
from rocmprov.kb.anchors import choose_anchors
from rocmprov.kb.context import FACTS, Fact, extract, hint
from rocmprov.kb.table import PLACEHOLDER_RE, Entry, Table, load_table

KIND_WEIGHT = {"root-cause": 400, "symptom": 200, "noise": 0}
MAX_EVIDENCE = 10  # evidence lines kept per entry
MAX_COUNT = 1000  # occurrences counted per entry; past that the entry's anchors leave the scan
MAX_LINE = 4000  # characters of a line kept as evidence and searched around a hit
_SPAN = 8192  # how far around a hit a single-line regex looks on an enormous line
CODE_LINE = -1  # a scan target that marks a line for the status-code look-up
_NEVER = re.compile(r"(?!)")


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
            "sources": list(self.sources),
        }


@dataclass(frozen=True)
class _Target:
    entry: int
    pattern: int
    regex: re.Pattern[str]
    lines: int


@dataclass(frozen=True, eq=False)  # hashed by identity (it is cached, and keys a cache)
class _Compiled:
    scan: re.Pattern[str]
    targets: dict[str, tuple[_Target, ...]]  # anchor -> patterns it triggers (incl. prefixes)
    anchors: tuple[str, ...] = ()


def _trie_regex(words: list[str]) -> str:
    """One regex that matches any of `words`, shaped as a trie so that at each position the
    engine tries one branch per distinct next character (not one per word). Longest first."""
    root: dict[str, Any] = {}
    for word in words:
        node = root
        for ch in word:
            node = node.setdefault(ch, {})
        node[""] = {}

    def emit(node: dict[str, Any]) -> str:
        alts = [re.escape(ch) + emit(child) for ch, child in sorted(node.items()) if ch]
        if not alts:
            return ""
        body = alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"
        if "" in node:
            return "(?:" + "|".join(alts) + ")?"
        return body

    return emit(root)


@lru_cache(maxsize=8)
def _compile_table(table: Table, codes: status_codes.Codes | None = None) -> _Compiled:
    own: dict[str, list[_Target]] = {}
    for ei, entry in enumerate(table.entries):
        for pi, pattern in enumerate(entry.patterns):
            target = _Target(ei, pi, pattern.compiled, pattern.lines)
            own.setdefault(pattern.anchor, []).append(target)
    if codes is not None:  # lines worth a look for status codes: their literals join the scan
        taken = {a[0] for a in own}
        for pi, anchor in enumerate(choose_anchors([list(r) for r in codes.anchor_runs], taken)):
            if anchor:
                own.setdefault(anchor, []).append(_Target(CODE_LINE, pi, _NEVER, 1))
    anchors = sorted(own)
    # the trie returns the longest anchor at a position: a hit also fires its prefixes
    targets = {a: tuple(t for b in anchors if a.startswith(b) for t in own[b]) for a in anchors}
    return _Compiled(scan=re.compile(_trie_regex(anchors)), targets=targets, anchors=tuple(anchors))


def _without(compiled: _Compiled, full: set[int]) -> re.Pattern[str] | None:
    return _narrower(compiled, frozenset(full))


@lru_cache(maxsize=32)
def _narrower(compiled: _Compiled, full: frozenset[int]) -> re.Pattern[str] | None:
    """The scan regex without the anchors whose every target belongs to a saturated entry (a
    harmless line repeated on every other line of a log costs nothing more), or None when no
    anchor is left."""
    live = [a for a in compiled.anchors if any(t.entry not in full for t in compiled.targets[a])]
    return re.compile(_trie_regex(live)) if live else None


@dataclass
class _Found:
    first_line: int
    lines: list[int] = field(default_factory=list)
    evidence: list[str] = field(default_factory=list)
    captures: dict[str, str] = field(default_factory=dict)
    count: int = 0
    seen_spans: set[tuple[int, int]] = field(default_factory=set)


def _line_bounds(text: str, pos: int) -> tuple[int, int]:
    start = text.rfind("\n", 0, pos) + 1
    end = text.find("\n", pos)
    return start, len(text) if end < 0 else end


def _window(text: str, start: int, end: int, extra: int) -> tuple[int, int]:
    """Extend a line's bounds by `extra` lines before and after."""
    for _ in range(extra):
        if start == 0:
            break
        start = text.rfind("\n", 0, start - 1) + 1
    for _ in range(extra):
        if end >= len(text):
            break
        nxt = text.find("\n", end + 1)
        end = len(text) if nxt < 0 else nxt
    return start, end


def _clip(line: str) -> str:
    line = line.rstrip("\r")
    return line if len(line) <= MAX_LINE else line[:MAX_LINE] + "..."


def _scan(
    text: str, compiled: _Compiled, code_lines: dict[int, tuple[int, str]] | None = None
) -> dict[int, _Found]:
    """Entries found in `text`; lines with a status code's literal go into `code_lines`
    (line start -> (line number, line))."""
    found: dict[int, _Found] = {}
    searched: set[tuple[int, int, int]] = set()  # (entry, pattern, line start): done once
    full: set[int] = set()  # entries counted MAX_COUNT times: not searched any more
    search = compiled.scan.search
    line_no, counted_to = 1, 0
    hit = search(text)
    while hit is not None:
        pos = hit.start()
        line_no += text.count("\n", counted_to, pos)
        counted_to = pos
        start, end = _line_bounds(text, pos)
        targets = compiled.targets[hit.group()]
        for target in targets:
            if target.entry == CODE_LINE:
                if code_lines is not None and start not in code_lines:
                    code_lines[start] = (line_no, text[start:end][:MAX_LINE])
                continue
            if target.entry in full:
                continue
            key = (target.entry, target.pattern, start)
            if key in searched:
                continue
            searched.add(key)
            if target.lines == 1:
                lo, hi = start, end
                if hi - lo > 2 * _SPAN:  # an enormous line (binary junk): look near the hit
                    lo, hi = max(lo, pos - _SPAN), min(hi, pos + _SPAN)
                m = target.regex.search(text, lo, hi)
                if m is None:
                    continue
                _record(found, target, m, line_no, [text[start:end]])
            else:
                lo, hi = _window(text, start, end, target.lines - 1)
                for m in target.regex.finditer(text, lo, hi):
                    if m.start() > pos:
                        break
                    if pos < m.end():  # the match covers this anchor hit
                        first = line_no - text.count("\n", m.start(), pos)
                        a = text.rfind("\n", 0, m.start()) + 1
                        b = _line_bounds(text, max(m.end() - 1, m.start()))[1]
                        _record(found, target, m, first, text[a:b].split("\n"))
                        break
            if found.get(target.entry) is not None and found[target.entry].count >= MAX_COUNT:
                full.add(target.entry)
                if all(t.entry in full for t in targets):
                    narrower = _without(compiled, full)
                    if narrower is None:
                        return found
                    search = narrower.search
        hit = search(text, pos + 1)
    return found


def _record(
    found: dict[int, _Found], target: _Target, m: re.Match[str], first: int, lines: list[str]
) -> None:
    acc = found.get(target.entry)
    if acc is None:
        acc = found[target.entry] = _Found(first_line=first)
    span = (m.start(), m.end())
    if span in acc.seen_spans:
        return
    acc.seen_spans.add(span)
    acc.count += 1
    for key, value in m.groupdict().items():
        if value is not None and key not in acc.captures:
            acc.captures[key] = value
    for offset, line in enumerate(lines):
        number = first + offset
        if len(acc.lines) >= MAX_EVIDENCE:
            break
        if number not in acc.lines:
            acc.lines.append(number)
            acc.evidence.append(_clip(line))


def fill(template: str, values: Mapping[str, str]) -> str:
    """Put known values into `{name}` placeholders; an unknown one says how to get the value
    (e.g. {gfx} -> "your GPU's gfx target (`rocminfo | grep ...`)")."""
    return PLACEHOLDER_RE.sub(lambda m: values.get(m.group(1)) or hint(m.group(1)), template)


def _result(entry: Entry, acc: _Found, context: Mapping[str, str]) -> Match:
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
    )


def _needed(table: Table, found: dict[int, _Found]) -> list[str]:
    """The facts the matched entries use (placeholders, conditions): only those are looked for
    in the whole text (each is one more pass over it)."""
    names: set[str] = set()
    for i in found:
        entry = table.entries[i]
        for text in (entry.cause, entry.fix, *(c.fix for c in entry.conditions)):
            names.update(PLACEHOLDER_RE.findall(text))
        names.update(key for c in entry.conditions for key, _ in c.match)
    return [name for name in FACTS if name in names]


def _drop_superseded(table: Table, found: dict[int, _Found]) -> dict[int, _Found]:
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
        evidence=(_clip(hit.evidence),),
        score=KIND_WEIGHT[kind],
    )


def analyse(
    text: str, *, context: dict[str, Any] | None = None, table: Table | None = None,
    codes: bool = True,
) -> Analysis:  # fmt: skip
    """Known causes in `text`, best first, with the facts seen in it. `context` gives facts the
    text may lack (e.g. {"gfx": "gfx1031", "container": "yes"}); it wins over a fact seen
    elsewhere in the text, and a value captured on the matched line itself wins over both.
    `codes`: also report library status codes no entry explained. Never raises on any text."""
    if not isinstance(text, str):
        raise TypeError("match() takes text (str); decode bytes first")
    table = table or load_table()
    index = status_codes.load_codes() if codes else None
    code_lines: dict[int, tuple[int, str]] = {}
    found = _scan(text, _compile_table(table, index), code_lines) if text else {}
    found = _drop_superseded(table, found)
    facts = extract(text, _needed(table, found)) if found else []
    values = {f.name: f.value for f in facts}
    values.update({str(k): str(v) for k, v in (context or {}).items() if v is not None})
    results = [_result(table.entries[i], acc, values) for i, acc in found.items()]
    code_like: list[str] = []
    if index is not None and code_lines:
        hits, code_like = status_codes.find_lines(list(code_lines.values()), index)
        explained = {n for r in results for n in r.lines}
        results += [_code_result(h, index) for h in hits if h.line not in explained]
    results.sort(key=lambda r: (-r.score, r.lines[0] if r.lines else 0, r.id))
    return Analysis(matches=results, facts=facts, code_like=code_like)


def match(
    text: str, *, context: dict[str, Any] | None = None, table: Table | None = None,
    codes: bool = True,
) -> list[Match]:  # fmt: skip
    """Known causes in `text`, best first (see `analyse`). Never raises on any text."""
    return analyse(text, context=context, table=table, codes=codes).matches
