"""locales.json: the localised wordings of the apt, dpkg and glibc messages the table's patterns
read, taken from the programs' own translations (their po/*.po files at pinned commits), for
kb/locale.py to put the English message back before matching. Regenerate with

    python -m rocmprov.kb.localefile apt-2.4=DIR apt=DIR dpkg-1.21=DIR dpkg=DIR \\
        glibc-2.35=DIR glibc=DIR > rocmprov/data/kb/locales.json

where each DIR holds the po/<locale>.po files of that program version at the commit named in
SOURCES (e.g. `git -C MIRROR show COMMIT:po/de.po > DIR/de.po` for each locale in LOCALES).
Two versions per program: the one Ubuntu 22.04 ships (its wordings are the ones most pasted)
and the newest, whose translators reworded some messages.

Rules (tests/test_kb_locale.py checks them on a small po sample and that the packaged file
holds exactly the msgids of RULES):
- Only the msgids of RULES: each is a message (or a line of one) a pattern of the table reads.
- A fuzzy, empty, plural or context-bound entry, and a msgstr equal to its msgid, is left out.
- A msgid of several lines is one phrase per line when its msgstr has as many lines, each
  line's placeholders its own (a line of text never becomes two, nor two one); a msgstr with
  another count of lines is left out (kb/locale.py never adds or removes a line).
- A msgstr must use the msgid's placeholders (%s, %d, %1$s...), each once: else it is left out.
- Ambiguity: a phrase without context (RULES' `before`/`after`) whose msgstr holds fewer than
  MIN_LETTERS letters (a wide CJK, kana or Hangul one counts two; a short word such as "Fehler"
  or "不符") is left out for that locale;
  short messages (apt's dependency type "Depends", glibc's strerror texts) are in RULES with
  the literal text that surrounds them in the program's output, and are translated only there.
  Likewise a phrase without context whose fixed text is one word of a spaced script (Turkish
  "%s alinamadi %s", dotless i's, for "Failed to fetch %s  %s": any line with that word
  between two others would become apt's message) is left out for that locale, not given
  context: apt prints that message after "E: ", "W: " or "Err:" and URLs of no one shape.
"""

from __future__ import annotations

import ast
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from unicodedata import east_asian_width

from rocmprov.kb.locale import PLACEHOLDER

SCHEMA = "rocmprov.kb.locales/1"
LOCALES = ("de", "fr", "es", "it", "pt_BR", "pl", "cs", "tr", "ru", "zh_CN", "ja", "ko")
MIN_LETTERS = 8


@dataclass(frozen=True)
class Source:
    """One program version: its GitHub mirror and the commit whose po/ files were read."""

    program: str
    repo: str
    commit: str

    def url(self, locale: str) -> str:
        return f"https://github.com/{self.repo}/blob/{self.commit}/po/{locale}.po"


SOURCES = (
    Source("apt-2.4", "Debian/apt", "c37792be25062eaa1c1631d10ddecca7c56ac450"),  # tag 2.4.13
    Source("apt", "Debian/apt", "6b128124271e94bdb0f4e7850d9286170d712b04"),
    Source("dpkg-1.21", "guillemj/dpkg", "48482e4f16467e05a08aa3b3b8048e08f0024609"),  # 1.21.22
    Source("dpkg", "guillemj/dpkg", "c5efef926d16a72fd9270c8efceeba8872419292"),
    Source("glibc-2.35", "bminor/glibc", "f94f6d8a3572840d3ba42ab9ace3ea522c99c0c2"),
    Source("glibc", "bminor/glibc", "04e750e75b73957cf1c791535a3f4319534a52fc"),
)


@dataclass(frozen=True)
class Rule:
    """A msgid the table needs; `before`/`after`: the literal text around it in the program's
    output, required around the localised phrase too (empty: a whole message, no context)."""

    program: str  # apt, dpkg or glibc (every version of it)
    msgid: str
    before: str = ""
    after: str = ""


