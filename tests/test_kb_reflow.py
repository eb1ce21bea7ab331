"""Text as a terminal or a web page mangled it is put back before matching (kb/reflow.py)."""

from __future__ import annotations

from rocmprov.kb.matcher import analyse
from rocmprov.kb.reflow import loosen, plain_marks, plain_spacing, unescape, unwrap

# the message starts at column 70: a terminal 80 columns wide cuts it in two
ERROR = "p" * 70 + "hipErrorNoBinaryForGpu: Unable to find code object for all current devices!"


def _wrap(line: str, width: int) -> str:
    return "\n".join(line[i : i + width] for i in range(0, len(line), width))


def test_unwrap_joins_runs_of_exact_width_and_maps_line_numbers() -> None:
    text = "first line\n" + _wrap("x" * 200 + " end", 80) + "\nlast line"
    joined, starts = unwrap(text)
    assert joined.split("\n") == ["first line", "x" * 200 + " end", "last line"]
    assert list(starts) == [1, 2, 5]


def test_unwrap_leaves_unwrapped_text_alone() -> None:
    text = "short\n" + "y" * 79 + "\nz"
    joined, starts = unwrap(text)
    assert joined == text and not starts


def test_an_error_wrapped_at_80_columns_is_found_on_its_first_line() -> None:
    text = "python train.py\n" + _wrap(ERROR, 80) + "\nAborted (core dumped)\n"
    found = {m.id: m for m in analyse(text).matches}
    assert "hip.no-binary-for-gpu" not in {m.id for m in analyse(_wrap(ERROR, 100)[:80]).matches}
    hit = found["hip.no-binary-for-gpu"]
    assert hit.lines == (2,) and ERROR in hit.evidence[0]


# ---------------------------------------------------------------- a web page's or a reply's spacing


def test_plain_spacing_makes_every_run_of_spaces_one_and_drops_quotes_and_indentation() -> None:
    text = "> > HIP\u00a0error:\t invalid  device\u2009function\n    at line\n>>> prompt stays\n"
    assert plain_spacing(text) == "HIP error: invalid device function\nat line\n>>> prompt stays\n"


def test_loosen_unwraps_a_quoted_paste_at_the_terminal_width_without_its_quote_marks() -> None:
    quoted = "\n".join("> " + piece for piece in _wrap(ERROR, 80).split("\n"))
    (loose, starts), *_ = loosen("run\n" + quoted + "\n")
    assert loose.split("\n")[1] == ERROR and list(starts) == [1, 2, 4]
    assert loosen("plain text\n") == []


def test_loosen_also_unwraps_a_quote_wrapped_with_its_marks() -> None:
    ways = loosen(_wrap("> " + ERROR, 80) + "\n")
    assert any(loose == ERROR + "\n" and starts[0] == 1 for loose, starts in ways)


def test_an_error_pasted_with_a_web_pages_spacing_is_found_on_its_own_line() -> None:
    text = "step 1\n>  RuntimeError:\u00a0HIP\u00a0error:  invalid device function\n"
    (hit,) = [m for m in analyse(text).matches if m.id == "hip.invalid-device-function"]
    assert hit.lines == (2,)
    assert analyse("step 1\n", codes=True).matches == []


def test_unescape_puts_back_a_message_logged_as_an_escaped_string() -> None:
    text = 'start\n{"log": "HIP error: x\\nnext \\"q\\" C:\\\\new \\u2018y\\u2019"}\nend'
    put_back, lines = unescape(text)
    assert put_back == 'start\n{"log": "HIP error: x\nnext "q" C:\\new \u2018y\u2019"}\nend'
    assert list(lines) == [1, 2, 2, 3]
    same, none = unescape("no escaped newline \\t here\n")
    assert same == "no escaped newline \\t here\n" and not none


