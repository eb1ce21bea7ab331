"""The similarity tier: when no real cause of the table matches, which entries' real texts the
input's informative lines resemble. Pure (apart from reading the packaged texts once).

explain runs it (`suggest`) when no pattern matched, and when only harmless ones did: then
over the lines no harmless match covers (its evidence lines, and every line one of its entry's
one-line patterns finds, however often it repeats), since the real error may be on another
line. Measured leave-one-out on the table's own wordings: benchmarks/similar_loo.py.

Each entry's real text is the lines its own fixture and its other real wordings matched
(rocmprov/data/kb/texts.json, generated from tests/fixtures/kb and tests/fixtures/kb-wordings by
`python -m rocmprov.kb.similar tests/fixtures/kb`; a test keeps it in sync), its title, and the
words of its cause at CAUSE_WEIGHT each (a word only the cause has counts 0.15 of one the texts
have: the cause names the component and the symptom in other words than the log). Text
becomes words: lower-cased, camelCase and snake_case split as well as kept whole, digits dropped
(so versions, sizes, PCI addresses, pids, hex and gfx numbers say nothing), a few stop words
left out. Each entry is a TF-IDF vector over those words (sublinear: a count c >= 1 weighs
1 + ln c, a cause-only word its fraction); an input line is scored against every
entry by cosine similarity, and an entry keeps its best line.

Only lines that look like a problem are compared (an error, failure, warning, "not found"...
once names such as libgpg-error.so.0 or panic= are left out, kb/names.py) and that hold at
least MIN_WORDS distinct words the table knows (a table cell "test-error 0.07" is two words, too
few to resemble anything): a healthy log has none and gets no similar entry. A harmless entry
that is as similar as the best real one wins: the input is then "similar to a harmless line",
not to a cause. Shown as "similar to", never as a diagnosis: explain's exit code does not
change.
"""

from __future__ import annotations

import glob
import json
import math
import re
import sys
from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

from rocmprov.kb.literals import Finder, finder, over
from rocmprov.kb.names import masked
from rocmprov.kb.table import Entry, Table, load_table

if TYPE_CHECKING:
    from rocmprov.kb.matcher import Match

THRESHOLD = 0.45  # cosine below this is no resemblance (set on the table's own texts)
CAUSE_WEIGHT = 0.15  # what a word of an entry's cause counts, against 1 for a word of its texts
TOP = 3
MAX_LINES = 400  # informative lines compared, at most (the first ones)
# lines holding a problem literal read, at most: a line that is only a name (kb/names.py) does not
# count towards MAX_LINES, and without this bound a 16 MiB `ldconfig -p`-like listing of them ran
# the problem regex and the masking on each of its ~200,000 lines (~13 s a read, not ~0.3 s)
MAX_READ = 4_000  # ten times MAX_LINES: an `ldconfig -p` (~1,000 lines) or `pip list` is read whole
MAX_CHARS = 600  # characters of a line compared
MIN_WORDS = 3  # a line with fewer distinct known words ("test-error 0.07") says too little
# What makes a line look like a problem: each is one literal (lower case) with word bounds at
# most, so a line is read with the regex only where the literals' finder (kb/literals.py, one
# pass in C) found one of them: 20 MB of log in ~0.3 s, not ~10 s of one regex a line.
_PROBLEMS = (
    "error", "fail", "cannot", "can't", "could not", "couldn't", "unable", "not found", "no such",
    "denied", r"\bfault", "abort", "exception", "invalid", "unsupported", "not supported",
    r"\btimeout\b", r"\btimed out\b", r"\bkilled\b", "refused", r"\bmissing\b", "undefined",
    "segmentation", "panic", r"\bwarn", "traceback", "not available", "not compatible", "mismatch",
    "no gpu", "no device", "no kernel", "no binary", "illegal", "corrupt", r"\blost\b", r"\bhang",
    r"\bstuck\b",
)  # fmt: skip
_PROBLEM = re.compile("(?i)" + "|".join(_PROBLEMS))
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_]*")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+")
_STOP = frozenset(
    ("the", "a", "an", "to", "of", "in", "on", "for", "is", "are", "be", "been", "and", "or",
     "with", "by", "at", "this", "that", "it", "its", "from", "as", "was", "were", "will", "can",
     "you", "your", "please", "see", "use", "using")
)  # fmt: skip


@dataclass(frozen=True)
class Similar:
    id: str
    title: str
    harmless: bool
    score: float  # cosine similarity, 0..1
    line: int  # 1-based line of the input that resembles the entry most
    evidence: str

    def to_dict(self) -> dict[str, object]:
        return {
            "id": self.id, "title": self.title, "harmless": self.harmless,
            "score": round(self.score, 3), "line": self.line, "evidence": self.evidence,
        }  # fmt: skip


