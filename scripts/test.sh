#!/usr/bin/env bash
# Installs dependencies, builds chorus with warnings as errors and runs every test.
#   scripts/test.sh              regular build in build/
#   scripts/test.sh --sanitize   AddressSanitizer + UBSan build in build-asan/
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
BUILD=build
EXTRA=()
if [[ "${1:-}" == "--sanitize" ]]; then
  BUILD=build-asan
  EXTRA=(-DCHORUS_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug)
fi
JOBS=$(nproc)
cmake -S . -B "$BUILD" -DCHORUS_WERROR=ON "${EXTRA[@]}"
cmake --build "$BUILD" -j"$JOBS"
cd "$BUILD"
ctest --output-on-failure -j"$JOBS" --timeout 600