_ERRNO = ": "  # perror/strerror output: "name: message"
# apt's second and later dependency lines of a package are indented under its name (the name's
# length + 4 spaces, then "Depends: "): apt-private/private-output.cc, ShowBroken,
# https://github.com/Debian/apt/blob/c37792be25062eaa1c1631d10ddecca7c56ac450/apt-private/private-output.cc#L384-L396
_INDENT = "    "
RULES = (
    # apt: the dependency lines ("rocm-dev : Depends: x but it is not installable") and errors
    Rule("apt", "Depends", before=" : ", after=": "),
    Rule("apt", "Depends", before=_INDENT, after=": "),
    Rule("apt", "but it is not installable"),
    Rule("apt", "but it is not going to be installed"),
    Rule("apt", "but %s is to be installed"),
    Rule("apt", "but %s is installed"),
    Rule("apt", "Unable to locate package %s"),
    Rule("apt", "The following packages have unmet dependencies:"),
    Rule("apt", "Unable to correct problems, you have held broken packages."),
    Rule("apt", "Unmet dependencies. Try 'apt --fix-broken install' with no packages "
         "(or specify a solution)."),
    Rule("apt", "The following signatures were invalid:\n"),
    Rule("apt", "The repository '%s' is not signed."),
    Rule("apt", "The repository '%s' does not have a Release file."),
    Rule("apt", "Failed to fetch %s  %s"),
    Rule("apt", "Hash Sum mismatch"),
    Rule("apt", "Could not get lock %s. It is held by process %d (%s)"),
    Rule("apt", "Could not get lock %s. It is held by process %d"),
    Rule("apt", "Could not get lock %s"),
    Rule("apt", "Sub-process %s returned an error code (%u)"),
    Rule("apt", "Unable to acquire the dpkg frontend lock (%s), are you root?"),
    Rule("apt", "Unable to lock the administration directory (%s), are you root?"),
    Rule("apt", "Unable to acquire the dpkg frontend lock (%s), is another process using it?"),
    Rule("apt", "Unable to lock the administration directory (%s), is another process using "
         "it?"),
    Rule("apt", "Release file for %s is not valid yet (invalid for another %s). Updates for "
         "this repository will not be applied."),
    # dpkg
    Rule("dpkg", "error processing package %s (--%s):\n %s\n"),
    Rule("dpkg", "error processing package %s (--%s):\n %s"),
    Rule("dpkg", "error processing archive %s (--%s):\n %s\n"),
    Rule("dpkg", "error processing archive %s (--%s):\n %s"),
    Rule("dpkg", "trying to overwrite '%.250s', which is also in package %.250s %.250s"),
    Rule("dpkg", "trying to overwrite '%s', which is also in package %s (%s)"),
    Rule("dpkg", "dependency problems - leaving unconfigured"),
    Rule("dpkg", "dependency problems prevent configuration of %s:\n%s"),
    Rule("dpkg", "Errors were encountered while processing:\n"),
    Rule("dpkg", "%s was locked by another process with pid %d\n%s"),
    # glibc: the dynamic loader and strerror texts (after "name: ")
    Rule("glibc", "error while loading shared libraries"),
    Rule("glibc", "cannot open shared object file"),
    Rule("glibc", "cannot enable executable stack as shared object requires"),
    Rule("glibc", "symbol lookup error"),
    Rule("glibc", "No such file or directory", before=_ERRNO),
    Rule("glibc", "Permission denied", before=_ERRNO),
    Rule("glibc", "Operation not permitted", before=_ERRNO),
    Rule("glibc", "Cannot allocate memory", before=_ERRNO),
    Rule("glibc", "No space left on device", before=_ERRNO),
    Rule("glibc", "Invalid argument", before=_ERRNO),
    Rule("glibc", "Resource temporarily unavailable", before=_ERRNO),
    Rule("glibc", "Read-only file system", before=_ERRNO),
    Rule("glibc", "Exec format error", before=_ERRNO),
)


def parse_po(text: str) -> dict[str, str]:
    """msgid -> msgstr of a po file's translated entries (no fuzzy, plural, context or empty
    one)."""
    out: dict[str, str] = {}
    entry: dict[str, str] = {}
    key = ""
    fuzzy = False

    def flush() -> None:
        nonlocal fuzzy
        ok = not fuzzy and "msgid_plural" not in entry and "msgctxt" not in entry
        if ok and entry.get("msgid") and entry.get("msgstr"):
            out[entry["msgid"]] = entry["msgstr"]
        entry.clear()
        fuzzy = False

    for line in text.splitlines():
        line = line.strip()
        if not line:
            flush()
            key = ""
        elif line.startswith("#,"):
            fuzzy = fuzzy or "fuzzy" in line
        elif line.startswith("#"):
            continue
        elif line.startswith('"') and key:
            entry[key] += ast.literal_eval(line)
        else:
            word, _, rest = line.partition(" ")
            if word == "msgid" and "msgstr" in entry:
                flush()
            key = word
            entry[key] = ast.literal_eval(rest.strip()) if rest.strip().startswith('"') else ""
    flush()
    return out


