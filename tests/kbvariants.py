"""Variants of an entry's own fixture that a user may paste instead (issue 28, item 1).

The same error reaches `explain` with another log prefix (or none), cut to a terminal's width,
wrapped at a terminal's width, logged as one JSON string, quoted, indented or with a web page's
spacing (no-break spaces, runs of spaces), with a web page's typography (curly quotes, "--" as
an en dash; HTML escapes when copied from a page's source), with a terminal's colour codes (and
with their ESC lost, as a paste often shows them), or with other values where the fixture has one
machine's: another gfx target, PCI address,
ROCm or package version, user's home, process id or address, or with the matched line's own
program prefix cut (an issue title quoting "Could not initialize Tensile library" without
"rocBLAS error: "; `program_prefix_cut` says when). An entry whose pattern fails on such a
variant hard-codes a varying value or requires optional context.

    variants(text, anchors, matched) -> [(name, variant text)]   # only those that change it

Pure; used by tests/test_kb_hygiene.py.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator

# log prefixes, stripped repeatedly from the start of each line (most specific first)
_PREFIXES = [
    r"\[\s*\d+\.\d+\]\s?",  # dmesg: [   12.345678]
    r"[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \S+ [\w\-./@]+(?:\[\d+\])?: ",  # syslog / journal
    r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?:? ?",  # ISO time
    r"\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)? ",  # vLLM: 12-04 01:42:07
    r"\((?:[\w]+ )*pid=\d+\) ",  # (VllmWorker rank=0 pid=12) (RayWorker pid=12)
    r"\[(?:INFO|WARNING|WARN|ERROR|DEBUG|CRITICAL|FATAL)\] ?",
    r"(?:INFO|WARNING|WARN|ERROR|DEBUG|CRITICAL|FATAL)(?::| \[[\w.]+:\d+\]) ?",
    r"\[pid \d+\] ",
    r"\[\d{2,7}\] ",  # [12345]
]
_PREFIX_RE = re.compile("(?:" + "|".join(_PREFIXES) + ")")

ADDED = {
    "dmesg": "[ 4242.424242] ",
    "journal": "Dec  4 01:42:07 node17 kernel: ",
    "iso-level": "2026-12-04T01:42:07.123Z ERROR ",
    "pid": "(pid=48213) ",
    "dmesg-T": "[Fri Dec  4 01:42:07 2026] ",
    "journal-iso": "2026-12-04T01:42:07+0000 node17 kernel: ",  # journalctl -o short-iso
    "journal-precise": "Dec 04 01:42:07.123456 node17 kernel: ",  # -o short-precise
    "rank": "[rank0]: ",  # torchrun
    "role": "[trainer0]: ",  # torchrun, another role's name
    "compose": "ollama-1  | ",  # docker compose logs
    "compose-name": "ollama  | ",  # docker compose, a service with its own container_name
    "kubectl": "[pod/vllm-0/vllm] ",  # kubectl logs --prefix
}


def _lines(text: str, change: Callable[[str], str]) -> str:
    return "\n".join(change(line) for line in text.split("\n"))


def strip_prefixes(text: str) -> str:
    def strip(line: str) -> str:
        while True:
            m = _PREFIX_RE.match(line)
            if m is None or not m.group():
                return line
            line = line[m.end() :]

    return _lines(text, strip)


def add_prefix(text: str, prefix: str) -> str:
    return _lines(text, lambda line: prefix + line if line.strip() else line)


def truncate(text: str, width: int) -> str:
    return _lines(text, lambda line: line[:width])


def reflow(text: str, width: int) -> str:
    """Every line longer than `width` cut into pieces of `width` (as a terminal wraps it)."""

    def wrap(line: str) -> str:
        return "\n".join(line[i : i + width] for i in range(0, max(len(line), 1), width))

    return _lines(text, wrap)


# varying values: (regex, replacement); each replacement differs from anything it replaces
_GFX = {"gfx900": "gfx906", "gfx906": "gfx908", "gfx908": "gfx90a", "gfx90a": "gfx942",
        "gfx942": "gfx950", "gfx950": "gfx942", "gfx1030": "gfx1031", "gfx1031": "gfx1032",
        "gfx1032": "gfx1030", "gfx1100": "gfx1101", "gfx1101": "gfx1102", "gfx1102": "gfx1100",
        "gfx1103": "gfx1150", "gfx1150": "gfx1151", "gfx1151": "gfx1103", "gfx1200": "gfx1201",
        "gfx1201": "gfx1200", "gfx803": "gfx900", "gfx1010": "gfx1012", "gfx1012": "gfx1010",
        "gfx1035": "gfx1036", "gfx1036": "gfx1035"}  # fmt: skip


def _other_digits(m: re.Match[str]) -> str:
    """The same shape with other digits (4 -> 5, 9 -> 1)."""
    return "".join(str((int(c) + 1) % 10) if c.isdigit() else c for c in m.group())


def _other_hex(m: re.Match[str]) -> str:
    table = str.maketrans("0123456789abcdefABCDEF", "123456789abcdef0BCDEF0")
    return m.group()[:2] + m.group()[2:].translate(table)


_VALUES: list[tuple[str, re.Pattern[str], Callable[[re.Match[str]], str]]] = [
    ("gfx", re.compile(r"\bgfx\d{3,4}[a-f]?\b"), lambda m: _GFX.get(m.group(), "gfx1030")),
    ("pci", re.compile(r"\b[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]\b"),
     lambda m: "0000:c3:00.0" if m.group() != "0000:c3:00.0" else "0000:03:00.0"),
    ("rocm-path", re.compile(r"/opt/rocm-\d+\.\d+\.\d+"), lambda m: _other_digits(m)),
    ("version", re.compile(r"(?<![\w.])\d+\.\d+\.\d+(?:[.-]\d+)*(?![\w.])"), _other_digits),
    ("home", re.compile(r"/home/[\w.-]+"), lambda m: "/home/someone.else"),
    ("address", re.compile(r"\b0x[0-9a-fA-F]{8,16}\b"), _other_hex),
    ("pid", re.compile(r"(?<=pid[= ])\d+|(?<=PID )\d+|(?<=process )\d+"), _other_digits),
]  # fmt: skip


def other_values(text: str, keep: tuple[str, ...] = ()) -> Iterator[tuple[str, str]]:
    """`text` with each kind of varying value changed. A value inside one of `keep` (an entry's
    anchors) is the message's point, not a varying value: gfx1036 in "rocBLAS looked for the
    kernels of gfx1036" names the Ryzen iGPU, gfx000 the CPU agent; it stays."""

    def change_unless_kept(change: Callable[[re.Match[str]], str]) -> Callable[..., str]:
        def kept(value: str) -> bool:  # an anchor may be a suffix of the value ("fx1036")
            return any(value in k or (len(k) >= 4 and k in value) for k in keep)

        return lambda m: m.group() if kept(m.group()) else change(m)

    for name, regex, change in _VALUES:
        changed = regex.sub(change_unless_kept(change), text)
        if changed != text:
            yield name, changed


