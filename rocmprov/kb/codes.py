"""Status codes of the ROCm libraries (rocmprov/data/kb_codes.yaml, generated from the public
headers by scripts/gen_kb_codes.py): any code a program prints gets at least its meaning and
the family's next step when no table entry explains the line.

Pure: `parse_codes(document)` builds the index; `find(text)` lists the codes in a text with
their line numbers. A code is recognised by its name (hipErrorOutOfMemory,
HSA_STATUS_ERROR_OUT_OF_RESOURCES, rocblas_status_invalid_size...), by the message the library
prints for it (HIP's "HIP error: invalid device function", RCCL's "unhandled system error (run
with NCCL_DEBUG=INFO for details)"), and for HSA by its hex value on a line that names HSA.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from typing import Any

from rocmprov.parse.datafile import load_yaml

SCHEMA = "rocmprov.kb-codes/1"
# Codes that report a state, not a failure (their header says so): shown as harmless.
NOT_FAILURES = frozenset({
    "hipErrorNotReady", "HSA_STATUS_INFO_BREAK", "HSA_STATUS_CU_MASK_REDUCED",
    "miopenStatusGpuOperationsSkipped", "rocblas_status_continue", "rocblas_status_size_unchanged",
    "rocblas_status_size_increased", "rocblas_status_perf_degraded", "ncclInProgress",
})  # fmt: skip
# HIP's messages are short ("invalid argument"): only after the prefix programs print them
# with ("HIP error: ", ggml's "CUDA error 98 at ggml-cuda.cu:6246: ", "ROCm error: file.cu:NN: ":
# a source location may stand between); RCCL's are long and specific enough alone.
_PREFIXED = re.compile(
    r"(?:HIP|hip|ROCm|CUDA) error(?::| \d{1,4} at) (?:[\w./+-]{1,200}:\d{1,6}: )?([^\n]{1,200})"
)
_BARE_MESSAGES = frozenset({"rccl"})
_MIN_BARE_MESSAGE = 30


@dataclass(frozen=True)
class Code:
    family: str
    name: str
    value: int
    meaning: str
    message: str = ""
    alias_of: str = ""

    @property
    def harmless(self) -> bool:
        return self.name in NOT_FAILURES


@dataclass(frozen=True)
class Family:
    id: str
    type: str
    title: str
    category: str
    prefix: str
    hex: bool
    next_step: str
    report: str
    sources: tuple[str, ...]


@dataclass(frozen=True)
class Codes:
    families: dict[str, Family]
    by_name: dict[str, Code]
    by_hex: dict[int, Code] = field(default_factory=dict)
    by_message: dict[str, Code] = field(default_factory=dict)
    names: re.Pattern[str] = field(default=re.compile(r"(?!)"))
    hex_re: re.Pattern[str] = field(default=re.compile(r"(?!)"))
    messages: re.Pattern[str] = field(default=re.compile(r"(?!)"))
    # literals a line must contain to be worth looking at (the matcher's scan finds them)
    anchor_runs: tuple[tuple[str, ...], ...] = ()

    def __hash__(self) -> int:
        return id(self)

    def described(self, code: Code) -> Code:
        """An alias (HIP's deprecated names) with its target's meaning and message."""
        target = self.by_name.get(code.alias_of) if code.alias_of else None
        if target is None:
            return code
        return Code(code.family, code.name, code.value, code.meaning or target.meaning,
                    code.message or target.message, code.alias_of)  # fmt: skip


@dataclass(frozen=True)
class Hit:
    code: Code
    line: int  # 1-based
    evidence: str
    how: str  # "name", "message" or "hex"


def parse_codes(document: Any) -> Codes:
    if not isinstance(document, dict) or document.get("schema") != SCHEMA:
        raise ValueError(f"kb_codes: the document must have schema: {SCHEMA}")
    families: dict[str, Family] = {}
    by_name: dict[str, Code] = {}
    by_hex: dict[int, Code] = {}
    by_message: dict[str, Code] = {}
    message_parts: list[str] = []
    for raw in document["families"]:
        fam = Family(
            id=raw["id"], type=raw["type"], title=raw["title"], category=raw["category"],
            prefix=raw["prefix"], hex=bool(raw.get("hex")), next_step=raw["next_step"],
            report=raw["report"], sources=tuple(s["url"] for s in raw["sources"]),
        )  # fmt: skip
        families[fam.id] = fam
        for c in raw["codes"]:
            code = Code(fam.id, c["name"], int(c["value"]), c.get("meaning", ""),
                        c.get("message", ""), c.get("alias_of", ""))  # fmt: skip
            if code.value == 0:  # success is not worth a line
                continue
            by_name[code.name] = code
            if fam.hex and not code.alias_of:
                by_hex.setdefault(code.value, code)
            if code.message and not code.alias_of:
                if fam.id == "hip":
                    by_message.setdefault(code.message, code)
                elif fam.id in _BARE_MESSAGES and len(code.message) >= _MIN_BARE_MESSAGE:
                    by_message.setdefault(code.message, code)
                    message_parts.append(re.escape(code.message))
    prefixes = sorted({f.prefix for f in families.values()}, key=len, reverse=True)
    # no leading \b: an alternation of literals lets the engine skip in C (checked after)
    names = re.compile("(?:" + "|".join(re.escape(p) for p in prefixes) + r")\w+")
    hex_values = "|".join(f"{v:x}" for v in sorted(by_hex, reverse=True))
    hex_re = re.compile(
        r"(?:HSA|hsa|ROCr|rocr)[^\n]{0,200}?\b0x0*(" + hex_values + r")\b" if hex_values else "(?!)"
    )
    messages = re.compile("|".join(sorted(message_parts, key=len, reverse=True)) or "(?!)")
    runs = [(p,) for p in prefixes] + [(m,) for m in by_message if _is_bare(m, by_message)]
    runs += [(p,) for p in _LINE_MARKS]
    return Codes(families, by_name, by_hex, by_message, names, hex_re, messages, tuple(runs))


# what the HIP-message and HSA-hex forms need on their line (see _PREFIXED and hex_re)
_LINE_MARKS = ("HIP error", "hip error", "ROCm error", "CUDA error",
               "HSA ", "HSA_", "HSA:", "hsa_", "hsa ", "ROCr", "rocr")  # fmt: skip


def _is_bare(message: str, by_message: dict[str, Code]) -> bool:
    return by_message[message].family in _BARE_MESSAGES


@lru_cache(maxsize=1)
def load_codes() -> Codes:
    text = resources.files("rocmprov.data").joinpath("kb_codes.yaml").read_text(encoding="utf-8")
    return parse_codes(load_yaml(text))


def _line_of(text: str, pos: int, cache: list[int]) -> tuple[int, str]:
    """(1-based line number, the line) of position `pos`; `cache` = [last pos, last line]."""
    last_pos, last_line = cache
    if pos >= last_pos:
        number = last_line + text.count("\n", last_pos, pos)
    else:
        number = 1 + text.count("\n", 0, pos)
    cache[0], cache[1] = pos, number
    start = text.rfind("\n", 0, pos) + 1
    end = text.find("\n", pos)
    return number, text[start : len(text) if end < 0 else end]


def find_lines(
    lines: list[tuple[int, str]], codes: Codes | None = None,
    skip: Callable[[int, str], bool] | None = None,
) -> tuple[list[Hit], list[str]]:  # fmt: skip
    """`find` on the given (line number, line) pairs only: the lines the matcher's scan found a
    code's literal on. A code that `skip(line number, name)` says is explained on its line is
    passed over there: its first line elsewhere is its hit."""
    codes = codes or load_codes()
    hits: dict[str, Hit] = {}
    unknown: list[str] = []
    for number, line in sorted(lines):
        found, names = find(line, codes)
        for hit in found:
            if hit.code.name not in hits and not (skip and skip(number, hit.code.name)):
                hits[hit.code.name] = Hit(hit.code, number, hit.evidence, hit.how)
        unknown += [n for n in names if n not in unknown][: max(0, 20 - len(unknown))]
    return sorted(hits.values(), key=lambda h: (h.line, h.code.name)), unknown


def find(text: str, codes: Codes | None = None) -> tuple[list[Hit], list[str]]:
    """(codes found, each once with its first line; names that carry a family's prefix but are
    no code of it, e.g. a function name: they only hint at the family)."""
    codes = codes or load_codes()
    hits: dict[str, Hit] = {}
    unknown: list[str] = []
    passes = (("name", codes.names), ("message", _PREFIXED), ("message", codes.messages),
              ("hex", codes.hex_re))  # fmt: skip
    for how, regex in passes:
        cache = [0, 1]
        for m in regex.finditer(text):
            start = m.start()
            if start and (text[start - 1].isalnum() or text[start - 1] == "_"):
                continue  # inside a longer word
            if how == "name":
                code = codes.by_name.get(m.group())
                if code is None:
                    if len(unknown) < 20 and m.group() not in unknown:
                        unknown.append(m.group())
                    continue
            elif how == "message":
                body = m.group(1) if m.groups() else m.group()
                code = codes.by_message.get(body.strip().rstrip(".").strip())
            else:
                code = codes.by_hex.get(int(m.group(1), 16))
            if code is None or code.name in hits:
                continue
            number, line = _line_of(text, m.start(), cache)
            hits[code.name] = Hit(codes.described(code), number, line.rstrip("\r"), how)
    return sorted(hits.values(), key=lambda h: (h.line, h.code.name)), unknown
