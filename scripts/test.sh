#!/usr/bin/env bash
# Installs dependencies, builds chorus with warnings as errors and runs every test, in four
# stages:
#   1. build/       the user's build (scripts/build.sh, as scripts/run.sh makes it), every test;
#                   then build-release/: a Release build's Python modules must link and import
#   2. build-asan/  AddressSanitizer + UBSan (Debug), every test but the process-behaviour ones
#   3. build-tsan/  ThreadSanitizer, the runtime's tests (the code with threads)
#   4. build-fuzz/  clang + libFuzzer: each parser's fuzz target for a bounded time, one per core at once
#                   (CHORUS_FUZZ_SECONDS per target, default 10)
#   scripts/test.sh              all four stages (what CI runs)
#   scripts/test.sh --regular | --sanitize | --tsan | --fuzz     one stage
set -euo pipefail
cd "$(dirname "$0")/.."
MODE="${1:-all}"
case "$MODE" in
  all|--regular|--sanitize|--tsan|--fuzz) ;;
  *) echo "usage: scripts/test.sh [--regular|--sanitize|--tsan|--fuzz]" >&2; exit 2 ;;
esac
bash scripts/install-deps.sh
echo "=== dependencies: $SECONDS s ==="
JOBS=$(nproc)
# Every stage compiles as a unity build (16 sources per translation unit): the shared headers
# (fmt, nlohmann/json, yaml-cpp, gtest) are parsed once per batch, which halves the builds
# (BENCHMARKS-history.md, "CI build time"). Developers' own builds (cmake -S . -B build) compile one file
# per unit and so still catch a missing #include.
UNITY=(-DCMAKE_UNITY_BUILD=ON -DCMAKE_UNITY_BUILD_BATCH_SIZE=16)
want() { [[ "$MODE" == all || "$MODE" == "$1" ]]; }

# Each stage's build and test times go to the log (BENCHMARKS-history.md, "CI time").
stage_start=$SECONDS
took() { echo "=== $1: $((SECONDS - stage_start)) s ==="; stage_start=$SECONDS; }

configure_and_build() {  # build-dir, targets (or "all"), extra cmake args...
  local dir="$1" targets="$2"; shift 2
  stage_start=$SECONDS
  echo "=== $dir: configure, build ==="
  # -g1: line tables only (file:line in failures and sanitizer reports), less to compile and link.
  cmake -S . -B "$dir" -DCHORUS_WERROR=ON -DCHORUS_LINE_TABLES_ONLY=ON "$@"
  if [[ "$targets" == all ]]; then
    cmake --build "$dir" -j"$JOBS"
  else
    # shellcheck disable=SC2086
    cmake --build "$dir" -j"$JOBS" --target $targets
  fi
  took "$dir: configure and build"
}

if want --regular; then
  # The C++ sources as .clang-format formats them (a second, not a build).
  bash scripts/check-format.sh
  # The user's build (scripts/build.sh, what scripts/run.sh makes) with every test: the tests,
  # the README's quick-start commands (tests/readme) and the smoke runs test what users run.
  stage_start=$SECONDS
  echo "=== build: configure, build (scripts/build.sh, the user's build) ==="
  bash scripts/build.sh all
  took "build: configure and build"
  # As root, the multi-host test must run (not skip): root can make the network namespaces it
  # needs, so not being able to is a failure here.
  REQUIRE_MULTIHOST=0
  if [[ $(id -u) -eq 0 ]]; then REQUIRE_MULTIHOST=1; fi
  (cd build && CHORUS_REQUIRE_MULTIHOST=$REQUIRE_MULTIHOST ctest --output-on-failure -j"$JOBS" --timeout 900)
  took "build: tests"
  # A plain Release build's Python modules (what `cmake -DCMAKE_BUILD_TYPE=Release` users get):
  # they must link with their code and import (pybind11's GCC LTO objects linked by
  # lld gave modules without code; docs/development.md, "Linker and LTO").
  cmake -S . -B build-release -DCMAKE_BUILD_TYPE=Release -DCHORUS_BUILD_TESTS=OFF -DCHORUS_BUILD_BENCH=OFF \
    -DCMAKE_UNITY_BUILD=ON -DCMAKE_UNITY_BUILD_BATCH_SIZE=16 >/dev/null
  cmake --build build-release -j"$JOBS" --target chorus_py_rt chorus_py_c10d
  PYTHONPATH=build-release/python /usr/bin/python3 -c "import chorus._rt, chorus._c10d; print('Release: chorus._rt and chorus._c10d import')"
  took "build-release: the Python modules of a Release build"
