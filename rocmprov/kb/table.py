"""The troubleshooting table: rocmprov/data/kb/*.yaml (one file an area) loaded into frozen
dataclasses.

Pure: `parse_table(document)` turns the YAML document into a `Table` and rejects a malformed
entry with a `TableError` that names it. `load_table()` reads the packaged file once (cached).

Each pattern gets an *anchor*: a literal substring every match of the pattern must contain.
The matcher searches the text for anchors only (one pass) and runs the full regexes on the few
lines around an anchor hit. The anchor is derived from the regex (its longest required literal,
preferring one that starts with a rare character) unless the entry names one.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field, replace
from functools import lru_cache
from importlib import resources
from typing import Any

from rocmprov.kb.anchors import MIN_ANCHOR, choose_anchors, derive_anchor, regex_runs
from rocmprov.kb.contexts import CONTEXTS
from rocmprov.kb.prefixes import continued, cut_at_line_end
from rocmprov.kb.redact import redactable
from rocmprov.parse.datafile import load_yaml

__all__ = ["MIN_ANCHOR", "derive_anchor"]

SCHEMA = "rocmprov.kb/1"
ANCHORS_SCHEMA = "rocmprov.kb-anchors/1"
CATEGORIES = (
    "rocm", "hip", "rocr", "rocblas", "miopen", "rccl", "pytorch",
    "kernel", "firmware", "dkms", "apt", "container", "kubernetes", "wsl",
    "compiler", "amdsmi", "memory", "llm", "framework",
)  # fmt: skip
KINDS = ("root-cause", "symptom", "noise")
ID_RE = re.compile(r"^[a-z0-9]+(?:[.-][a-z0-9]+)*$")
PLACEHOLDER_RE = re.compile(r"\{([a-z_][a-z0-9_]*)\}")
ENTRY_KEYS = {
    "id", "title", "category", "kind", "priority", "patterns", "cause", "fix",
    "conditions", "harmless", "sources", "defaults", "supersedes",
}  # fmt: skip
MAX_WINDOW = 40


class TableError(ValueError):
    """The troubleshooting table is malformed (a packaging bug, caught by the tests)."""


@dataclass(frozen=True)
class Pattern:
    """One regex of an entry. `lines` > 1: the match may span that many consecutive lines."""

    regex: str
    anchor: str
    lines: int = 1
    runs: tuple[str, ...] = field(default=(), compare=False)  # where the anchor may come from
    # the lines around a match (`around` either way) must not match `unless` and must match
    # `near`: a context that rules the cause out or in, read once per match (kb/scan.py)
    unless: str = ""
    near: str = ""
    around: int = 0

    @property
    def compiled(self) -> re.Pattern[str]:
        return _compile(self.regex, self.lines > 1, self.anchor)


@dataclass(frozen=True)
class Condition:
    """What changes the answer. `match` maps a capture or context key to a regex; when all match
    (and `match` is not empty), `fix` replaces the entry's fix."""

    when: str
    fix: str = ""
    match: tuple[tuple[str, str], ...] = ()

    def applies(self, values: dict[str, str]) -> bool:
        if not self.match:
            return False
        for key, regex in self.match:
            value = values.get(key)
            if value is None or not re.fullmatch(regex, value):
                return False
        return True


@dataclass(frozen=True)
class Entry:
    id: str
    title: str
    category: str
    kind: str
    priority: int
    patterns: tuple[Pattern, ...]
    cause: str
    fix: str
    sources: tuple[str, ...]
    conditions: tuple[Condition, ...] = ()
    harmless: bool = False
    defaults: tuple[tuple[str, str], ...] = ()  # placeholder values when nothing captured them
    supersedes: tuple[str, ...] = ()  # entries this one explains away on the same lines


