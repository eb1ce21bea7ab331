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


# GitHub repositories that were renamed or moved with their issue numbers: one report has
# one spelling (ROCm/ROCm's old issues are served as ROCm/legacy-rocm-build).
RENAMED = {
    "/rocm/legacy-rocm-build/": "/rocm/rocm/",
    "/ggerganov/llama.cpp/": "/ggml-org/llama.cpp/",
    "/ggerganov/ggml/": "/ggml-org/ggml/",
    "/jmorganca/ollama/": "/ollama/ollama/",
    "/rocm-developer-tools/hip/": "/rocm/hip/",
}


# query keys that name a thread on forum software (phpBB, FluxBB, vBulletin, SMF, Launchpad)
_THREAD_KEYS = {"id", "t", "p", "topic", "threadid", "tid", "f", "bug", "bugid", "question"}


def normalise(url: str) -> str:
    """One spelling per report: https, lower-case host without www., no query, fragment
    (#issuecomment-...) or trailing slash; GitHub's /pull/ and /issues/ are one report space,
    and a renamed repository is spelled with its current name. A forum's thread parameter
    (viewtopic.php?id=N) is kept: without it every thread would be one report."""
    parts = urlsplit(url.strip())
    host = parts.netloc.lower().removeprefix("www.")
    path = parts.path.rstrip("/")
    if host == "github.com":
        path = path.lower().replace("/pull/", "/issues/")
        for old, new in RENAMED.items():
            if path.startswith(old):
                path = new + path[len(old):]
    query = ""
    if host != "github.com" and parts.query:  # forums: viewtopic.php?id=N is the thread
        keep = [q for q in parts.query.split("&") if q.split("=", 1)[0] in _THREAD_KEYS]
        query = "?" + "&".join(sorted(keep)) if keep else ""
    return f"https://{host}{path}{query}"


BEFORE_SPLIT = Path(__file__).resolve().parent / "data" / "kb-heldout" / "cited-before-split.txt"


@lru_cache(maxsize=1)
def cited_before_split() -> frozenset[str]:
    lines = BEFORE_SPLIT.read_text(encoding="utf-8").splitlines()
    return frozenset(
        normalise(line) for line in lines if line.strip() and not line.startswith("#")
    )


# Not reports: documentation sites and files in source repositories. Nobody pastes an error
# into them and waits for a cause, so they are never held-out cases; entries may cite them.
NOT_REPORTS = (
    "rocm.docs.amd.com", "docs.", "readthedocs.io", "pytorch.org", "kernel.org",
    "man7.org", "manpages.", "wiki.", "gitlab.freedesktop.org/drm/amd/-/wikis",
    "packages.",  # distributions' package indexes (packages.debian.org, packages.fedoraproject.org)
)  # fmt: skip
_SOURCE_PATHS = ("/blob/", "/tree/", "/raw/", "/commit/", "/releases/", "/wiki/")


def is_report(url: str) -> bool:
    norm = normalise(url)
    host_path = norm.removeprefix("https://")
    host = host_path.split("/", 1)[0]
    if any(host.startswith(n) or host.endswith(n) or host_path.startswith(n) for n in NOT_REPORTS):
        return False
    return not (host in ("github.com", "raw.githubusercontent.com")
                and any(p in norm for p in _SOURCE_PATHS)) and host != "raw.githubusercontent.com"


def side(url: str) -> str:
    """'heldout' or 'table' for a report URL (anything that is not a report: 'table')."""
    if normalise(url) in cited_before_split() or not is_report(url):
        return "table"
    digest = hashlib.sha256(normalise(url).encode("utf-8")).hexdigest()
    return "heldout" if int(digest[-1], 16) < HELD_OUT_SHARE else "table"


def main(argv: list[str]) -> int:
    for url in argv:
        print(f"{side(url)}\t{normalise(url)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
