"""The table compiled for the matcher's scan (kb/scan.py): every pattern's anchor in one finder
(kb/literals.py: Hyperscan, or a trie-shaped regex) and, per anchor, the patterns it triggers
(kb/target.py); and the narrower finders the scan switches to when entries saturate or anchors
are done on an enormous line. Pure.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from rocmprov.kb import codes as status_codes
from rocmprov.kb.anchors import choose_anchors
from rocmprov.kb.literals import Finder, finder
from rocmprov.kb.table import Table
from rocmprov.kb.target import CODE_LINE, LOCALE_HIT, Target


@dataclass(frozen=True, eq=False)  # hashed by identity (it is cached, and keys a cache)
class Compiled:
    scan: Finder
    targets: dict[str, tuple[Target, ...]]  # anchor -> patterns it triggers (incl. prefixes)
    anchors: tuple[str, ...] = ()
    engine: str = "auto"  # what finds the anchors (kb/literals.py); "re" in tests


@lru_cache(maxsize=8)
def compile_table(
    table: Table, codes: status_codes.Codes | None = None, localised: tuple[str, ...] = ()
) -> Compiled:
    """The table's anchors as one finder; `localised`: literals of messages in the user's
    language (kb/locale.py) that join the same pass, so that English text pays no pass of its
    own to learn it holds none (`scan`'s `localised`)."""
    own: dict[str, list[Target]] = {}
    for ei, entry in enumerate(table.entries):
        for pi, pattern in enumerate(entry.patterns):
            target = Target(ei, pi, pattern, pattern.lines, pattern.around)
            own.setdefault(pattern.anchor, []).append(target)
    if codes is not None:  # lines worth a look for status codes: their literals join the scan
        taken = {a[0] for a in own}
        for pi, anchor in enumerate(choose_anchors([list(r) for r in codes.anchor_runs], taken)):
            if anchor:
                own.setdefault(anchor, []).append(Target(CODE_LINE, pi, None, 1))
    for word in localised:
        own.setdefault(word, []).append(Target(LOCALE_HIT, 0, None, 1))
    anchors = sorted(own)
    # the trie returns the longest anchor at a position: a hit also fires its prefixes
    targets = {a: tuple(t for n in range(len(a)) for t in own.get(a[: n + 1], ())) for a in anchors}
    found = finder(anchors)  # the narrower finders use the engine that loaded here
    engine = "re" if isinstance(found, re.Pattern) else "auto"
    return Compiled(scan=found, targets=targets, anchors=tuple(anchors), engine=engine)


def without(compiled: Compiled, full: set[int]) -> Finder | None:
    return narrower(compiled, frozenset(full))


@lru_cache(maxsize=32)
def narrower(
    compiled: Compiled, full: frozenset[int], skip: frozenset[str] = frozenset()
) -> Finder | None:
    """The scan's finder without the anchors whose every target belongs to a saturated entry (a
    harmless line repeated on every other line of a log costs nothing more) and without the
    anchors in `skip`, or None when no anchor is left."""
    live = [
        a for a in compiled.anchors
        if a not in skip and any(t.entry not in full for t in compiled.targets[a])
    ]  # fmt: skip
    return finder(live, compiled.engine) if live else None