def smart_quotes(line: str) -> str:
    """Straight quotes as a blog or forum renders them (SmartyPants, WordPress's wptexturize):
    an opening one after a space or bracket, a closing one elsewhere; "--" as an en dash."""
    line = line.replace("--", "\u2013")
    line = re.sub(r"(^|[\s(\[{])'", "\\1\u2018", line).replace("'", "\u2019")
    return re.sub(r'(^|[\s(\[{])"', "\\1\u201c", line).replace('"', "\u201d")


def coloured(line: str, esc: str = "\x1b") -> str:
    """A line as a coloured terminal prints it: its first word bold red, the rest reset."""
    head, sep, rest = line.partition(" ")
    return f"{esc}[1;31m{head}{esc}[0m{sep}{rest}" if head else line


def html_escaped(line: str) -> str:
    return (line.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace('"', "&quot;").replace("'", "&#39;"))  # fmt: skip


# Tails that any program prints (strerror, the dynamic loader, a shell, Windows): a tail made of
# one of these and a name is not specific without the head that says which program failed.
GENERIC_TAILS = re.compile(
    r"No such file or directory|Permission denied|No space left on device|Operation not permitted"
    r"|Address family not supported by protocol|Input/output error|Cannot allocate memory"
    r"|Device or resource busy|Invalid argument|Connection refused|Connection timed out"
    r"|No such device|File exists|Not a directory|Is a directory|command not found"
    r"|cannot open shared object file|error while loading shared libraries|Syntax error"
    r"|The system cannot find the (?:file|path) specified|\[WinError \d+\]|No module named",
    re.I,
)
_LETTER_WORD = re.compile(r"[A-Za-z]+(?:['-][A-Za-z]+)*")
_HEAD_TOKEN = re.compile(r"[\w.+=()\[\]*#@:-]+")


