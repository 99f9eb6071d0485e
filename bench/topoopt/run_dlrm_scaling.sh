#!/usr/bin/env bash
# One DLRM iteration on TopoOpt's fabric (degree 8, batch tolerance 1e-3: the point `chorus
# reproduce topoopt` runs) from 128 to 4,096 servers, two builds side by side
# (BENCHMARKS-history.md "Re-fill only what the departures reach"). Per server count and build,
# alternated: the process's wall time, CPU time (user + system) and peak RSS (/usr/bin/time -v),
# the simulation's own wall time (bench_flow_model's wall_s: TopologyFinder and the flow-level
# run), the flows, the iteration time and the re-filled flows. On a shared machine the CPU time
# varies less. The two builds must agree on the iteration time. 4,096 servers is not in the
# default list: it needs about 14 GB and 10-15 min per build (docs/topoopt.md, "Scope and speed").
# Usage: bench/topoopt/run_dlrm_scaling.sh BEFORE AFTER [servers...]   (default 128 256 512 1024 2048)
#   BEFORE, AFTER: bench_flow_model binaries (e.g. a copy of the old build/bench/bench_flow_model).
#   ROUNDS=n (environment, default 1) repeats every pair.
#   The same binary as BEFORE and AFTER runs one build twice per size (BENCHMARKS.md's dlrm-1024 row).
set -euo pipefail
if [ $# -lt 2 ]; then
  sed -n '2,13p' "$0"
  exit 2
fi
BEFORE=$1
AFTER=$2
shift 2
SIZES=${*:-128 256 512 1024 2048}
ROUNDS=${ROUNDS:-1}
DIR=$(mktemp -d)
trap 'rm -rf "$DIR"' EXIT
printf '%7s %6s %9s %12s %10s %7s %8s %9s %14s\n' servers build flows iteration_ms process_s cpu_s sim_s peak_MB refilled_flows
for n in $SIZES; do
  for ((r = 1; r <= ROUNDS; ++r)); do
    for build in before after; do
      bin=$BEFORE
      [ "$build" = after ] && bin=$AFTER
      /usr/bin/time -v -o "$DIR/time" "$bin" --degree 8 --tolerance 0.001 --fabrics topoopt-oneshot "$n" >"$DIR/out"
      wall=$(awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, p, ":"); s = 0; for (i = 1; i <= n; ++i) s = s * 60 + p[i]; print s }' "$DIR/time")
      cpu=$(awk -F': ' '/(User|System) time \(seconds\)/ { s += $2 } END { print s }' "$DIR/time")
      kb=$(awk -F': ' '/Maximum resident set size/ { print $2 }' "$DIR/time")
      # CSV: model,servers,degree,tolerance,fabric,flows,reallocations,full,refilled_flows,refilled_bundles,iteration_ms,wall_s,rss
      tail -1 "$DIR/out" | awk -F, -v b="$build" -v w="$wall" -v c="$cpu" -v kb="$kb" \
        '{ printf "%7s %6s %9s %12s %10.2f %7.2f %8s %9.0f %14s\n", $2, b, $6, $11, w, c, $12, kb / 1024, $9 }'
    done
  done
done