def words(text: str) -> list[str]:
    out: list[str] = []
    for token in _WORD.findall(text):
        parts = [p.lower() for p in _CAMEL.findall(token.replace("_", " ")) if len(p) > 1]
        whole = re.sub(r"\d+", "", token.lower())
        for word in {whole, *parts} if len(parts) > 1 else {whole}:
            if len(word) > 1 and word not in _STOP:
                out.append(word)
    return out


@dataclass(frozen=True, eq=False)
class _Index:
    ids: tuple[str, ...]
    idf: dict[str, float]
    postings: dict[str, tuple[tuple[int, float], ...]]  # word -> (entry, normalised weight)


def _texts() -> dict[str, list[str]]:
    raw = resources.files("rocmprov.data").joinpath("kb/texts.json").read_text(encoding="utf-8")
    return dict(json.loads(raw))


def entry_doc(entry: Entry, lines: Sequence[str]) -> dict[str, float]:
    """One entry's words and their counts: its title and `lines` (its real texts) 1 each, its
    cause's words CAUSE_WEIGHT each."""
    doc: dict[str, float] = dict(Counter(words(" ".join([entry.title, *lines]))))
    for word in words(entry.cause):
        doc[word] = doc.get(word, 0.0) + CAUSE_WEIGHT
    return doc


def entry_words(table: Table, texts: Mapping[str, list[str]]) -> list[dict[str, float]]:
    """Each entry's words (`entry_doc`): its title, its real texts and its cause."""
    return [entry_doc(e, texts.get(e.id, [])) for e in table.entries]


def _tf(count: float) -> float:
    """Sublinear term frequency: 1 + ln(count) from 1 up, a fraction (a cause-only word) as is."""
    return 1 + math.log(count) if count >= 1 else count


def build_index(table: Table, docs: Sequence[Mapping[str, float]]) -> _Index:
    """TF-IDF over the entries' words (`entry_words`), each entry's vector normalised."""
    df: Counter[str] = Counter(w for d in docs for w in d)
    n = len(docs)
    idf = {w: math.log((1 + n) / (1 + c)) + 1.0 for w, c in df.items()}
    postings: dict[str, list[tuple[int, float]]] = {}
    for i, doc in enumerate(docs):
        weights = {w: _tf(c) * idf[w] for w, c in doc.items()}
        norm = math.sqrt(sum(v * v for v in weights.values())) or 1.0
        for w, v in weights.items():
            postings.setdefault(w, []).append((i, v / norm))
    frozen = {w: tuple(p) for w, p in postings.items()}
    return _Index(tuple(e.id for e in table.entries), idf, frozen)


@lru_cache(maxsize=4)
def _index(table: Table) -> _Index:
    return build_index(table, entry_words(table, _texts()))


@lru_cache(maxsize=1)
def _problem_finder() -> Finder:
    return finder([p.replace(r"\b", "") for p in _PROBLEMS])


def informative(
    text: str, skip: Collection[int] = (), unless: Sequence[re.Pattern[str]] = ()
) -> list[tuple[int, str]]:
    """(line number, line) of the lines that look like a problem in their first MAX_CHARS
    characters once their names are left out (kb/names.py), the first MAX_LINES among the first
    MAX_READ lines that hold a problem literal; the line numbers in `skip` and the lines one of
    `unless` finds are left out."""
    return read(text, skip, unless)[0]


def read(
    text: str, skip: Collection[int] = (), unless: Sequence[re.Pattern[str]] = ()
) -> tuple[list[tuple[int, str]], bool]:
    """`informative`, and whether it stopped at MAX_READ lines with more text after them (lines
    never read: they may hold the problem)."""
    low = text.lower()  # the literals are lower case; lower() keeps every \n where it was
    same = len(low) == len(text)  # else a character's lower case has another length
    lines = None if same else text.split("\n")
    search = over(_problem_finder(), low)
    out: list[tuple[int, str]] = []
    pos = last = 0
    number = 1
    tried = 0
    while len(out) < MAX_LINES and (hit := search(low, pos)) is not None:
        if tried >= MAX_READ:
            return out, True
        tried += 1
        start = low.rfind("\n", 0, hit.start()) + 1
        end = low.find("\n", hit.start())
        end = len(low) if end < 0 else end
        number += low.count("\n", last, start)
        last, pos = start, end + 1
        full = text[start:end] if lines is None else lines[number - 1]
        line = full[:MAX_CHARS]
        # the harmless lines first: the problem regex costs more than their patterns
        if (number not in skip and not any(r.search(full) for r in unless)
                and _PROBLEM.search(line) and _PROBLEM.search(masked(line))):  # fmt: skip
            out.append((number, line.strip()))
    return out, False


def similar(
    text: str, table: Table | None = None, top: int = TOP, *, skip: Collection[int] = (),
    unless: Sequence[re.Pattern[str]] = (), index: _Index | None = None,
) -> list[Similar]:  # fmt: skip
    """Entries whose real texts resemble the input's informative lines, best first (at most
    `top`, each at least THRESHOLD); [] when a harmless entry resembles it as much. `skip`,
    `unless`: lines not compared (see `informative`); `index`: another index of the same table
    (`build_index`)."""
    return chosen(ranked(text, table, skip=skip, unless=unless, index=index), top)


