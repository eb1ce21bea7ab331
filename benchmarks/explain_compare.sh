#!/usr/bin/env bash
# Time explain's matcher of two trees on the same bytes, alternating (not a test; docs/benchmarks.md).
#
#   git archive <base-commit> rocmprov benchmarks tests/fixtures/kb tests/fixtures/kb-wordings \
#       tests/growth.py | tar -x -C /tmp/base
#   bash benchmarks/explain_compare.sh /tmp/base [ROUNDS]
#
# Writes one 20 MB log with this tree's explain_bench.py, then for each round and each tree:
# the log's MB/s (CPU), the 4 MiB one-line case, and 15 lines of 8,000 characters of "ROCm "
# before one ONNX Runtime provider line (a window whose multi-line pattern never completes).
set -euo pipefail
BASE=${1:?usage: explain_compare.sh BASE_TREE [ROUNDS]}
ROUNDS=${2:-2}
NEW=$(cd "$(dirname "$0")/.." && pwd)
PY=${PYTHON:-python3}
export PYTHONUNBUFFERED=1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$NEW" && PYTHONPATH="$NEW${PYTHONPATH:+:$PYTHONPATH}" "$PY" benchmarks/explain_bench.py --write-log "$work/log20.txt" --mb 20)
"$PY" -c 'import sys; open(sys.argv[1], "w").write(("ROCm " * 1600 + "\n") * 15 + "Failed to load library libonnxruntime_providers_migraphx.so with error: libcublasLt.so.12: cannot open shared object file\n")' "$work/quad.txt"
for round in $(seq "$ROUNDS"); do
  for side in base new; do
    if [ "$side" = base ]; then D=$BASE; else D=$NEW; fi
    echo "== $side, round $round"
    export PYTHONPATH="$D${EXTRA_PYTHONPATH:+:$EXTRA_PYTHONPATH}"
    (cd "$D" && "$PY" benchmarks/explain_bench.py --log "$work/log20.txt" --runs 3 | tail -1)
    (cd "$D" && "$PY" benchmarks/explain_bench.py --one-line 4 --runs 3 | tail -1)
    (cd "$D" && "$PY" -c '
import sys, time
from rocmprov.kb.matcher import analyse
text = open(sys.argv[1]).read()
analyse("warm up")
start = time.process_time()
analyse(text)
print("15 x 8,000 characters of ROCm, then the provider line:", round(time.process_time() - start, 3), "s CPU")
' "$work/quad.txt")
  done
done
