#!/usr/bin/env bash
# Runs every libFuzzer target of a CHORUS_FUZZ build for a bounded time each.
#   tests/fuzz/run_fuzzers.sh BUILD_DIR [SECONDS_PER_TARGET]
# Each starts from its seed corpus and past regressions; inputs it discovers go to a scratch
# directory (the source tree is never written). A crash stops the run with exit 1 and leaves
# the input in BUILD_DIR/fuzz-artifacts/: copy it to tests/fuzz/regressions/<target>/ with the
# fix, so the ordinary builds replay it from then on.
set -euo pipefail
BUILD="${1:?usage: run_fuzzers.sh BUILD_DIR [SECONDS]}"
SECONDS_EACH="${2:-30}"
HERE="$(cd "$(dirname "$0")" && pwd)"
ARTIFACTS="$BUILD/fuzz-artifacts"
mkdir -p "$ARTIFACTS"
status=0
for bin in "$BUILD"/tests/fuzz/fuzz_*; do
  [[ -x "$bin" ]] || continue
  name="$(basename "$bin")"; name="${name#fuzz_}"
  scratch="$(mktemp -d)"
  mkdir -p "$HERE/regressions/$name"
  echo "fuzz: $name for ${SECONDS_EACH}s"
  if ! "$bin" -max_total_time="$SECONDS_EACH" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
      -artifact_prefix="$ARTIFACTS/$name-" "$scratch" "$HERE/corpus/$name" "$HERE/regressions/$name" \
      > "$ARTIFACTS/$name.log" 2>&1; then
    echo "fuzz: $name FAILED; input and log in $ARTIFACTS/"; tail -40 "$ARTIFACTS/$name.log"; status=1
  else
    grep -E "stat::number_of_executed_units|stat::new_units_added" "$ARTIFACTS/$name.log" | tr '\n' ' '; echo
  fi
  rm -rf "$scratch"
done
exit $status
