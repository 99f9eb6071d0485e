#!/usr/bin/env bash
# The flight recorder's cost (docs/flight-recorder.md): what recording adds to one operation
# (bench_flight_recorder: an entry begun and ended, against a ring of capacity 0), then blocking
# all-reduces on shm and gloo with the recorder on and off through two runtimes of each rank in one
# job, alternated round by round on the same processes and CPUs (bench_flight_recorder --job).
#   bench/rt/run_recorder.sh [BUILD_DIR] [ROUNDS] [ITERATIONS]
set -euo pipefail
BUILD="${1:-build}"
ROUNDS="${2:-21}"
ITERS="${3:-5000}"
"$BUILD/bench/rt/bench_flight_recorder"
"$BUILD/chorus" launch -n 2 -- "$BUILD/bench/rt/bench_flight_recorder" --job "$ROUNDS" "$ITERS" 2>/dev/null