def program_prefix_cut(line: str) -> str | None:
    """`line` without its program's prefix, as a user quotes the message ("Could not initialize
    Tensile library" for "rocBLAS error: Could not initialize Tensile library", "probe of
    0000:e3:00.0 failed with error -22" for "amdgpu: probe of ..."), or None when the rule
    says the cut is not one a user makes or leaves nothing specific. The rule:

    - the line is cut at its first ": "; the head (before it, leading spaces, quote marks and
      backticks dropped) is a program's, a logger's or a device's prefix: 1 to 3 tokens, each
      name-like (``rocBLAS error``, ``kfd kfd``, ``amdgpu 0000:03:00.0``, ``LLVM ERROR``,
      ``triton.runtime.errors.OutOfResources``, ``E``), not ending in a space (apt's
      ``" pkg : Depends: ..."`` and aligned fields ``GPU[0]    : ``), holding no path (``/``,
      ``\\``) and no ``file.ext:line`` location (a path or a compiler's location is what the
      message is about: ``x.deb: 2: Syntax error``, ``hipsparse.h:8741:28: error: expected``);
      its tokens are names (letters, digits, ``._-+=:()[]*#@``), the first with a letter, the
      last not a bare number (``Device 1: AMD Radeon ...`` is a numbered field, not a prefix);
    - the tail (after ": ") is specific: at least 4 words of letters (2 letters or more; a
      path, a number, a hex value or an ``UPPER_CASE_NAME`` is not a word) once any generic
      OS tail (GENERIC_TAILS: strerror texts, the dynamic loader's, a shell's, Windows') is
      taken out: "No such file or directory at /usr/bin/hipcc line 592." leaves 2 words,
      "group 'render' does not exist" has 5.
    """
    head, sep, tail = line.partition(": ")
    head = head.lstrip(" \t>`'\"")
    tokens = head.split()
    if not sep or not 1 <= len(tokens) <= 3 or head != head.rstrip():
        return None
    if any(not _HEAD_TOKEN.fullmatch(t) for t in tokens) or not re.search("[A-Za-z]", tokens[0]):
        return None
    if re.search(r"\.\w+:\d", head) or tokens[-1].isdigit():
        return None
    words = [
        w
        for token in GENERIC_TAILS.sub(" ", tail).split()
        if "/" not in token and "\\" not in token
        for w in [token.strip("'\"`\u2018\u2019\u201c\u201d,.;:!?()[]{}")]
        if len(w) >= 2 and _LETTER_WORD.fullmatch(w)
    ]
    return tail if len(words) >= 4 else None


# What people blank out before posting: an address, a key id, a long number (a job id, a
# serial, a timestamp), each as a placeholder people write (rocmprov/kb/redact.py's forms).
_ADDRESS = re.compile(r"\b0x[0-9a-fA-F]{6,}\b")
_KEY_ID = re.compile(r"\b(?=[0-9A-F]*[A-F])(?=[0-9A-F]*\d)[0-9A-F]{16}\b")
_LONG_NUMBER = re.compile(r"(?<![\w.:/-])\d{7,}(?![\w.:/-])")


def redacted(text: str) -> str:
    """`text` with its addresses as `0x...`, its 16-digit key ids as `[key]` and its numbers
    of 7 digits or more as `XXXXXXX` (what a user blanks out before posting a log)."""
    text = _ADDRESS.sub("0x...", text)
    text = _KEY_ID.sub("[key]", text)
    return _LONG_NUMBER.sub("XXXXXXX", text)


def variants(text: str, anchors: tuple[str, ...] = (), matched: int = 0) -> list[tuple[str, str]]:
    """The variants of `text` that change it. A line cut at a terminal's width is one only when
    every one of `anchors` (the literals the entry's patterns are found by) found in the text
    survives the cut: what is cut off is what follows the message's distinctive words.
    `matched` (1-based, 0: none) is the first line the entry matched: its program's prefix
    is cut when `program_prefix_cut` allows ("program-prefix-cut")."""
    out: list[tuple[str, str]] = []
    bare = strip_prefixes(text)
    if bare != text:
        out.append(("prefix-stripped", bare))
    bare_lines = bare.split("\n")
    if 0 < matched <= len(bare_lines):
        tail = program_prefix_cut(bare_lines[matched - 1])
        if tail is not None:
            cut_lines = [*bare_lines[: matched - 1], tail, *bare_lines[matched:]]
            out.append(("program-prefix-cut", "\n".join(cut_lines)))
    for name, prefix in ADDED.items():
        out.append((f"prefix-{name}", add_prefix(bare, prefix)))
    present = [a for a in anchors if a in bare]
    for width in (120, 80):
        wrapped = reflow(text, width)
        if wrapped != text:
            out.append((f"reflowed-{width}", wrapped))
    for width in (120, 80):
        cut = truncate(bare, width)
        if cut != bare and present and all(a in cut for a in present):
            out.append((f"truncated-{width}", cut))
    out.extend((f"value-{name}", changed) for name, changed in other_values(text, anchors))
    blanked = redacted(bare)
    if blanked != bare:
        out.append(("redacted", blanked))
    # logged as one JSON string (docker's json-file, a structured logger)
    out.append(("json-escaped", '{"log": ' + json.dumps(bare) + "}"))
    # pasted into a quoted reply, a Markdown code block, or copied from a web page or chat
    out.append(("quoted", add_prefix(bare, "> ")))
    out.append(("indented", add_prefix(bare, "    ")))
    out.append(
        (
            "web-spacing",
            _lines(bare, lambda line: line.replace(" ", "\u00a0", 3).replace(" ", "  ")),
        )
    )
    typed = [("web-typography", smart_quotes), ("html-escaped", html_escaped),
             ("terminal-colour", coloured), ("terminal-colour-no-esc", lambda x: coloured(x, ""))]
    for name, change in typed:  # fmt: skip
        changed = _lines(bare, change)
        if changed != bare:
            out.append((name, changed))
    return out