fi
if want --sanitize; then
  configure_and_build build-asan all -DCHORUS_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug -DCHORUS_BUILD_BENCH=OFF "${UNITY[@]}"
  # Memory errors in the code: every unit test, parser replay and data-path test of the runtime.
  # Left to the regular stage (they test process behaviour, not new code paths, and took 8 of
  # the stage's 17 minutes under ASan): the CLI's exit codes, timeouts, killed ranks and
  # launchers, multi-host set-up, the studies' smoke runs and the two largest simulator sweeps.
  # Also left out: the named all-reduce algorithms' bench (Open MPI's and Gloo's own code, not
  # instrumented), the third compression run (the two others run the same code), the CLI
  # exit-code suites of sim jobs, plan and motif (their code runs in the unit tests), and shm's
  # and gloo's multi-process disagreements (the thread-rank tests run their disagreements here;
  # what the multi-process ones add is who says what when a peer ends, process behaviour); and
  # chorus sweep's CLI and multi-host tests (killed sweeps, mpirun: process behaviour; its
  # library's unit tests run here).
  (cd build-asan && ctest --output-on-failure -j"$JOBS" --timeout 900 \
     -E "^cli_tests$|^plot_tests$|^jobs_cli_tests$|^sweep_cli_tests$|^sweep_multihost$|^plan_cli_tests$|^motif_cli_tests$|^rt_shm_disagreement$|^rt_gloo_disagreement$|rt_bench_algorithms|rt_compression_mpirun|rt_timeouts$|rt_failures|rt_launcher|rt_shm_segment|rt_multihost|rt_schedule_failures|rt_themis_real_smoke|rt_syndicate_real_smoke|rt_dim_backends_auto|Workloads.IdealBeatsThemisBeatsBaselineOnEveryTopology|Workloads.Transformer1TDataParallelPartIsOneDimension")
  took "build-asan: tests"
fi
if want --tsan; then
  # The runtime's threads: unit tests, every operation with ranks as threads (shm, gloo), the
  # progress-queue stress test, the store under attack,
  # groups used from two threads, the schedule executor (a thread per dimension), tensor fusion
  # (its cycle thread beside the program's operations), compressed calls on the lanes (ranks as
  # threads, and the Compressor's beside the program's operations), the flight recorder, its
  # dumps on SIGUSR1 and rt::abort (ranks as threads), and multi-process runs under chorus launch
  # (shm, gloo; the stall watch and the doctor's runs); and chorus sweep's pool running simulations
  # on several workers (label sweep). The mpirun runs are left to the
  # other stages: Open MPI is not instrumented, so TSan would see its threads only in part
  # (rt_mpi_disagreement among them: its fused cases drive MPI from several threads at once, and
  # TSan reported races inside Open MPI's own convertor and shared-memory transport).
  # tests/rt/tsan.supp names what TSan cannot see through the uninstrumented libraries.
  configure_and_build build-tsan \
    "chorus rt_unit_tests rt_thread_rank_tests rt_compressed_thread_rank_tests rt_fusion_thread_rank_tests rt_schedule_thread_rank_tests rt_enforcer_thread_rank_tests rt_flight_recorder_tests launch_beacon_rank launch_leave_early rt_queue_stress rt_store_protocol_tests rt_timeouts_unit_tests rt_programs rt_hello rt_schedule_unit_tests chorus_sweep_tests" \
    -DCHORUS_TSAN=ON -DCHORUS_BUILD_BENCH=OFF "${UNITY[@]}"
  (cd build-tsan && TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$PWD/../tests/rt/tsan.supp" \
     ctest --output-on-failure -j"$JOBS" --timeout 900 -L '^(rt|sweep)$' \
       -E "mpirun|rt_mpi_disagreement|rt_compression|rt_failures|rt_timeouts\$|rt_launcher|rt_shm_segment|rt_multihost|rt_tune|rt_check_auto|rt_bench|rt_check_launch_4|rt_schedule_failures|rt_themis_real_smoke|rt_syndicate_real_smoke")
  took "build-tsan: tests"
fi
if want --fuzz; then
  CC=clang CXX=clang++ configure_and_build build-fuzz fuzzers -DCHORUS_FUZZ=ON -DCHORUS_BUILD_BENCH=OFF "${UNITY[@]}"
  bash tests/fuzz/run_fuzzers.sh build-fuzz "${CHORUS_FUZZ_SECONDS:-10}"
  took "build-fuzz: fuzzing"
fi
echo "scripts/test.sh: all stages passed"
