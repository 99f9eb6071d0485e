#!/usr/bin/env bash
# `chorus sim jobs`' cost growth with jobs and servers (issue 34, BENCHMARKS-history.md "sim jobs"):
# ResNet-152 data-parallel jobs placed at random (seed = job number), one iteration each, on a 2:1
# oversubscribed fat-tree; wall time and peak memory of the whole command (the shared run and
# every job alone). Usage: bench/jobs/sim_jobs_growth.sh [CHORUS] [--big]  (--big adds 4,096 servers)
set -euo pipefail
CHORUS=${1:-build/chorus}
BIG=${2:-}
DIR=$(mktemp -d)
trap 'rm -rf "$DIR"' EXIT
CASES="256:4:64 1024:1:256 1024:2:256 1024:4:256 1024:8:128"
[ "$BIG" = "--big" ] && CASES="$CASES 4096:4:1024"
printf '%8s %12s %10s %12s\n' servers jobs_x_npus wall_s peak_MB
for c in $CASES; do
  IFS=: read -r servers jobs npus <<<"$c"
  fabric="$DIR/fat-tree-$servers.yaml"
  [ -f "$fabric" ] || "$CHORUS" topo fabric --fabric oversub-fat-tree --servers "$servers" --degree 1 --bandwidth 100 \
    --save "$fabric" >/dev/null
  mix="$DIR/mix-$c.yaml"
  { echo "fabric: $fabric"; echo "jobs:"
    for ((j = 1; j <= jobs; ++j)); do
      echo "  - {name: r$j, workload: resnet152, npus: $npus, placement: random, seed: $j, iterations: 1}"
    done; } >"$mix"
  /usr/bin/time -f '%e %M' -o "$DIR/time" "$CHORUS" sim jobs "$mix" >/dev/null
  read -r wall kb <"$DIR/time"
  awk -v s="$servers" -v j="${jobs}x$npus" -v w="$wall" -v kb="$kb" 'BEGIN { printf "%8s %12s %10s %12.0f\n", s, j, w, kb / 1024 }'
done
