#!/usr/bin/env python3
"""`chorus bench` as nccl-tests users read it, on 2 ranks under `chorus launch`: the -b/-e/-f
sweep gives exactly the sizes nccl-tests would (8 KiB -> 8, 32, 128, 512 with -e 1KiB -f 4, not
2048), count is the elements of each call, redop and root where they apply, in-place columns for
the operations with an in-place form and "-" for the others, #wrong 0 on correct runs, and the
closing lines: "Out of bounds values : 0 OK" and an average bus bandwidth equal to the mean of the
printed busbw columns. The JSON rows carry the same, with min / mean / max of both placements.

usage: test_bench_nccl.py CHORUS
"""
import json
import subprocess
import sys

CHORUS = sys.argv[1]
RANKS = 2
SWEEP = [8, 32, 128, 512]  # -b 8 -e 1KiB -f 4
WHOLE_BUFFER = {"allgather", "reducescatter"}  # size = all ranks' blocks; count = one rank's block
IN_PLACE = {"allreduce", "allgather", "reduce"}
REDUCING = {"allreduce", "reducescatter", "reduce"}
ROOTED = {"broadcast", "reduce"}
BUS_FACTOR = {"allreduce": 2 * (RANKS - 1) / RANKS, "allgather": (RANKS - 1) / RANKS,
              "reducescatter": (RANKS - 1) / RANKS, "broadcast": 1, "reduce": 1}
failures = []


def check(what, ok, detail=""):
    if not ok:
        failures.append(f"{what}: {detail}")


def bench(*args):
    p = subprocess.run([CHORUS, "launch", "-n", str(RANKS), "--", CHORUS, "bench", "--backends", "shm",
                        "--iters", "3", "--warmup", "1", "--check", *args],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, (args, p.stdout, p.stderr)
    return p.stdout


def count_of(op, size, element):
    return size // element // (RANKS if op in WHOLE_BUFFER else 1)


# ---- the table ---------------------------------------------------------------------------------
ops = ["allreduce", "allgather", "broadcast", "reducescatter", "reduce"]
out = bench("--ops", ",".join(ops), "-b", "8", "-e", "1KiB", "-f", "4")
rows = [line.split() for line in out.splitlines() if line and not line.startswith("#")]
check("table: 15 cells a row with --check", all(len(r) == 15 for r in rows), out)
busbw = []
for op in ops:
    mine = [r for r in rows if r[1] == op]
    check(f"{op}: sizes of the sweep", [int(r[2]) for r in mine] == SWEEP, [r[2] for r in mine])
    for r in mine:
        size = int(r[2])
        check(f"{op} {size}: count", int(r[3]) == count_of(op, size, 4), r)
        check(f"{op} {size}: type", r[4] == "f32", r)
        check(f"{op} {size}: redop", r[5] == ("sum" if op in REDUCING else "-"), r)
        check(f"{op} {size}: root", r[6] == ("0" if op in ROOTED else "-"), r)
        check(f"{op} {size}: out-of-place #wrong", r[10] == "0", r)
        busbw.append(float(r[9]))
        if op in IN_PLACE:
            check(f"{op} {size}: in-place #wrong", r[14] == "0", r)
            busbw.append(float(r[13]))
        else:
            check(f"{op} {size}: no in-place run", r[11:] == ["-"] * 4, r)
check("closing line: out of bounds", "\n# Out of bounds values : 0 OK\n" in out, out)
avg = [line for line in out.splitlines() if line.startswith("# Avg bus bandwidth    : ")]
check("closing line: avg bus bandwidth", len(avg) == 1, out)
if avg:
    # Each printed busbw is rounded to 0.0005, and so is the average.
    mean = sum(busbw) / len(busbw)
    printed = float(avg[0].split(":")[1])
    check("avg bus bandwidth = mean of the busbw columns", abs(printed - mean) <= 0.0011, f"{printed} vs {mean}")

# ---- JSON, another element size ----------------------------------------------------------------
j = json.loads(bench("--ops", "allreduce,broadcast", "--dtype", "f64", "-b", "8", "-e", "1KiB", "-f", "4", "--json"))
for op in ("allreduce", "broadcast"):
    mine = [r for r in j if r["op"] == op]
    check(f"json {op}: sizes", [r["bytes"] for r in mine] == SWEEP, mine)
    for r in mine:
        what = f"json {op} {r['bytes']}"
        check(f"{what}: count", r["count"] == r["bytes"] // 8, r)
        check(f"{what}: dtype, iters, warmup, world",
              (r["dtype"], r["iters"], r["warmup"], r["world_size"]) == ("f64", 3, 1, RANKS), r)
        check(f"{what}: redop, root", (r["redop"], r["root"]) == (("sum", None) if op == "allreduce" else (None, 0)), r)
        runs = [r] + ([r["in_place"]] if op in IN_PLACE else [])
        check(f"{what}: in_place", (r["in_place"] is None) == (op not in IN_PLACE), r)
        for t in runs:
            check(f"{what}: min <= mean <= max", 0 < t["min_us"] <= t["mean_us"] <= t["max_us"], t)
            algbw = r["bytes"] / (t["mean_us"] * 1e3)
            check(f"{what}: algbw", abs(t["algbw_GBps"] - algbw) <= 1e-9 * algbw, t)
            check(f"{what}: busbw", abs(t["busbw_GBps"] - algbw * BUS_FACTOR[op]) <= 1e-9 * algbw, t)
            check(f"{what}: checked", (t["wrong"], t["check"]) == (0, "ok"), t)

for f in failures:
    print("FAIL", f)
print(f"bench nccl-tests layout: {len(failures)} failures")
sys.exit(1 if failures else 0)
