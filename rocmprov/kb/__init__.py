"""Troubleshooting knowledge base: the table (rocmprov/data/kb/*.yaml) and its matcher.

Public API (for `explain` and for the audit, on each host's dmesg and tool output):

    load_table() -> Table                      # cached
    match(text, *, context=None) -> list[Match]  # best first
"""

from __future__ import annotations

from rocmprov.kb.matcher import Match, match
from rocmprov.kb.table import Entry, Table, TableError, load_table

__all__ = ["Entry", "Match", "Table", "TableError", "load_table", "match"]
