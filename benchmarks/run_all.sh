#!/usr/bin/env bash
# Run every benchmark in one go and write benchmarks/results/RESULTS.md (see docs/benchmarks.md).
#
#   sudo -E env PATH="$PATH" bash benchmarks/run_all.sh           # full: N = 10/50/100, 4/16
#   sudo -E env PATH="$PATH" bash benchmarks/run_all.sh --quick   # small N, fewer runs (~10 min)
#
# Needs: root (the lab), the lab prepared once (sudo bash tests/lab/prepare.sh), rocmprov
# installed in the python on PATH (or PYTHON=/path/to/venv/bin/python), pdsh and hyperfine
# (apt-get install -y pdsh hyperfine; without them pdsh is skipped and start-up uses a loop).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
OUT=${OUT:-benchmarks/results}
mkdir -p "$OUT"
QUICK=0
[ "${1:-}" = "--quick" ] && QUICK=1

if ! "$PY" -c 'import rocmprov' 2>/dev/null; then
  echo "run_all: $PY cannot import rocmprov (activate the venv or set PYTHON=)" >&2
  exit 64
fi
export PATH="$(dirname "$("$PY" -c 'import sys; print(sys.executable)')"):$PATH"

if [ "$QUICK" = 1 ]; then
  FLEET=(--sizes 4,20 --runs 3 --ansible-runs 2)
  SCALE=(--sizes 100,500 --pdsh-sizes 100,500 --ansible-sizes 100)
  APPLY=(--sizes 4 --runs 2)
  EXPLAIN=(--mb 20 --runs 3)
  START=(--runs 10)
else
  FLEET=(--sizes 10,50,100 --runs 5 --ansible-runs 3)
  SCALE=(--sizes 100,500,1000,2000 --pdsh-sizes 100,500,1000,2000 --ansible-sizes 100)
  APPLY=(--sizes 4,16 --runs 3)
  EXPLAIN=(--mb 100 --runs 3)
  START=(--runs 20)
fi

echo "== start-up" >&2
"$PY" benchmarks/startup.py "${START[@]}" --out "$OUT"
echo "== explain matcher throughput" >&2
"$PY" benchmarks/explain_bench.py "${EXPLAIN[@]}" | tee "$OUT/explain.txt"
echo "== fleet audit" >&2
"$PY" benchmarks/fleet_audit.py "${FLEET[@]}" --out "$OUT"
echo "== fleet audit at scale (asyncssh loopback hosts; pip install '.[bench]')" >&2
if "$PY" -c 'import asyncssh' 2>/dev/null; then
  "$PY" benchmarks/fleet_scale.py "${SCALE[@]}" --out "$OUT" | tee "$OUT/fleet_scale.txt"
else
  echo "run_all: asyncssh missing: fleet_scale skipped (pip install '.[bench]')" >&2
fi
echo "== re-apply" >&2
"$PY" benchmarks/reapply.py "${APPLY[@]}" --out "$OUT" || echo "run_all: reapply failed (see above)" >&2
"$PY" benchmarks/report.py --results "$OUT" > "$OUT/RESULTS.md"
cat "$OUT/RESULTS.md"
