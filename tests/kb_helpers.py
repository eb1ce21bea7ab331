"""Small helpers shared by the troubleshooting table's review tests: what `match` answers."""

from __future__ import annotations

from rocmprov.kb import Match, match


def known(text: str) -> list[Match]:
    """The real causes `match` finds in `text`, best first (harmless lines left out)."""
    return [m for m in match(text) if not m.harmless]


def first(text: str) -> Match | None:
    """The first real cause, or None."""
    found = known(text)
    return found[0] if found else None


def ids(text: str) -> list[str]:
    """Every entry `match` answers, harmless ones included, best first."""
    return [m.id for m in match(text)]
