#!/usr/bin/env bash
# Installs dependencies, builds chorus with warnings as errors and runs every test:
# first the regular build (build/), then the AddressSanitizer + UBSan build (build-asan/).
#   scripts/test.sh              both builds, all tests (what CI runs)
#   scripts/test.sh --regular    only the regular build
#   scripts/test.sh --sanitize   only the sanitizer build
set -euo pipefail
cd "$(dirname "$0")/.."
MODE="${1:-all}"
case "$MODE" in
  all|--regular|--sanitize) ;;
  *) echo "usage: scripts/test.sh [--regular|--sanitize]" >&2; exit 2 ;;
esac
bash scripts/install-deps.sh
JOBS=$(nproc)

run_suite() {  # build-dir, extra cmake args...
  local dir="$1"; shift
  echo "=== $dir: configure, build, test ==="
  cmake -S . -B "$dir" -DCHORUS_WERROR=ON "$@"
  cmake --build "$dir" -j"$JOBS"
  (cd "$dir" && ctest --output-on-failure -j"$JOBS" --timeout 900)
}

if [[ "$MODE" != "--sanitize" ]]; then
  run_suite build
fi
if [[ "$MODE" != "--regular" ]]; then
  run_suite build-asan -DCHORUS_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug
fi
