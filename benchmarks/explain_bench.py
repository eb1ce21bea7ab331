"""Throughput of `rocmprov explain`'s matcher over a 100 MB log (not a timed test).

    python benchmarks/explain_bench.py [--mb 100] [--seed 7] [--error-rate 0.001] [--locale de]
    python benchmarks/explain_bench.py --one-line 4
    python benchmarks/explain_bench.py --dense 120000 [--fixture ID]
    python benchmarks/explain_bench.py --mb 20 --similar
    python benchmarks/explain_bench.py --mb 20 --write-log /tmp/log20.txt   # then, per commit:
    PYTHONPATH=DIR python benchmarks/explain_bench.py --log /tmp/log20.txt --runs 3

Builds a seeded log of benign noise (kernel, systemd, training-loop lines) with real error
lines from tests/fixtures/kb mixed in, then times `match()` over the whole table three times
and prints the median MB/s (`--locale LOC`: with the log's apt, dpkg and loader messages in
LOC, as kb/locale.py's data words them: the cost of putting them back in English).
`--one-line MIB` times `analyse()` (explain's whole pass) on one line of MIB MiB made of every
fixture's first line (issue 28: a 4 MiB line in under 1 s).
`--dense LINES` times `analyse()` on LINES copies of one fixture's first line (by default the
Vulkan "vk::Queue::submit: ErrorDeviceLost" of llm.ggml-vulkan-device-lost-compute-timeout): a
log where every line hits an anchor whose patterns span 9 lines and never complete (round 26:
120,000 lines took 7.9-9.0 s of CPU at bc7614b, 1.8 s after; the best of --runs is the figure
to compare, CPU time: a shared machine's load slows the wall clock only).
`--similar` times the similarity tier (kb/similar.py, what explain adds when no real cause
matched) over the same log as if nothing had matched: the best of --runs, CPU time.
The log is built from tests/fixtures/kb at run time, so two commits with different fixtures
time different logs (a branch that adds fixtures saw 10-30 % "drops" that were only its log).
`--write-log FILE` writes the text the other options would time (the log, the --locale log,
the --one-line line or the --dense log) and exits; `--log FILE` times that file's text instead
of building one, with the timing the other options choose (--one-line/--dense: `analyse()`,
--similar: the similarity tier, else `match()`): run both commits on the same bytes.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from pathlib import Path

from rocmprov.kb import load_table, match
from rocmprov.kb.locale import english
from rocmprov.kb.matcher import analyse
from rocmprov.provision.record import write_private

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "kb"

NOISE = [
    "[{t:12.6f}] usb 1-{n}: new high-speed USB device number {n} using xhci_hcd",
    "[{t:12.6f}] EXT4-fs (nvme0n1p{n}): mounted filesystem with ordered data mode.",
    '[{t:12.6f}] audit: type=1400 audit({t:.3f}:{n}): apparmor="STATUS" operation="load"',
    "[{t:12.6f}] [drm] amdgpu kernel modesetting enabled.",
    "[{t:12.6f}] amdgpu 0000:{n:02x}:00.0: amdgpu: SMU is initialized successfully!",
    "[{t:12.6f}] [drm] Initialized amdgpu 3.57.0 20150101 for 0000:{n:02x}:00.0 on minor {n}",
    "{{'loss': 0.{n}123, 'grad_norm': 1.04939, 'learning_rate': 5.28e-06, 'epoch': 1.{n}}}",
    "INFO {t:.0f} torch.distributed: rank {n} step {n}00 took 0.{n}42s, tokens/s=18{n}3",
    "Nov 10 21:23:{n:02d} node{n} systemd[1]: Started Session {n} of User root.",
    '  File "/usr/lib/python3/dist-packages/torch/nn/modules/module.py", line 1{n}51, in _call',
    'time=2025-03-08T16:42:{n:02d}.674+01:00 level=INFO source=server.go:{n} msg="loaded"',
    "GPU[{n}]\t\t: Temperature (Sensor edge) (C): 3{n}.0",
]


def error_lines() -> list[str]:
    """Every fixture's non-blank lines, less those holding an apt/dpkg/loader message in
    another language: one such line makes `match()` put the whole text in English and scan it
    again (kb/locale.py), which `--locale` measures on its own. Without this, which fixtures
    exist decided whether the English figure paid that second pass (session 28: one Chinese
    "No such file or directory" drawn into the log halved it)."""
    lines: list[str] = []
    for path in sorted(FIXTURES.glob("*.txt")):
        body = path.read_text(encoding="utf-8").partition("\n---\n")[2]
        lines.extend(line for line in body.splitlines() if line.strip() and english(line) == line)
    return lines


def build_log(megabytes: int, seed: int, error_rate: float) -> str:
    rng = random.Random(seed)
    errors = error_lines()
    target = megabytes * 1_000_000
    parts: list[str] = []
    size = 0
    t = 0.0
    while size < target:
        t += rng.random() / 100
        if rng.random() < error_rate:
            line = rng.choice(errors)
        else:
            line = rng.choice(NOISE).format(t=t, n=rng.randrange(10))
        parts.append(line)
        size += len(line) + 1
    return "\n".join(parts) + "\n"


def one_line(mib: float) -> str:
    """Every fixture's first line of over 20 characters (not a URL), joined, repeated to size."""
    firsts = []
    for path in sorted(FIXTURES.glob("*.txt")):
        body = path.read_text(encoding="utf-8").partition("\n---\n")[2]
        firsts.append(next((x for x in body.splitlines() if len(x) > 20 and "://" not in x), ""))
    block = " ".join(firsts)
    size = int(mib * 1024 * 1024)
    return (block * (size // len(block) + 1))[:size]


DENSE = "llm.ggml-vulkan-device-lost-compute-timeout"


def dense_log(lines: int, fixture: str = DENSE) -> str:
    """`lines` copies of the fixture's first line: every line of the log hits its anchor."""
    body = (FIXTURES / f"{fixture}.txt").read_text(encoding="utf-8").partition("\n---\n")[2]
    first = next(line for line in body.splitlines() if line.strip())
    return (first + "\n") * lines


def time_dense(text: str, fixture: str, runs: int) -> int:
    analyse("warm up")
    times, cpu, found = _timed(text, runs)
    print(f"{text.count(chr(10))} lines of {fixture}'s first line, {len(text) / 1e6:.1f} MB")
    print(f"matches: {[(m.id, m.count) for m in found]}")
    print(f"runs (CPU): {', '.join(f'{t:.2f}s' for t in cpu)}")
    print(f"best: {min(cpu):.2f} s CPU, {min(times):.2f} s wall")
    return 0


def _timed(text: str, runs: int) -> tuple[list[float], list[float], list]:
    """Wall and CPU seconds of `runs` calls of analyse(text), and the last call's matches."""
    times, cpu, found = [], [], []
    for _ in range(runs):
        start, start_cpu = time.perf_counter(), time.process_time()
        found = analyse(text).matches
        times.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    return times, cpu, found


def time_one_line(text: str, runs: int) -> int:
    analyse("warm up")
    times, cpu, found = _timed(text, runs)
    print(f"one line of {len(text) / 1024 / 1024:g} MiB, {len(found)} entries found")
    print(f"runs: {', '.join(f'{t:.2f}s' for t in times)}")
    print(f"median: {statistics.median(times):.2f} s wall, {statistics.median(cpu):.2f} s CPU")
    return 0


def time_similar(text: str, runs: int) -> int:
    from rocmprov.kb.similar import informative, similar

    similar("error: warm up the similarity index")
    cpu, near = [], []
    for _ in range(runs):
        start = time.process_time()
        near = similar(text)
        cpu.append(time.process_time() - start)
    print(f"similarity tier: {len(informative(text))} informative lines, similar: "
          f"{[s.id for s in near]}")  # fmt: skip
    print(f"runs (CPU): {', '.join(f'{t:.2f}s' for t in cpu)}; best {min(cpu):.2f} s")
    return 0


def read_log(path: Path) -> str:
    """A log written by --write-log, byte for byte (no newline translation)."""
    with path.open(encoding="utf-8", newline="") as f:
        return f.read()


def write_log(path: Path, text: str) -> None:
    write_private(path, text)  # 0600 from its creation, never through a planted link
    print(f"wrote {len(text.encode('utf-8')) / 1e6:.1f} MB, {text.count(chr(10))} lines to {path}")


def build_text(args: argparse.Namespace) -> str | None:
    """The text the options ask for (None: no wording for --locale)."""
    if args.dense:
        return dense_log(args.dense, args.fixture)
    if args.one_line:
        return one_line(args.one_line)
    text = build_log(args.mb, args.seed, args.error_rate)
    if args.locale:  # as a user of that locale would paste it (the po data read backwards)
        from rocmprov.kb.locale import load_document, localising, translate

        into = localising(load_document(), args.locale)
        if into is None:
            return None
        text = translate(text, into).text
    return text


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=100)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--error-rate", type=float, default=0.001)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--one-line", type=float, metavar="MIB", help="time one line instead")
    parser.add_argument("--dense", type=int, metavar="LINES", help="time a dense log instead")
    parser.add_argument("--fixture", default=DENSE, help="the --dense log's fixture (its id)")
    parser.add_argument("--locale", metavar="LOC", help="apt/dpkg/loader messages in LOC (de)")
    parser.add_argument("--similar", action="store_true", help="time the similarity tier instead")
    parser.add_argument("--write-log", type=Path, metavar="FILE", help="write the text, exit")
    parser.add_argument("--log", type=Path, metavar="FILE", help="time FILE's text instead")
    args = parser.parse_args()
    if args.log and args.write_log:
        parser.error("--log and --write-log: one or the other")
    if args.log and (args.locale or args.mb != 100 or args.seed != 7 or args.error_rate != 0.001):
        parser.error("--log times the file as it is: no --mb, --seed, --error-rate or --locale")
    if args.log and not args.log.is_file():
        parser.error(f"--log {args.log}: no such file")
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    text = read_log(args.log) if args.log else build_text(args)
    if text is None:
        parser.error(f"no wording for locale {args.locale!r}")
    if args.write_log:
        try:
            write_log(args.write_log, text)
        except OSError as e:  # a planted link (not followed), a missing directory
            parser.error(f"--write-log {args.write_log}: {e.strerror}")
        return 0
    if args.dense:
        return time_dense(text, args.fixture if not args.log else str(args.log), args.runs)
    if args.one_line:
        return time_one_line(text, args.runs)
    table = load_table()
    if args.similar:
        return time_similar(text, args.runs)
    size_mb = len(text.encode("utf-8")) / 1e6
    match("warm up the compiled table", table=table)
    times, cpu = [], []
    found = []
    for _ in range(args.runs):
        start, start_cpu = time.perf_counter(), time.process_time()
        found = match(text, table=table)
        times.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    median = statistics.median(times)
    built = f"error-line rate {args.error_rate}" + (f", locale {args.locale}" * bool(args.locale))
    print(
        f"log: {size_mb:.1f} MB, {text.count(chr(10))} lines, {len(table)} entries, "
        + (f"read from {args.log}" if args.log else built)
    )
    print(f"matches: {len(found)} entries, {sum(m.count for m in found)} occurrences")
    print(f"runs: {', '.join(f'{t:.2f}s' for t in times)}")
    print(
        f"median: {size_mb / median:.1f} MB/s wall clock, "
        f"{size_mb / statistics.median(cpu):.1f} MB/s of CPU time (a shared machine's load "
        "slows the wall clock only)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