def _args(fmt: str) -> list[int] | None:
    """The argument index of each placeholder of `fmt`, in order; None when mixed or repeated."""
    found = [m.group(1) for m in PLACEHOLDER.finditer(fmt)]
    if all(n is None for n in found):
        return list(range(len(found)))
    if any(n is None for n in found):
        return None
    indexes = [int(n) - 1 for n in found if n is not None]
    return indexes if len(set(indexes)) == len(indexes) else None


def _letters(text: str) -> int:
    """Letters of `text` outside its placeholders; a wide (CJK, kana, Hangul) one counts two:
    "无法定位软件包" says as much as a German sentence."""
    return sum(2 if east_asian_width(ch) in "WF" else 1
               for ch in PLACEHOLDER.sub("", text) if ch.isalpha())  # fmt: skip


def _one_word(text: str) -> bool:
    """The fixed text of `text` is one word of a spaced script (Turkish "%s alinamadi %s"); a
    CJK or kana sentence, written without spaces, is not."""
    words = [w for w in PLACEHOLDER.sub(" ", text).split() if any(ch.isalpha() for ch in w)]
    return len(words) == 1 and not any(east_asian_width(ch) in "WF" for ch in words[0])


def pieces(rule: Rule, msgstr: str) -> list[tuple[str, str]] | None:
    """(English line, localised line) pairs of one translation of `rule`, or None when the rules
    leave it out (see the module's docstring)."""
    english, local = rule.msgid.rstrip("\n"), msgstr.rstrip("\n")
    if local == english or english.count("\n") != local.count("\n"):
        return None
    pairs = list(zip(english.split("\n"), local.split("\n"), strict=True))
    several = len(pairs) > 1
    for en, lo in pairs:
        want, got = _args(en), _args(lo)
        if want is None or got is None or sorted(want) != sorted(got):
            return None
        if several and any(m.group(1) for m in PLACEHOLDER.finditer(lo)):
            return None  # a line's own placeholders only
    kept = [(en, lo) for en, lo in pairs if _letters(en) and en != lo]
    if not rule.before and not rule.after and any(
        _letters(lo) < MIN_LETTERS or _one_word(lo) for _, lo in kept
    ):
        return None
    return kept or None


def build(pos: dict[str, dict[str, str]]) -> dict[str, Any]:
    """locales.json from `pos`: program version (SOURCES' `program`) -> locale -> po text."""
    phrases: dict[tuple[str, str, str], dict[str, list[str]]] = {}
    programs = []
    for source in SOURCES:
        files = pos.get(source.program, {})
        programs.append({"program": source.program, "repo": source.repo, "commit": source.commit,
                         "po": source.url("{locale}"),
                         "locales": [loc for loc in LOCALES if loc in files]})  # fmt: skip
        base = source.program.partition("-")[0]
        for locale in LOCALES:
            if locale not in files:
                continue
            table = parse_po(files[locale])
            for rule in RULES:
                if rule.program != base or rule.msgid not in table:
                    continue
                for en, lo in pieces(rule, table[rule.msgid]) or []:
                    wordings = phrases.setdefault((en, rule.before, rule.after), {})
                    if lo not in wordings.setdefault(locale, []):
                        wordings[locale].append(lo)
    return {
        "schema": SCHEMA,
        "sources": programs,
        "phrases": [
            {"english": en, "before": before, "after": after,
             "locales": {loc: wordings[loc] for loc in LOCALES if loc in wordings}}
            for (en, before, after), wordings in sorted(phrases.items())
        ],
    }  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    known = {s.program for s in SOURCES}
    pos: dict[str, dict[str, str]] = {}
    for arg in args:
        program, sep, folder = arg.partition("=")
        if not sep or program not in known:
            print(f"usage: PROGRAM=DIR with PROGRAM one of {sorted(known)}", file=sys.stderr)
            return 64
        pos[program] = {
            loc: (Path(folder) / f"{loc}.po").read_text(encoding="utf-8")
            for loc in LOCALES if (Path(folder) / f"{loc}.po").is_file()
        }  # fmt: skip
    print(json.dumps(build(pos), indent=1, ensure_ascii=True))  # ASCII: any locale's stdout
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
