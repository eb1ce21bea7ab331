"""anchors.json: every pattern's anchor for the packaged table, made once instead of at every
start of explain or audit (kb/table.py takes them when the file was made from the very table
files it reads, else it chooses them itself). Regenerate after any change to the table:

    python -m rocmprov.kb.anchorfile > rocmprov/data/kb/anchors.json

(tests/test_kb.py fails while it is stale.)
"""

from __future__ import annotations

import json
from typing import Any

from rocmprov.kb.table import ANCHORS_SCHEMA, Table, parse_tables, source_digest, sources
from rocmprov.parse.datafile import load_yaml


def anchors_document(table: Table, texts: dict[str, str]) -> dict[str, Any]:
    """anchors.json for `table`, parsed in full from the area files of `texts`."""
    anchors = [p.anchor for e in table.entries for p in e.patterns]
    return {"schema": ANCHORS_SCHEMA, "source": source_digest(texts), "anchors": anchors}


def main() -> int:
    texts = sources()
    table = parse_tables({name: load_yaml(text) for name, text in texts.items()})
    print(json.dumps(anchors_document(table, texts), indent=0))  # ASCII: any locale's stdout
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
