#!/usr/bin/env bash
# chorus sweep on one worker, two workers, and two mpirun ranks, in one run: the same 504-point
# spec (examples/sweep/collectives.yaml), each into a fresh database, ROUNDS times alternated;
# prints each configuration's median wall time and whether every run's CSV is identical to the
# first one's. Usage: bench/sweep/run_scaling.sh [BUILD_DIR] [ROUNDS]   (default build/, 3)
set -euo pipefail
BUILD=${1:-build}
ROUNDS=${2:-3}
SPEC=examples/sweep/collectives.yaml
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
echo "# machine: $(nproc) cpus, $(lscpu | sed -n 's/^Model name: *//p'), $(date -u +%F), $(uptime | sed 's/.*load/load/')"
run() {  # name, command...
  local name=$1
  shift
  rm -f "$OUT/$name.db"*
  local t0 t1
  t0=$(date +%s.%N)
  "$@" --db "$OUT/$name.db" --csv "$OUT/$name.csv" > /dev/null
  t1=$(date +%s.%N)
  echo "$name $(echo "$t1 - $t0" | bc)" >> "$OUT/times"
  cmp -s "$OUT/$name.csv" "$OUT/j1.csv" || echo "differs $name" >> "$OUT/times"
}
for _ in $(seq "$ROUNDS"); do
  run j1 "$BUILD/chorus" sweep "$SPEC" -j 1
  run j2 "$BUILD/chorus" sweep "$SPEC" -j 2
  run mpi2 mpirun --oversubscribe -n 2 "$BUILD/chorus" sweep "$SPEC" -j 1
done
python3 - "$OUT/times" <<'PY'
import statistics, sys
t = {}
differs = set()
for line in open(sys.argv[1]):
    f = line.split()
    if f[0] == "differs":
        differs.add(f[1])
    else:
        t.setdefault(f[0], []).append(float(f[1]))
for name, label in (("j1", "1 worker"), ("j2", "2 workers (-j 2)"), ("mpi2", "2 mpirun ranks (-j 1 each)")):
    print(f"{label}: median {statistics.median(t[name]):.2f} s over {len(t[name])} runs")
print("rows identical in every run" if not differs else f"rows differ: {sorted(differs)}")
PY
