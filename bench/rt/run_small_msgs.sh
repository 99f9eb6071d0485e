#!/usr/bin/env bash
# Small messages side by side, in one run: chorus `shm` and chorus `mpi` (both in the same mpirun
# job: chorus bench --backends shm,mpi; chorus's mpi pays its agreement exchange) against a plain
# MPI program (bench_mpi_plain: MPI_Allreduce, no chorus code), and chorus `gloo` against a plain
# Gloo program (bench_gloo_plain: Gloo's FileStore and TCP transport, no chorus code) under
# the same mpirun. mpirun binds each rank to a core by default (2 ranks or fewer: --bind-to core),
# which suits shm and Open MPI; the Gloo runs (chorus and plain) use --bind-to none, because a
# bound rank shares its one core with Gloo's event-loop thread and every wake-up can wait for the
# next scheduler tick (measured: plain Gloo ring, 2 ranks, 64 B: ~4 ms bound, ~0.3 ms unbound).
# 2 and 4 ranks, float32 sum, 8 B .. 64 KiB (gloo also 1 MiB, 16 MiB); WHAT=large: 1 MiB .. 128 MiB.
# shm and Open MPI run 20000 iterations (at 2000 a single 0.3 ms preemption moves an 8 B mean by
# 0.15 µs, a quarter of it). Every configuration runs REPS times, interleaved; the table gives the median over the runs
# of the mean time per operation (and of the fastest iteration). The machine may be shared:
# the script prints `uptime` before each round.
# Usage: bench/rt/run_small_msgs.sh [BUILD_DIR] [REPS] [WHAT] [RANKS]   (default build/, 3, all, "2 4")
#   WHAT = gloo: only chorus gloo and plain Gloo (300 timed iterations, 30 warm-ups, 8 B .. 16 MiB);
#   WHAT = large: every implementation at 1, 4, 16, 64 and 128 MiB (10 timed iterations, 3 warm-ups);
#   BEFORE=/path/to/chorus adds that binary's gloo beside, run in turn in each round.
set -euo pipefail
BUILD=${1:-build}
REPS=${2:-3}
WHAT=${3:-all}
RANKS=${4:-2 4}
BEFORE=${BEFORE:-}
GLOO_ITERS=200 GLOO_WARMUP=20 ITERS=20000 WARMUP=2000
if [[ "$WHAT" == gloo ]]; then GLOO_ITERS=300 GLOO_WARMUP=30; fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
MPIRUN=(mpirun --oversubscribe)
SMALL=8,64,512,4096,32768,65536
GLOO=8,64,512,4096,32768,65536,262144,1048576,4194304,16777216
[[ "$WHAT" == gloo ]] && GLOO=8,64,512,4096,16384,32768,65536,131072,262144,524288,1048576,4194304,16777216
if [[ "$WHAT" == large ]]; then
  SMALL=1048576,4194304,16777216,67108864,134217728 GLOO=$SMALL
  ITERS=10 WARMUP=3 GLOO_ITERS=10 GLOO_WARMUP=3
fi
case "$WHAT" in all|gloo|large) ;; *) echo "run_small_msgs.sh: WHAT is all, gloo or large, not '$WHAT'" >&2; exit 2 ;; esac
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
echo "# machine: $(nproc) cpus, $(lscpu | sed -n 's/^Model name: *//p'), $(date -u +%F)"
for rep in $(seq "$REPS"); do
  for n in $RANKS; do
    echo "# round $rep, $n ranks, $(uptime)"
    if [[ "$WHAT" != gloo ]]; then
      "${MPIRUN[@]}" -n "$n" "$BUILD/chorus" bench --backends shm,mpi --ops allreduce --sizes "$SMALL" \
        --iters "$ITERS" --warmup "$WARMUP" --json > "$OUT/shm_mpi.$n.$rep.json"
      "${MPIRUN[@]}" -n "$n" "$BUILD/bench/rt/bench_mpi_plain" --sizes "$SMALL" --iters "$ITERS" --warmup "$WARMUP" \
        > "$OUT/mpi_plain.$n.$rep.txt"
    fi
    "${MPIRUN[@]}" --bind-to none -n "$n" "$BUILD/chorus" bench --backends gloo --ops allreduce --sizes "$GLOO" \
      --iters "$GLOO_ITERS" --warmup "$GLOO_WARMUP" --json > "$OUT/gloo.$n.$rep.json"
    store=$(mktemp -d)
    "${MPIRUN[@]}" --bind-to none -n "$n" "$BUILD/bench/rt/bench_gloo_plain" --store "$store" --sizes "$GLOO" \
      --iters "$GLOO_ITERS" --warmup "$GLOO_WARMUP" --algos ring,hd > "$OUT/plain.$n.$rep.txt"
    rm -rf "$store"
    if [[ -n "$BEFORE" ]]; then
      "${MPIRUN[@]}" --bind-to none -n "$n" "$BEFORE" bench --backends gloo --ops allreduce --sizes "$GLOO" \
        --iters "$GLOO_ITERS" --warmup "$GLOO_WARMUP" --json > "$OUT/before.$n.$rep.json"
    fi
  done
