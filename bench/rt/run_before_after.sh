#!/usr/bin/env bash
# Two chorus binaries side by side (a change's cost: the agreement check, the runtime's
# redesign): chorus bench on BACKEND (shm, gloo or mpi; shm and gloo under chorus launch, mpi
# under mpirun), 2 ranks, OPS at SIZES, ITERS timed iterations per run, the binary BEFORE (built
# from main) and AFTER alternated in one run, ROUNDS times each (which goes first alternates too,
# so neither binary always runs second); the table gives the median over the rounds of each run's
# mean time per operation (and of its fastest iteration).
# Usage: bench/rt/run_before_after.sh BEFORE_CHORUS AFTER_CHORUS [BACKEND] [ROUNDS] [ITERS] [OPS] [SIZES]
#        (default shm, 21, 300, allreduce,broadcast,allgather, 8,64,512,4096)
set -euo pipefail
BEFORE=$1
AFTER=$2
BACKEND=${3:-shm}
ROUNDS=${4:-21}
ITERS=${5:-300}
OPS=${6:-allreduce,broadcast,allgather}
SIZES=${7:-8,64,512,4096}
launch() {
  if [ "$BACKEND" = mpi ]; then
    OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun --oversubscribe -n 2 "$@"
  else
    "$AFTER" launch -n 2 -- "$@"
  fi
}
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
echo "# $BACKEND; machine: $(nproc) cpus, $(lscpu | sed -n 's/^Model name: *//p'), $(date -u '+%F %H:%M') UTC, $(uptime | sed 's/.*load/load/')"
for round in $(seq "$ROUNDS"); do
  order="before after"
  [ $((round % 2)) = 0 ] && order="after before"
  for which in $order; do
    bin=$BEFORE
    [ "$which" = after ] && bin=$AFTER
    launch "$bin" bench --backends "$BACKEND" --ops "$OPS" --sizes "$SIZES" \
      --iters "$ITERS" --warmup 30 --json > "$OUT/$which.$round.json"
  done
done
echo "# end: $(uptime | sed 's/.*load/load/')"
python3 - "$OUT" "$ROUNDS" <<'PY'
import json, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
t = {}  # (which, op, bytes) -> [(mean, min)]
for which in ("before", "after"):
    for r in range(1, rounds + 1):
        for row in json.load(open(f"{out}/{which}.{r}.json")):
            t.setdefault((which, row["op"], row["bytes"]), []).append((row["mean_us"], row["min_us"]))
med = lambda k, i: statistics.median(x[i] for x in t[k])
print(f"\nmedian over {rounds} alternated runs of the mean us per operation (fastest iteration in brackets)\n")
print("| op | bytes | before | after | after / before |")
print("| --- | ---: | ---: | ---: | ---: |")
for op, b in sorted({(k[1], k[2]) for k in t}, key=lambda x: (x[0], x[1])):
    bef, aft = ("before", op, b), ("after", op, b)
    print(f"| {op} | {b} | {med(bef, 0):.2f} ({med(bef, 1):.2f}) | {med(aft, 0):.2f} ({med(aft, 1):.2f}) | {med(aft, 0) / med(bef, 0):.3f} |")
PY
