"""RAS views other than amd-smi's static/metric: `amd-smi bad-pages` (JSON or human text) and
`rocm-smi --showrasinfo` (the older per-block ECC table). Pure.

Formats and their sources (tests/fixtures/ras-views holds a capture or a source-derived sample
of each, with its URL):

- amd-smi bad-pages (amdsmi_cli/amdsmi_commands.py `bad_pages`, ROCm 6.x-7.x): per GPU the keys
  retired / pending / un_res, each a list of {page_address, page_size, status}, a single such
  dict when there is exactly one page ("Remove brackets if there is only one value"), the string
  "No bad pages found." or "N/A" when the library call failed. The human text is the same tree
  through amdsmi_logger.py's YAML-based printer: `GPU: 0`, `RETIRED: No bad pages found.` or
  `RETIRED:` followed by indented PAGE_ADDRESS / PAGE_SIZE / STATUS lines, one trio per page.
- rocm-smi --showrasinfo (python_smi_tools/rocm_smi.py `showRasInfo`, ROCm 3.x-7.x; its --json
  form prints "WARNING: No JSON data to report", ROCm/ROCm#4374): per device a `GPU[N]: RAS INFO`
  line, a header line, then one row per RAS block: name, state (ENABLED, DISABLED, ...) and, when
  the library gave them, the correctable and uncorrectable counts.
"""

from __future__ import annotations

import re
from typing import Any

from rocmprov.parse.ras_sysfs import BadPages
from rocmprov.parse.smi import amd_smi_gpus, load_json

_KINDS = {"retired": "retired", "pending": "pending", "un_res": "un_res"}
_NONE_FOUND = "no bad pages found"


def _count_pages(v: Any) -> int | None:
    """A retired/pending/un_res value -> pages; None when the tool could not say ("N/A")."""
    if isinstance(v, list):
        return sum(1 for p in v if isinstance(p, dict))
    if isinstance(v, dict):  # one page, brackets removed by the CLI
        return 1 if any(str(k).lower() == "page_address" for k in v) else len(v)
    if isinstance(v, str) and v.strip().lower().rstrip(".") == _NONE_FOUND:
        return 0
    return None


def parse_amd_smi_bad_pages(text: str) -> list[BadPages]:
    """`amd-smi bad-pages` in JSON or human text -> one BadPages per GPU that reported. Anything
    else (an error message, an older amd-smi without the command) says nothing about the pages:
    [] (never "0 retired"); a GPU whose three views are all "N/A" is left out too."""
    data = load_json(text)
    docs = (
        [{str(k).lower(): v for k, v in g.items()} for g in amd_smi_gpus(data)]
        if data is not None
        else _text_docs(text)
    )
    out = []
    for pos, g in enumerate(docs):
        counts = {k: _count_pages(g.get(k)) for k in _KINDS}
        if all(c is None for c in counts.values()):
            continue
        index = g.get("gpu") if isinstance(g.get("gpu"), int) else pos
        out.append(
            BadPages(index, counts["retired"] or 0, counts["pending"] or 0, counts["un_res"] or 0)
        )
    return out


_GPU = re.compile(r"^GPU:\s*(\d+)\s*$")
_KIND = re.compile(r"^\s+(RETIRED|PENDING|UN_RES):(.*)$")  # value stripped after: linear time
_MAX_LINE = 4096  # amd-smi's and rocm-smi's lines are short; a longer one is not theirs
_PAGE = re.compile(r"^\s+PAGE_ADDRESS:\s*\S+")


def _text_docs(text: str) -> list[dict[str, Any]]:
    docs: list[dict[str, Any]] = []
    doc: dict[str, Any] | None = None
    kind = ""
    for line in text.splitlines()[:20000]:
        if len(line) > _MAX_LINE:
            continue
        if m := _GPU.match(line.strip() if not line.startswith(" ") else ""):
            doc = {"gpu": int(m.group(1))}
            docs.append(doc)
            kind = ""
        elif doc is not None and (m := _KIND.match(line)):
            kind, value = m.group(1).lower(), m.group(2).strip()
            doc[kind] = value if value else []
        elif doc is not None and kind and isinstance(doc.get(kind), list) and _PAGE.match(line):
            doc[kind].append({"page_address": line.split(":", 1)[1].strip()})
    return docs


# --- rocm-smi --showrasinfo ------------------------------------------------------------------

_RAS_GPU = re.compile(r"^GPU\[(\d+)\]:\s+RAS INFO\s*$")
_RAS_ROW = re.compile(r"^\s*([A-Z][A-Z0-9_]{1,15})\s+([A-Z][A-Z ]{1,20}?)(?:\s+(\d+)\s+(\d+))?\s*$")


def parse_rocm_smi_rasinfo(text: str) -> list[dict[str, Any]]:
    """`rocm-smi --showrasinfo` -> one amd-smi-shaped dict per GPU: {"gpu": N, "ecc_blocks":
    {BLOCK: {correctable_count, uncorrectable_count}}, "ras": {"ecc_block_state": {BLOCK:
    STATE}}}, so the health extractor reads it as it reads amd-smi static --ras / metric --ecc."""
    docs: list[dict[str, Any]] = []
    doc: dict[str, Any] | None = None
    for raw in text.splitlines()[:20000]:
        line = raw.rstrip()
        if len(line) > _MAX_LINE:
            continue
        if m := _RAS_GPU.match(line.strip()):
            doc = {"gpu": int(m.group(1)), "ecc_blocks": {}, "ras": {"ecc_block_state": {}}}
            docs.append(doc)
            continue
        if doc is None or "Block" in line or not (m := _RAS_ROW.match(line)):
            continue
        block, state = m.group(1).lower(), m.group(2).strip()
        doc["ras"]["ecc_block_state"][block] = state
        if m.group(3) is not None:
            doc["ecc_blocks"][block] = {
                "correctable_count": m.group(3),
                "uncorrectable_count": m.group(4),
            }
    return [d for d in docs if d["ras"]["ecc_block_state"]]  # "GPU[1]: RAS INFO" then nothing
