#!/usr/bin/env bash
# Measures the runtime side by side: all-reduce bus bandwidth of shm, mpi and gloo (2 and 4
# ranks, 1 MiB .. 128 MiB, float32 sum, nccl-tests definitions) and the API overhead over
# direct MPI. Usage: bench/rt/run_rt_bench.sh [BUILD_DIR]   (default build/)
set -euo pipefail
BUILD=${1:-build}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
MPIRUN=(mpirun --oversubscribe)
echo "# machine: $(nproc) cpus, $(lscpu | sed -n 's/^Model name: *//p'), $(date -u +%F)"
"$BUILD/bench/rt/bench_memcpy"
for n in 2 4; do
  echo "# all_reduce, $n ranks"
  "${MPIRUN[@]}" -n "$n" "$BUILD/chorus" bench --backends shm,mpi,gloo --ops allreduce \
    --sizes 1MiB,4MiB,16MiB,64MiB,128MiB --iters 10 --warmup 3
done
echo "# API overhead over direct MPI_Allreduce, 2 ranks"
"${MPIRUN[@]}" -n 2 "$BUILD/bench/rt/bench_rt_overhead"