@dataclass(frozen=True)
class Table:
    entries: tuple[Entry, ...]
    by_id: dict[str, Entry] = field(default_factory=dict, compare=False, hash=False, repr=False)

    def __len__(self) -> int:
        return len(self.entries)

    def __hash__(self) -> int:
        """Hashed once (the matcher's compiled-table cache is keyed by the table, looked up on
        every match(): hashing 400 entries field by field each time was ~0.6 ms a call)."""
        cached = self.__dict__.get("_hash")
        if cached is None:
            cached = hash(self.entries)
            object.__setattr__(self, "_hash", cached)
        return cached


@lru_cache(maxsize=512)
def _compile(regex: str, multiline: bool, anchor: str = "") -> re.Pattern[str]:
    """A multi-line pattern also matches with a log prefix on its later lines, a single-line one
    on a line cut after its anchor (kb/prefixes.py); a number or hex value it captures may be
    a user's placeholder (kb/redact.py)."""
    regex = redactable(regex)
    if multiline:
        return re.compile(continued(regex), re.MULTILINE)
    return re.compile(cut_at_line_end(regex, anchor))


def _text(raw: dict[str, Any], key: str, where: str, required: bool = True) -> str:
    value = raw.get(key, "")
    if value is None:
        value = ""
    if not isinstance(value, str):
        raise TableError(f"{where}: {key} must be text")
    value = value.strip()
    if required and not value:
        raise TableError(f"{where}: {key} is missing")
    return value


def _pattern(raw: Any, where: str, quick: bool = False) -> Pattern:
    """One pattern. `quick`: its regex is not parsed, because its anchor is known (anchors.json,
    made by the full parse of this very table)."""
    if isinstance(raw, str):
        raw = {"regex": raw}
    if not isinstance(raw, dict) or not isinstance(raw.get("regex"), str):
        raise TableError(f"{where}: a pattern is a regex or a mapping with 'regex'")
    if set(raw) - {"regex", "lines", "anchor", "unless", "near", "around"}:
        raise TableError(f"{where}: a pattern has only regex, lines, anchor, unless, near, around")
    regex = raw["regex"]
    lines = int(raw.get("lines", 1))
    if not 1 <= lines <= MAX_WINDOW:
        raise TableError(f"{where}: lines must be 1..{MAX_WINDOW}")
    try:  # the scan compiles a pattern at its anchor's first hit; a table read in full is
        # checked here, so a regex that parses but cannot compile is a TableError, not a
        # re.error from match() (the packaged table: tests/test_kb.py compiles every form)
        parsed = [] if quick else regex_runs(redactable(regex))  # runs a placeholder keeps
        if not quick:
            _compile(regex, lines > 1)
    except re.error as exc:
        raise TableError(f"{where}: bad regex {regex!r}: {exc}") from exc
    if "(?i" in regex:
        raise TableError(f"{where}: case-insensitive patterns defeat the anchor scan")
    given = raw.get("anchor")
    if given is not None and (not isinstance(given, str) or "\n" in given):
        raise TableError(f"{where}: an anchor is text on one line")
    runs = [given] if given else parsed
    if not quick and not any(len(run) >= MIN_ANCHOR for run in runs):
        raise TableError(f"{where}: no literal of {MIN_ANCHOR}+ characters; give 'anchor'")
    context = {key: _context(raw.get(key), key, where) for key in ("unless", "near")}
    around = int(raw.get("around", 0))
    if any(context.values()) != (1 <= around <= MAX_WINDOW):
        raise TableError(f"{where}: unless/near need around 1..{MAX_WINDOW} (and around needs one)")
    for key, value in context.items() if not quick else ():
        try:
            re.compile(value)
        except (re.error, TypeError) as exc:
            raise TableError(f"{where}: bad {key} regex {value!r}: {exc}") from exc
    return Pattern(regex=regex, anchor="", lines=lines, runs=tuple(runs), around=around, **context)


