#!/usr/bin/env bash
# Runs every libFuzzer target of a CHORUS_FUZZ build for a bounded time each.
#   tests/fuzz/run_fuzzers.sh BUILD_DIR [SECONDS_PER_TARGET] [PARALLEL]
# Each starts from its seed corpus and past regressions; inputs it discovers go to a scratch
# directory (the source tree is never written). A fuzzer is one process on one core, so PARALLEL
# of them (default: one per core) run at once, each for its full time. A crash fails the run
# (exit 1) and leaves the input in BUILD_DIR/fuzz-artifacts/: copy it to
# tests/fuzz/regressions/<target>/ with the fix, so the ordinary builds replay it from then on.
set -euo pipefail
BUILD="${1:?usage: run_fuzzers.sh BUILD_DIR [SECONDS] [PARALLEL]}"
SECONDS_EACH="${2:-30}"
PARALLEL="${3:-$(nproc)}"
HERE="$(cd "$(dirname "$0")" && pwd)"
ARTIFACTS="$BUILD/fuzz-artifacts"
mkdir -p "$ARTIFACTS"

# One target: its verdict and statistics on one line, exit 1 on a crash.
fuzz_one() {
  local bin="$1" name scratch
  name="$(basename "$bin")"; name="${name#fuzz_}"
  scratch="$(mktemp -d)"
  mkdir -p "$HERE/regressions/$name"
  if "$bin" -max_total_time="$SECONDS_EACH" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
      -artifact_prefix="$ARTIFACTS/$name-" "$scratch" "$HERE/corpus/$name" "$HERE/regressions/$name" \
      > "$ARTIFACTS/$name.log" 2>&1; then
    echo "fuzz: $name ${SECONDS_EACH}s: $(grep -E "stat::number_of_executed_units|stat::new_units_added" "$ARTIFACTS/$name.log" | tr '\n' ' ')"
    rm -rf "$scratch"
  else
    echo "fuzz: $name FAILED; input and log in $ARTIFACTS/"; tail -40 "$ARTIFACTS/$name.log"
    rm -rf "$scratch"
    return 1
  fi
}

# Every target in the sources must have been built: a stage that fuzzed nothing (or fewer targets
# than there are) fails rather than passes.
missing=()
for src in "$HERE"/fuzz_*.cpp; do
  name="$(basename "$src" .cpp)"
  [[ -x "$BUILD/tests/fuzz/$name" ]] || missing+=("$name")
done
if ((${#missing[@]})); then
  echo "fuzz: FAILED: not built in $BUILD/tests/fuzz: ${missing[*]} (configure with -DCHORUS_FUZZ=ON and clang)"
  exit 1
fi

echo "fuzz: every target for ${SECONDS_EACH}s, $PARALLEL at a time"
status=0
running=0
for bin in "$BUILD"/tests/fuzz/fuzz_*; do
  [[ -x "$bin" ]] || continue
  if (( running >= PARALLEL )); then
    wait -n || status=1
    running=$((running - 1))
  fi
  fuzz_one "$bin" &
  running=$((running + 1))
done
while (( running > 0 )); do
  wait -n || status=1
  running=$((running - 1))
done
exit $status
