#!/usr/bin/env bash
# The schedule executor's overhead without emulation (issue 8): a chunked hierarchical
# all-reduce on a 2x2 grid of shm ranks (chorus run collective, baseline schedule, each
# dimension a 2-rank shm group) against one flat shm all-reduce of the same bytes on the same
# 4 ranks (chorus bench --backends shm), interleaved, REPS rounds, 64 MiB of float32. Both are
# means over 10 iterations (the executor: of the slowest rank per iteration).
# Usage: bench/rt/run_executor_overhead.sh [BUILD_DIR] [REPS] [CHUNKS...]   (default build/, 3, "1 4 16")
set -euo pipefail
BUILD=${1:-build}
REPS=${2:-3}
shift $(( $# > 2 ? 2 : $# )) || true
CHUNKS=${*:-1 4 16}
SIZE=64MiB
echo "# machine: $(nproc) cpus, $(lscpu | sed -n 's/^Model name: *//p'), $(date -u +%F)"
for rep in $(seq "$REPS"); do
  echo "# round $rep, $(uptime)"
  flat=$("$BUILD/chorus" launch -n 4 -- "$BUILD/chorus" bench --backends shm --ops allreduce --sizes $SIZE \
    --iters 10 --warmup 2 --json | python3 -c 'import json,sys; r=json.load(sys.stdin)[0]; print(r["mean_us"]*1e3)')
  echo "flat shm all-reduce: $(python3 -c "print(f'{$flat/1e6:.2f}')") ms"
  for c in $CHUNKS; do
    t=$("$BUILD/chorus" launch -n 4 -- "$BUILD/chorus" run collective --grid 2x2 --size $SIZE --chunks "$c" \
      --scheduler baseline --dim-backends shm --iters 10 --warmup 2 --json | python3 -c "import json,sys; t=json.load(sys.stdin)[\"times_ns\"]; print(sum(t)/len(t))")
    echo "2x2 executor, $c chunks: $(python3 -c "print(f'{$t/1e6:.2f} ms, {$t/$flat:.3f}x flat')")"
  done
done