done
python3 - "$OUT" "$REPS" "$RANKS" <<'EOF'
import json, os, statistics, sys
out, reps, ranks = sys.argv[1], int(sys.argv[2]), [int(x) for x in sys.argv[3].split()]
def med(xs): return statistics.median(xs) if xs else float("nan")
for n in ranks:
    t = {}  # (impl, bytes) -> list of (mean, min)
    for rep in range(1, reps + 1):
        for f, impl in ((f"shm_mpi.{n}.{rep}.json", None), (f"gloo.{n}.{rep}.json", None),
                        (f"before.{n}.{rep}.json", "gloo-before")):
            if not os.path.exists(f"{out}/{f}"):
                continue
            for r in json.load(open(f"{out}/{f}")):
                t.setdefault((impl or r["backend"], r["bytes"]), []).append((r["mean_us"], r["min_us"]))
        for line in open(f"{out}/plain.{n}.{rep}.txt"):
            f = line.split()
            if f and f[0].startswith("gloo-"):
                t.setdefault(("plain-" + f[0][5:], int(f[1])), []).append((float(f[4]), float(f[3])))
        if os.path.exists(f"{out}/mpi_plain.{n}.{rep}.txt"):
            for line in open(f"{out}/mpi_plain.{n}.{rep}.txt"):
                f = line.split()
                if f and f[0] == "mpi-plain":
                    t.setdefault(("mpi-plain", int(f[1])), []).append((float(f[4]), float(f[3])))
    m = lambda k, i=0: med([x[i] for x in t.get(k, [])])
    print(f"\n## {n} ranks: median over {reps} runs of the mean time per all-reduce, us (fastest iteration in brackets)\n")
    before = any(k[0] == "gloo-before" for k in t)
    shm = any(k[0] == "shm" for k in t)
    print("| bytes |" + (" chorus shm | chorus mpi | plain MPI | shm / plain MPI | chorus mpi / plain MPI |" if shm else "") + " chorus gloo |" +
          (" chorus gloo before |" if before else "") + " plain Gloo ring | plain Gloo halving-doubling |"
          " gloo / best plain |" + (" before / best plain |" if before else ""))
    print("|---:|" + ("---:|---:|---:|---:|---:|" if shm else "") + "---:|" + ("---:|" if before else "") + "---:|---:|---:|" +
          ("---:|" if before else ""))
    for b in sorted({k[1] for k in t}):
        cell = lambda impl: f"{m((impl, b)):.2f} ({m((impl, b), 1):.2f})" if (impl, b) in t else "-"
        ratio = lambda a, c: f"{m((a, b)) / m((c, b)):.2f}" if (a, b) in t and (c, b) in t else "-"
        plain = [m((k, b)) for k in ("plain-ring", "plain-hd") if (k, b) in t]
        best = lambda impl: f"{m((impl, b)) / min(plain):.2f}" if plain and (impl, b) in t else "-"
        print(f"| {b} |" + (f" {cell('shm')} | {cell('mpi')} | {cell('mpi-plain')} | {ratio('shm', 'mpi-plain')} |"
                             f" {ratio('mpi', 'mpi-plain')} |" if shm else "") +
              f" {cell('gloo')} |" + (f" {cell('gloo-before')} |" if before else "") +
              f" {cell('plain-ring')} | {cell('plain-hd')} | {best('gloo')} |" +
              (f" {best('gloo-before')} |" if before else ""))
EOF
