#!/usr/bin/env bash
# Configures and builds the user's build, build/: what scripts/run.sh makes and what the README's
# commands use, and the configuration the test command's regular stage builds and tests
# (scripts/test.sh adds its tests and -Werror to the same settings, so CI tests what users run).
#   scripts/build.sh                        the targets the README uses
#   scripts/build.sh all -D...              every target (scripts/test.sh), extra CMake arguments
set -euo pipefail
cd "$(dirname "$0")/.."
TARGETS="${1:-user}"
shift || true
# RelWithDebInfo (-O2) with line tables only (-g1: file:line in crashes and sanitizer reports,
# less to compile and link); a unity build (16 sources per translation unit: the shared headers,
# fmt, nlohmann/json, yaml-cpp, gtest, are parsed once per batch; about half the build time,
# BENCHMARKS-history.md "CI build time"). A developer's own `cmake -S . -B dir` compiles one file per unit.
# Warnings are errors here too: Debian 12's g++ is the one compiler this project supports, and
# the same flags in both mean that running both README commands compiles once.
CONFIG=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DCHORUS_LINE_TABLES_ONLY=ON -DCHORUS_WERROR=ON
        -DCMAKE_UNITY_BUILD=ON -DCMAKE_UNITY_BUILD_BATCH_SIZE=16)
if [[ "$TARGETS" == user ]]; then
  cmake -S . -B build "${CONFIG[@]}" -DCHORUS_BUILD_TESTS=OFF -DCHORUS_BUILD_BENCH=OFF "$@" >/dev/null
  # The CLI, the Python runtime (chorus._rt), the torch.distributed backend (chorus._c10d) and
  # the README's C++ example.
  cmake --build build -j"$(nproc)" --target chorus chorus_py_rt chorus_py_c10d rt_hello
else
  # Tests and benchmarks on explicitly: run.sh's configuration of the same directory turned them off.
  cmake -S . -B build "${CONFIG[@]}" -DCHORUS_BUILD_TESTS=ON -DCHORUS_BUILD_BENCH=ON "$@"
  cmake --build build -j"$(nproc)"
fi
