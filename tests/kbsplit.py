"""Which side of the troubleshooting table's evaluation a public report belongs to.

The split is fixed before any entry is written and depends on the report's URL only: a report
is *held out* (tests/data/kb-heldout/, never a source of an entry) when the SHA-256 of its
normalised URL ends in a hex digit below HELD_OUT_SHARE (4 of 16: a quarter of all reports),
unless the table already cited it before the split was fixed
(tests/data/kb-heldout/cited-before-split.txt: those stay on the table side).
Entries may be written only from the other three quarters. Because the rule is a function of
the URL, two people collecting at the same time cannot put one report on both sides, and a test
checks that no entry or fixture cites a held-out report.

    python tests/kbsplit.py URL...   # prints "heldout" or "table" for each URL
"""

from __future__ import annotations

import hashlib
import sys
from functools import lru_cache
from pathlib import Path
from urllib.parse import urlsplit

HELD_OUT_SHARE = 4  # of 16


def normalise(url: str) -> str:
    """One spelling per report: https, lower-case host without www., no query, fragment
    (#issuecomment-...) or trailing slash; GitHub's /pull/ and /issues/ are one report space."""
    parts = urlsplit(url.strip())
    host = parts.netloc.lower().removeprefix("www.")
    path = parts.path.rstrip("/")
    if host == "github.com":
        path = path.lower().replace("/pull/", "/issues/")
    return f"https://{host}{path}"


BEFORE_SPLIT = Path(__file__).resolve().parent / "data" / "kb-heldout" / "cited-before-split.txt"


@lru_cache(maxsize=1)
def cited_before_split() -> frozenset[str]:
    lines = BEFORE_SPLIT.read_text(encoding="utf-8").splitlines()
    return frozenset(line.strip() for line in lines if line.strip() and not line.startswith("#"))


def side(url: str) -> str:
    """'heldout' or 'table' for a report URL."""
    if normalise(url) in cited_before_split():
        return "table"
    digest = hashlib.sha256(normalise(url).encode("utf-8")).hexdigest()
    return "heldout" if int(digest[-1], 16) < HELD_OUT_SHARE else "table"


def main(argv: list[str]) -> int:
    for url in argv:
        print(f"{side(url)}\t{normalise(url)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