def test_an_escaped_emoji_is_one_character_and_a_lone_surrogate_is_replaced() -> None:
    """json.dumps writes an emoji as a surrogate pair (\\ud83d\\ude80); two lone surrogates in
    the evidence could not be printed (explain crashed with exit 3)."""
    put_back, _ = unescape('{"log": "\\ud83d\\ude80 start\\nbad \\ud800 end"}')
    assert put_back == '{"log": "\U0001f680 start\nbad \ufffd end"}'
    text = '{"log": "\\ud83d\\ude80 x\\nRuntimeError: HIP error: invalid device function\\n"}\n'
    found = analyse(text).matches
    assert found[0].id == "hip.invalid-device-function"
    for evidence in found[0].evidence:
        evidence.encode("utf-8")  # printable


def test_an_error_in_a_json_log_line_is_found_on_that_line() -> None:
    text = (
        'boot\n{"log":"Traceback (most recent call last):\\n'
        'RuntimeError: HIP error: invalid device function\\n"}\n'
    )
    (hit,) = [m for m in analyse(text).matches if m.id == "hip.invalid-device-function"]
    assert hit.lines == (2,)


def test_a_harmless_line_found_by_the_second_pass_does_not_hide_a_code_on_the_same_line() -> None:
    text = (
        '{"log":"hsa_queue_create failed with HSA_STATUS_ERROR_INVALID_QUEUE_CREATION\\n'
        'rocr: Use of non-host\\tsignal in host signal wait API"}\n'
    )
    ids = [m.id for m in analyse(text).matches]
    assert "code.hsa.HSA_STATUS_ERROR_INVALID_QUEUE_CREATION" in ids, ids


def test_evidence_of_the_second_pass_names_each_original_line_once() -> None:
    message = "HIP\u00a0error: invalid device function"  # a no-break space: the first pass misses
    text = '{"log":"' + message + "\\n" + message + '"}\n'
    (hit,) = [m for m in analyse(text).matches if m.id == "hip.invalid-device-function"]
    assert hit.lines == (1,) and len(hit.evidence) == 1


def test_plain_marks_puts_back_what_a_page_or_a_terminal_changed_and_keeps_the_lines() -> None:
    # typography as WordPress's wptexturize and SmartyPants write it, HTML escapes, and a
    # terminal's SGR colour codes, with and without their ESC byte
    text = (
        "\x1b[1;31mE:\x1b[0m Unable to locate package \u201crocm\u201d\n"
        "[1;31mERROR:[0m don\u2019t use \u2013force\u2026\n"
        "&quot;hip&quot; &lt;x&gt; &amp; &#39;y&#39; &#10;"
    )
    assert plain_marks(text) == (
        'E: Unable to locate package "rocm"\n'
        "ERROR: don't use --force...\n"
        "\"hip\" <x> & 'y' &#10;"  # an escaped line break stays escaped: lines do not move
    )
    assert plain_marks("[drm] plain text [0] a[i]") == "[drm] plain text [0] a[i]"
    # one unescape, as a browser does: an escaped escape stays an escape
    assert plain_marks("&amp;lt; &amp;#39; &#8217;s &copy;") == "&lt; &#39; 's \u00a9"
    # numeric escapes as a browser reads them: 128-159 as Windows-1252 (old forum pages write
    # quotes and dashes so), a surrogate, zero or out-of-range one as U+FFFD
    assert plain_marks("&#x41;&#66; &#146;yaml&#146; &#150;x &#xD800;&#0;") == (
        "AB 'yaml' --x \ufffd\ufffd"
    )


def test_an_error_copied_from_a_rendered_page_or_a_coloured_terminal_is_found() -> None:
    plain = "E: Unable to locate package rocm-hip-sdk"
    expected = analyse(plain).matches[0].id
    for text in (
        "\x1b[1;31mE:\x1b[0m Unable to locate package rocm-hip-sdk",
        "[1;31mE:[0m Unable to locate package rocm-hip-sdk",
    ):
        assert analyse(text).matches[0].id == expected, text
    quoted = "ModuleNotFoundError: No module named \u2018amdsmi\u2019"
    assert analyse(quoted).matches[0].id == analyse(quoted.replace("\u2018", "'").replace(
        "\u2019", "'")).matches[0].id
