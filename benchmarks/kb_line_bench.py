"""CPU time of `rocmprov explain`'s matcher on healthy logs that hold a common phrase, and of
the translation step on a line of near misses (not a timed test).

    python benchmarks/kb_line_bench.py [--mb 4] [--runs 3] [--case NAME ...]

Cases (each --mb MB):
- exited-with-code: "worker 12 exited with code 0" lines; before session 28 the anchor of the
  HIP "DMA buffer failed with code N" line was "with code " and hit every one of them.
- from: pip's "Requirement already satisfied: x in /usr/lib (from y)" lines; the anchor of
  "H(SA|sa) copy from ..." was "from ".
- near-miss-de: one line of apt's German literal " kann nicht gefunden werden." without its
  "Paket", then the message itself: kb/locale.translate (session 28 searches each phrase's
  line on from where it stopped, with no cap on the hits; session 27 gave up after 32).
- near-miss-ko: one line of dpkg's Korean "... 이 파일은 " + 250 spaces, the anchor of "이 파일은
  %s %s 패키지에도 들어있습니다" without the rest: two lazy placeholders a space apart tried
  MAX_ARG ** 2 ways per unit until review 28M F1 made a placeholder before literal text
  possessive.
- localised-line: one line of N German loader messages (N edits of kb/locale's Translation),
  then every table fixture's text (about 800 results on the line; N = 20,000 per 2.1 MB):
  `analyse()`. Each result's evidence is the user's own text of its window: review 28M F2 had
  every result rebuild the English line, search it and walk the edits (18.6 s for 2.1 MB).
Prints the median CPU seconds of --runs runs per case. To compare with a revision, run the
same script with PYTHONPATH set to an export of it (`git archive REV | tar -x -C DIR`).
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

MB = 1_000_000


def _lines(line: str, mb: float) -> str:
    return line * max(1, int(mb * MB) // len(line))


def _exited(mb: float) -> Callable[[], object]:
    from rocmprov.kb.matcher import analyse

    text = _lines("[2026-12-07 03:00:00] worker 12 exited with code 0\n", mb)
    return lambda: analyse(text)


def _from(mb: float) -> Callable[[], object]:
    from rocmprov.kb.matcher import analyse

    text = _lines("Requirement already satisfied: numpy in /usr/lib/python3/dist-packages "
                  "(from torch==2.4.0)\n", mb)  # fmt: skip
    return lambda: analyse(text)


def _near_miss(mb: float) -> Callable[[], object]:
    from rocmprov.kb.locale import translate

    unit = " kann nicht gefunden werden."
    text = (unit * (int(mb * MB) // len(unit))) + " E: Paket rocm kann nicht gefunden werden."
    return lambda: translate(text)


def _near_miss_ko(mb: float) -> Callable[[], object]:
    from rocmprov.kb.locale import translate

    unit = "'x'의 덮어쓰기를 시도합니다. 이 파일은 " + " " * 250
    text = unit * (int(mb * MB) // len(unit))
    return lambda: translate(text)


def _localised_line(mb: float) -> Callable[[], object]:
    from pathlib import Path

    from rocmprov.kb.matcher import analyse

    fixtures = sorted((Path(__file__).resolve().parents[1] / "tests/fixtures/kb").glob("*.txt"))
    body = " ".join(p.read_text(encoding="utf-8").partition("\n---\n")[2].replace("\n", " ")
                    for p in fixtures)  # fmt: skip
    loader = "libx.so: Kann die Shared-Object-Datei nicht öffnen: Datei oder Verzeichnis nicht " \
             "gefunden "  # fmt: skip
    text = loader * max(1, (int(mb * MB) - len(body)) // len(loader)) + body
    return lambda: analyse(text)


CASES = {"exited-with-code": _exited, "from": _from, "near-miss-de": _near_miss,
         "near-miss-ko": _near_miss_ko, "localised-line": _localised_line}  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=4.0)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--case", action="append", choices=sorted(CASES))
    args = parser.parse_args()
    for name in args.case or list(CASES):
        run = CASES[name](args.mb)
        run()  # warm: the table and the phrases are loaded once
        times = []
        for _ in range(args.runs):
            t0 = time.process_time()
            run()
            times.append(time.process_time() - t0)
        print(f"{name:18} {args.mb:g} MB  median {statistics.median(times):.3f} s CPU  "
              f"(runs: {', '.join(f'{t:.3f}' for t in times)})")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
