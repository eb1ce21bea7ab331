"""Review 27 L (kb/locale.py): the longer message wins even where its anchor lies later on the
line (F1), also when the tests render English into a locale (F2), and a leading one-word
argument never takes the line's first word (F7). Session 28: apt's indented dependency lines
(F5) and a long localised line's evidence window (F3); F6 is in test_kb_locale/test_kb_linear."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

import pytest

from rocmprov.kb import match
from rocmprov.kb.locale import _split, localising, phrases_from, translate
from rocmprov.kb.localefile import Rule, pieces
from rocmprov.kb.matcher import analyse

DOCUMENT = json.loads(
    resources.files("rocmprov.data.kb").joinpath("locales.json").read_text("utf-8")
)
CASES = [(p, loc, w) for p in DOCUMENT["phrases"] for loc, ws in p["locales"].items() for w in ws]
HELD = "Could not get lock %s. It is held by process %d (%s)"
FRONT = "Unable to acquire the dpkg frontend lock (%s), is another process using it?"
ARGS = {HELD: ["/var/lib/dpkg/lock-frontend", "1234", "unattended-upgr"],
        FRONT: ["/var/lib/dpkg/lock-frontend"]}  # fmt: skip


def _filled(fmt: str, args: list[str] | None = None) -> str:
    return "".join(
        p if isinstance(p, str) else (args[p] if args else f"/var/lib/a{p}") for p in _split(fmt)
    )


def _wordings(english: str, locale: str) -> list[str]:
    return [w for p in DOCUMENT["phrases"] if p["english"] == english
            for w in p["locales"].get(locale, [])]  # fmt: skip


@pytest.mark.parametrize(
    "phrase,loc,wording", CASES, ids=[f"{c[1]}:{c[0]['english'][:30]}" for c in CASES]
)
def test_each_wording_round_trips_to_its_own_msgid(
    phrase: dict[str, Any], loc: str, wording: str
) -> None:
    """The reviewer's test: every po wording, whole with its rule's context after 'E: ', comes
    back as exactly its own msgid line (13 of 514 did not: a shorter phrase sharing its start
    took the line, or a leading argument took 'E:')."""
    line = "E: " + phrase["before"] + _filled(wording) + phrase["after"] + "Z"
    want = "E: " + phrase["before"] + _filled(phrase["english"]) + phrase["after"] + "Z"
    assert translate(line).text == want


def test_apts_french_lock_error_is_answered_by_the_lock_entry() -> None:
    """apt's two-line lock error in French, each line apt's own fr msgstr (locales.json, from
    apt's po/fr.po at the pinned commit) with the arguments of the English report in place: no
    entry answered it before (the shorter 'Could not get lock %s' took both lines)."""
    held, front = _wordings(HELD, "fr"), _wordings(FRONT, "fr")
    assert held == ["Impossible d'obtenir le verrou %s. Il est occupé par le processus %d (%s)"]
    assert front == [
        "Impossible d'obtenir le verrou de dpkg (%s). Il est possible qu'un autre processus "
        "l'utilise."
    ]
    text = f"E: {_filled(held[0], ARGS[HELD])}\nE: {_filled(front[0], ARGS[FRONT])}\n"
    assert translate(text).text == (
        f"E: {_filled(HELD, ARGS[HELD])}\nE: {_filled(FRONT, ARGS[FRONT])}\n"
    )
    found = match(text)
    assert found and found[0].id == "apt.dpkg-frontend-lock-held", [m.id for m in found[:3]]


@pytest.mark.parametrize("locale", ["fr", "pt_BR", "pl", "tr", "zh_CN"])
def test_localising_renders_the_longest_message_whole(locale: str) -> None:
    """The tests' and the benchmark's rendering into a locale takes the longer message too: no
    English is left of apt's lock lines (it rendered 'Impossible d'obtenir le verrou
    /var/lib/dpkg/lock-frontend. It is held by process 1234 (unattended-upgr)')."""
    phrases = localising(DOCUMENT, locale)
    assert phrases is not None
    for english in (HELD, FRONT):
        line = "E: " + _filled(english, ARGS[english])
        want = ["E: " + _filled(w, ARGS[english]) for w in _wordings(english, locale)]
        assert want and translate(line, phrases).text in want


def test_a_leading_word_argument_before_another_never_takes_the_lines_first_word() -> None:
    """dpkg's Turkish overwrite message starts '%2$s %3$s paketinde ...': both leading
    arguments are one word each, so 'E:' before them stays where it is."""
    local = _wordings("trying to overwrite '%.250s', which is also in package %.250s %.250s", "tr")
    assert local and local[0].startswith("%2$")
    line = "E: " + _filled(local[0], ["/opt/rocm/lib/x.so", "rocm-core", "6.1.0"]) + "Z"
    assert translate(line).text == (
        "E: trying to overwrite '/opt/rocm/lib/x.so', which is also in package rocm-core 6.1.0Z"
    )


def test_among_the_phrases_found_at_one_hit_the_one_with_more_literal_text_wins() -> None:
    """Two phrases with one anchor ('(Dep '), neither extending the other (one has context
    before it): the whole message with more literal text is taken, not the shorter one."""
    doc = {"phrases": [
        {"english": "SHORT %s", "before": "(", "after": "", "locales": {"xx": ["Dep %s"]}},
        {"english": "LONG %s", "before": "", "after": "", "locales": {"xx": ["(Dep %s)"]}},
    ]}  # fmt: skip
    assert translate("x (Dep 1)\n", phrases_from(doc)).text == "x LONG 1\n"


def test_explains_similarity_tier_reads_the_analysis_english_without_translating_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """analyse puts the text in English once and carries it (Analysis.english); explain's
    similarity tier reads that, not a second translate() of the whole text (review 27 L F4)."""
    import rocmprov.kb.locale as locale
    from rocmprov.commands import explain

    german = "libfoo.so.1: Kann die Shared-Object-Datei nicht öffnen: Datei oder Verzeichnis "
    german += "nicht gefunden\n"
    analysis = analyse(german)
    assert analysis.english == (
        "libfoo.so.1: cannot open shared object file: No such file or directory\n"
    )
    assert analyse("libfoo.so.1: cannot open shared object file\n").english is None

    def refuse(*_: object) -> None:
        raise AssertionError("translated a second time")

    monkeypatch.setattr(locale, "translate", refuse)
    near = explain._similar(german, analysis)
    assert near and [s.id for s in near] == [
        s.id for s in explain._similar(analysis.english, analyse(analysis.english))
    ]


def test_a_phrase_whose_fixed_text_is_one_word_is_left_out() -> None:
    """Turkish 'Failed to fetch %s  %s' is '%s alinamadi %s' (dotless i's): any line with that
    word between two others would be read as apt's message, so the generator leaves it out
    (its rules); an unspaced CJK sentence of one token stays."""
    rule = Rule("apt", "Failed to fetch %s  %s")
    assert pieces(rule, "%s al\u0131namad\u0131 %s") is None
    assert pieces(rule, "无法下载 %s  %s") == [("Failed to fetch %s  %s", "无法下载 %s  %s")]
    line = "W: paket al\u0131namad\u0131 tekrar deneyin\n"
    assert translate(line).text == line
    assert "tr" not in next(p for p in DOCUMENT["phrases"]
                            if p["english"] == "Failed to fetch %s  %s")["locales"]  # fmt: skip


# --- session 28 (F5): apt's indented dependency lines -----------------------------------------

# apt's unmet-dependency block as apt-private/private-output.cc (ShowBroken) lays it out: the
# second and later "Depends" lines of a package are indented to its name's length + 4 spaces
_BLOCK = (
    "Die folgenden Pakete haben unerfüllte Abhängigkeiten:\n"
    " rocm-dev : {dep}: hip-base ist aber nicht installierbar\n"
    "            {dep}: hipcc ist aber nicht installierbar\n"
    "            {dep}: rocm-cmake ist aber nicht installierbar\n"
)


@pytest.mark.parametrize("locale,word", [("de", "Hängt ab von"), ("fr", "Dépend"),
                                         ("ja", "依存"), ("ru", "Зависит")])  # fmt: skip
def test_the_indented_dependency_lines_are_put_back_in_english_too(locale: str, word: str) -> None:
    result = translate(_BLOCK.format(dep=word))
    lines = result.text.splitlines()
    assert lines[1].startswith(" rocm-dev : Depends: hip-base")
    assert lines[2] == "            Depends: hipcc" + lines[2].partition("hipcc")[2]
    assert lines[3].startswith("            Depends: rocm-cmake")
    assert sorted(result.lines) == [1, 2, 3, 4]  # the header is German in each


def test_the_dependency_word_alone_or_without_its_colon_is_left_as_it_is() -> None:
    for text in ("    Hängt ab von dem Wetter", "Hängt ab von: x", "    依存する"):
        assert translate(text).text == text


# --- session 28 (F3): a long localised line's evidence is the window around its message ------

_LOADER = "libamdhip64.so.6: Kann die Shared-Object-Datei nicht öffnen: Datei oder Verzeichnis " \
          "nicht gefunden"  # fmt: skip


@pytest.mark.parametrize("before", ["y" * 5000, "E: Paket rocm kann nicht gefunden werden. " * 150
                                    + "y" * 5000])  # fmt: skip
def test_a_long_localised_lines_evidence_is_the_window_around_its_message(before: str) -> None:
    """As an English line's (kb/scan.py: from _LEAD characters before the match), not its
    first MAX_LINE characters; messages put back earlier on the line shift nothing."""
    line = before + " " + _LOADER + " tail"
    found = analyse("first\n" + line + "\n").matches
    hit = next(m for m in found if m.id == "hip.libamdhip64-missing")
    at = line.index(_LOADER) - 100
    assert hit.lines == (2,) and hit.evidence == (line[at : at + 4000],)
    assert hit.english[0].startswith("y" * 99 + " libamdhip64.so.6: cannot open shared object")


def test_the_user_offset_of_an_english_reading_skips_each_message_put_back() -> None:
    result = translate("#1 E: Paket x kann nicht gefunden werden. #2 E: Paket yy kann nicht "
                       "gefunden werden. #3")  # fmt: skip
    english = result.english_line(1)
    assert english == result.text
    own = result.lines[1]
    for mark in ("#1", "#2", "#3"):
        at = result.own_offset(1, english.index(mark))
        assert own[at : at + 2] == mark
    assert result.own_offset(1, english.index("package yy")) == own.index("Paket yy")


def test_the_window_is_the_users_text_of_the_span_the_english_one_shows() -> None:
    """The message lies within the English line's first MAX_LINE characters (so that is its
    evidence) but past them in the user's longer German: the user's text of that same span, cut
    at the matched message's end (review 28M F3: not past MAX_LINE unless the match is)."""
    unit = "libx.so: Kann die Shared-Object-Datei nicht öffnen: Datei oder Verzeichnis nicht " \
           "gefunden; "  # fmt: skip
    line = unit * 50 + _LOADER + " " + "z" * 2000
    assert line.index(_LOADER) > 4000
    hit = next(m for m in analyse("first\n" + line + "\n").matches
               if m.id == "hip.libamdhip64-missing")  # fmt: skip
    assert len(hit.english[0]) == 4003 and hit.english[0].startswith("libx.so: cannot open")
    (evidence,) = hit.evidence
    matched = _LOADER.partition(": Datei")[0]  # the pattern's match ends there
    assert evidence.startswith(unit) and evidence.endswith(matched + "...")
    assert line.startswith(evidence[:-3]) and len(evidence) > 4003
