"""CPU time of `rocmprov explain`'s matcher on healthy logs that hold a common phrase, and of
the translation step on a line of near misses (not a timed test).

    python benchmarks/kb_line_bench.py [--mb 4] [--runs 3] [--case NAME ...]
    python benchmarks/kb_line_bench.py --case localised-line --write-log /tmp/line.txt
    PYTHONPATH=DIR python benchmarks/kb_line_bench.py --case localised-line --log /tmp/line.txt

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
localised-line is built from tests/fixtures/kb, so two commits with different fixtures time
different text: `--write-log FILE` (one --case) writes the case's text and exits, `--log FILE`
(one --case) times that file's text instead of building one; the other cases are the same
text on any commit.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from pathlib import Path

from rocmprov.provision.record import write_private

MB = 1_000_000


def _lines(line: str, mb: float) -> str:
    return line * max(1, int(mb * MB) // len(line))


def _analyse(text: str) -> Callable[[], object]:
    from rocmprov.kb.matcher import analyse

    return lambda: analyse(text)


def _translate(text: str) -> Callable[[], object]:
    from rocmprov.kb.locale import translate

    return lambda: translate(text)


def _exited(mb: float) -> str:
    return _lines("[2026-12-07 03:00:00] worker 12 exited with code 0\n", mb)


def _from(mb: float) -> str:
    return _lines("Requirement already satisfied: numpy in /usr/lib/python3/dist-packages "
                  "(from torch==2.4.0)\n", mb)  # fmt: skip


def _near_miss(mb: float) -> str:
    unit = " kann nicht gefunden werden."
    return (unit * (int(mb * MB) // len(unit))) + " E: Paket rocm kann nicht gefunden werden."


def _near_miss_ko(mb: float) -> str:
    unit = "'x'의 덮어쓰기를 시도합니다. 이 파일은 " + " " * 250
    return unit * (int(mb * MB) // len(unit))


def _localised_line(mb: float) -> str:
    fixtures = sorted((Path(__file__).resolve().parents[1] / "tests/fixtures/kb").glob("*.txt"))
    body = " ".join(p.read_text(encoding="utf-8").partition("\n---\n")[2].replace("\n", " ")
                    for p in fixtures)  # fmt: skip
    loader = "libx.so: Kann die Shared-Object-Datei nicht öffnen: Datei oder Verzeichnis nicht " \
             "gefunden "  # fmt: skip
    return loader * max(1, (int(mb * MB) - len(body)) // len(loader)) + body


# a case: the text it times (built for --mb MB) and what it times on that text
CASES: dict[str, tuple[Callable[[float], str], Callable[[str], Callable[[], object]]]] = {
    "exited-with-code": (_exited, _analyse), "from": (_from, _analyse),
    "near-miss-de": (_near_miss, _translate), "near-miss-ko": (_near_miss_ko, _translate),
    "localised-line": (_localised_line, _analyse),
}  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=4.0)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--case", action="append", choices=sorted(CASES))
    parser.add_argument("--write-log", type=Path, metavar="FILE", help="write the text, exit")
    parser.add_argument("--log", type=Path, metavar="FILE", help="time FILE's text instead")
    args = parser.parse_args()
    if (args.log or args.write_log) and len(args.case or []) != 1:
        parser.error("--log and --write-log take one --case")
    if args.write_log:
        text = CASES[args.case[0]][0](args.mb)
        try:  # 0600 from its creation, never through a link
            write_private(args.write_log, text)
        except OSError as e:
            parser.error(f"--write-log {args.write_log}: {e.strerror}")
        print(f"wrote {len(text.encode('utf-8')) / MB:.1f} MB to {args.write_log}")
        return 0
    for name in args.case or list(CASES):
        build, timed = CASES[name]
        if args.log:
            with args.log.open(encoding="utf-8", newline="") as f:
                text = f.read()
        else:
            text = build(args.mb)
        run = timed(text)
        run()  # warm: the table and the phrases are loaded once
        times = []
        for _ in range(args.runs):
            t0 = time.process_time()
            run()
            times.append(time.process_time() - t0)
        size = len(text.encode("utf-8")) / MB
        print(f"{name:18} {size:.1f} MB  median {statistics.median(times):.3f} s CPU  "
              f"(runs: {', '.join(f'{t:.3f}' for t in times)})")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