def ranked(
    text: str, table: Table | None = None, *, skip: Collection[int] = (),
    unless: Sequence[re.Pattern[str]] = (), index: _Index | None = None,
) -> list[Similar]:  # fmt: skip
    """Every entry that shares a word with an informative line, best first, harmless ones too,
    each with its best line: `similar` before its threshold and its harmless rule."""
    lines = informative(text, skip, unless)
    if not lines:  # nothing looks like a problem: the index is not even built
        return []
    table = table or load_table()
    index = index or _index(table)
    best: dict[int, tuple[float, int, str]] = {}
    for number, line in lines:
        counts = Counter(words(line))
        weights = {w: _tf(c) * index.idf[w] for w, c in counts.items() if w in index.idf}
        if len(weights) < MIN_WORDS:
            continue
        norm = math.sqrt(sum(v * v for v in weights.values()))
        if not norm:
            continue
        scores: Counter[int] = Counter()
        for w, v in weights.items():
            for entry, weight in index.postings[w]:
                scores[entry] += v / norm * weight
        for entry, score in scores.items():
            if score > best.get(entry, (0.0, 0, ""))[0]:
                best[entry] = (score, number, line)
    order = sorted(best.items(), key=lambda kv: (-kv[1][0], kv[0]))
    return [Similar(table.entries[i].id, table.entries[i].title, table.entries[i].harmless,
                    score, number, line) for i, (score, number, line) in order]  # fmt: skip


def chosen(
    ranking: Sequence[Similar], top: int = TOP, threshold: float | None = None
) -> list[Similar]:
    """The real entries of `ranking` at least `threshold` (THRESHOLD) alike, at most `top`; []
    when its best is harmless: as similar to a harmless line as to anything, no cause."""
    threshold = THRESHOLD if threshold is None else threshold
    out: list[Similar] = []
    for s in ranking:
        if s.score < threshold:
            break
        if s.harmless:
            if not out:
                return []
            continue
        out.append(s)
        if len(out) >= top:
            break
    return out


def suggest(text: str, matches: Sequence[Match], table: Table | None = None) -> list[Similar]:
    """explain's tier: nothing when a real cause matched; else `similar` over the informative
    lines that no harmless match covers: its evidence lines, and every line that one of its
    entry's one-line patterns finds (a match lists its first lines only). The harmless lines
    are answered already; the real error may be on another line."""
    if any(not m.harmless for m in matches):
        return []
    table = table or load_table()
    skip, unless = covered(matches, table)
    return similar(text, table, skip=skip, unless=unless)


def covered(matches: Sequence[Match], table: Table) -> tuple[set[int], list[re.Pattern[str]]]:
    """What `matches` cover: their evidence lines, and their entries' one-line patterns."""
    ids = {m.id for m in matches}
    unless = [p.compiled for e in table.entries if e.id in ids for p in e.patterns if p.lines == 1]
    return {n for m in matches for n in m.lines}, unless


def wordings(fixtures: Path, entry_id: str) -> list[Path]:
    """An entry's real texts: its fixture, then its other real wordings (the folder kb-wordings
    beside `fixtures`: <id>.<slug>.txt)."""
    found = (fixtures.parent / "kb-wordings").glob(f"{glob.escape(entry_id)}.*.txt")
    others = sorted(p for p in found if p.name.removesuffix(".txt").rsplit(".", 1)[0] == entry_id)
    return [fixtures / f"{entry_id}.txt", *others]


def matched_lines(body: str, entry_id: str, table: Table) -> list[str]:
    """The lines of `body` that the entry's patterns matched (stripped, cut at MAX_CHARS)."""
    from rocmprov.kb.matcher import match

    found = [m for m in match(body, table=table, codes=False) if m.id == entry_id]
    return [line.strip()[:MAX_CHARS] for line in found[0].evidence] if found else []


def body_of(path: Path) -> str:
    """A fixture's text: what follows its header's `---` line."""
    return path.read_text(encoding="utf-8").partition("\n---\n")[2]


def build(fixtures: Path, table: Table | None = None) -> dict[str, list[str]]:
    """Each entry's real texts: the lines its patterns matched in its fixture and in its other
    real wordings (`wordings`), each once."""
    table = table or load_table()
    texts: dict[str, list[str]] = {}
    for entry in table.entries:
        lines: list[str] = []
        for path in wordings(fixtures, entry.id):
            for line in matched_lines(body_of(path), entry.id, table):
                if line not in lines:
                    lines.append(line)
        texts[entry.id] = lines
    return texts


def main(argv: list[str]) -> int:
    texts = build(Path(argv[0] if argv else "tests/fixtures/kb"))
    print(json.dumps(texts, indent=0, ensure_ascii=False, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