def _context(value: Any, key: str, where: str) -> str:
    """A pattern's `unless` / `near`: a regex, `{context: name}` (kb/contexts.py), or a list of
    those, which are alternatives of one regex."""
    items = value if isinstance(value, list) else [value]
    parts = []
    for item in items:
        if isinstance(item, dict):
            name = item.get("context")
            if set(item) != {"context"} or name not in CONTEXTS:
                raise TableError(f"{where}: {key} names no context of {sorted(CONTEXTS)}: {item!r}")
            parts.append(CONTEXTS[name])
        elif isinstance(item, str) or (item is None and len(items) == 1):
            parts.append(item or "")
        else:
            raise TableError(f"{where}: {key} is a regex, {{context: name}} or a list of them")
    if len(parts) > 1 and not all(parts):
        raise TableError(f"{where}: an empty alternative in {key}")
    return parts[0] if len(parts) == 1 else "|".join(f"(?:{p})" for p in parts)


def _entry(raw: Any, index: int, quick: bool = False) -> Entry:
    if not isinstance(raw, dict):
        raise TableError(f"entry #{index} is not a mapping")
    ident = raw.get("id")
    if not isinstance(ident, str) or not ID_RE.match(ident):
        raise TableError(f"entry #{index}: id {ident!r} is not dotted/kebab lower case")
    where = f"entry {ident}"
    unknown = set(raw) - ENTRY_KEYS
    if unknown:
        raise TableError(f"{where}: unknown field(s) {sorted(unknown)}")
    category = _text(raw, "category", where)
    if category not in CATEGORIES:
        raise TableError(f"{where}: category {category!r} not in {CATEGORIES}")
    kind = _text(raw, "kind", where)
    if kind not in KINDS:
        raise TableError(f"{where}: kind {kind!r} not in {KINDS}")
    priority = raw.get("priority", 50)
    if not isinstance(priority, int) or not 0 <= priority <= 99:
        raise TableError(f"{where}: priority must be an integer 0..99")
    patterns = raw.get("patterns")
    if not isinstance(patterns, list) or not patterns:
        raise TableError(f"{where}: patterns must be a non-empty list")
    sources = raw.get("sources")
    if not isinstance(sources, list) or not sources:
        raise TableError(f"{where}: sources must be a non-empty list of URLs")
    for url in sources:
        if not isinstance(url, str) or not url.startswith("https://"):
            raise TableError(f"{where}: source {url!r} is not an https URL")
    conditions = []
    for cond in raw.get("conditions") or []:
        if isinstance(cond, str):
            conditions.append(Condition(when=cond.strip()))
            continue
        if not isinstance(cond, dict):
            raise TableError(f"{where}: a condition is text or a mapping")
        match = cond.get("match") or {}
        if not isinstance(match, dict):
            raise TableError(f"{where}: condition match must be a mapping")
        conditions.append(
            Condition(
                when=_text(cond, "when", where),
                fix=_text(cond, "fix", where, required=False),
                match=tuple((str(k), str(v)) for k, v in match.items()),
            )
        )
    defaults = raw.get("defaults") or {}
    if not isinstance(defaults, dict):
        raise TableError(f"{where}: defaults must be a mapping")
    supersedes = raw.get("supersedes") or []
    if not isinstance(supersedes, list) or not all(isinstance(x, str) for x in supersedes):
        raise TableError(f"{where}: supersedes must be a list of entry ids")
    harmless = raw.get("harmless", False)
    if not isinstance(harmless, bool):
        raise TableError(f"{where}: harmless must be true or false")
    if harmless != (kind == "noise"):
        raise TableError(f"{where}: harmless entries are kind 'noise' and only those")
    return Entry(
        id=ident,
        title=_text(raw, "title", where),
        category=category,
        kind=kind,
        priority=priority,
        patterns=tuple(_pattern(p, f"{where} pattern {i}", quick) for i, p in enumerate(patterns)),
        cause=_text(raw, "cause", where),
        fix=_text(raw, "fix", where),
        sources=tuple(sources),
        conditions=tuple(conditions),
        harmless=harmless,
        defaults=tuple((str(k), str(v)) for k, v in defaults.items()),
        supersedes=tuple(supersedes),
    )


def _raw_entries(document: Any, name: str) -> list[Any]:
    if not isinstance(document, dict) or document.get("schema") != SCHEMA:
        raise TableError(f"{name}: the table must be a mapping with schema: {SCHEMA}")
    raw_entries = document.get("entries")
    if not isinstance(raw_entries, list) or not raw_entries:
        raise TableError(f"{name}: the table has no entries")
    return raw_entries


def _with_anchors(entries: list[Entry], known: list[str] | None = None) -> tuple[Entry, ...]:
    """Every pattern's anchor, chosen for the whole table at once (kb/anchors.py), or `known`."""
    if known is not None and len(known) != sum(len(e.patterns) for e in entries):
        raise TableError("anchors.json does not fit the table: regenerate it")
    anchors = iter(known or choose_anchors([list(p.runs) for e in entries for p in e.patterns]))
    return tuple(
        replace(e, patterns=tuple(replace(p, anchor=next(anchors)) for p in e.patterns))
        for e in entries
    )


def parse_table(document: Any) -> Table:
    """Validate one loaded table document and build the table (pure)."""
    return parse_tables({"table": document})


def parse_tables(documents: dict[str, Any], anchors: list[str] | None = None) -> Table:
    """Validate the table's area documents (name -> loaded YAML) and build one table (pure).
    `anchors`: every pattern's anchor in table order, from a full parse of these documents
    (anchors.json): the regexes are then not parsed again."""
    raw_entries = [raw for name, doc in documents.items() for raw in _raw_entries(doc, name)]
    quick = anchors is not None
    entries = _with_anchors([_entry(raw, i, quick) for i, raw in enumerate(raw_entries)], anchors)
    by_id: dict[str, Entry] = {}
    for entry in entries:
        if entry.id in by_id:
            raise TableError(f"duplicate entry id {entry.id}")
        by_id[entry.id] = entry
    for entry in entries:
        for other in entry.supersedes:
            if other not in by_id or other == entry.id:
                raise TableError(f"entry {entry.id}: supersedes unknown entry {other}")
    return Table(entries=entries, by_id=by_id)


def sources() -> dict[str, str]:
    """The packaged table's area files: name -> text."""
    folder = resources.files("rocmprov.data").joinpath("kb")
    files = sorted((f for f in folder.iterdir() if f.name.endswith(".yaml")), key=lambda f: f.name)
    return {f.name: f.read_text(encoding="utf-8") for f in files}


def source_digest(texts: dict[str, str]) -> str:
    """What anchors.json was made from (kb/anchorfile.py): SHA-256 over the area files' names
    and texts. Choosing anchors parses every regex of the table, ~0.6 s at each start of
    explain or audit for the same result: a table whose files are these takes them from there."""
    h = hashlib.sha256()
    for name, text in sorted(texts.items()):
        h.update(f"{len(name)}:{name}{len(text)}:".encode() + text.encode())
    return h.hexdigest()


def _known_anchors(texts: dict[str, str]) -> list[str] | None:
    """anchors.json's anchors when it was made from exactly these files, else None."""
    try:
        raw = resources.files("rocmprov.data").joinpath("kb/anchors.json").read_text("utf-8")
        doc = json.loads(raw)
    except (OSError, ValueError):
        return None
    if not isinstance(doc, dict) or doc.get("schema") != ANCHORS_SCHEMA:
        return None
    anchors = doc.get("anchors")
    if doc.get("source") != source_digest(texts) or not isinstance(anchors, list):
        return None
    return anchors if all(isinstance(a, str) and a for a in anchors) else None


@lru_cache(maxsize=1)
def load_table() -> Table:
    """The packaged troubleshooting table (rocmprov/data/kb/*.yaml), read and checked once; its
    anchors from anchors.json when that was made from these very files."""
    texts = sources()
    documents = {name: load_yaml(text) for name, text in texts.items()}
    known = _known_anchors(texts)
    if known is not None:
        try:
            return parse_tables(documents, known)
        except TableError:  # an anchors.json edited by hand: choose them again
            pass
    return parse_tables(documents)
