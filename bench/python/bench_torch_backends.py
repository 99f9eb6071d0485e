#!/usr/bin/env python3
"""torch.distributed through the "chorus" backend beside torch's own gloo backend, in one run, on the
same tensors, through torch's API (issue 11: chorus at least as fast as gloo at every size from 8 B
to 128 MiB, and at least 3x faster from 1 MiB up).

Each rank initialises the default group with "chorus" and a second group with "gloo". For every
operation and size the two take turns, ROUNDS rounds; each turn runs the blocking operation ITERS
times (ITERS chosen from a first timing so that a turn lasts about --budget-s) and is timed as a
whole. A row gives, per backend, the median over rounds of the slowest rank's time per call (a
collective is as slow as its slowest rank), gloo / chorus, and the page faults per call of the
slowest rank (first touches of fresh memory cost about 3 ms per MiB on the CI machine kind).

usage: PYTHONPATH=build/python build/chorus launch -n 2 -- python3 bench/python/bench_torch_backends.py
       [--ops all_reduce,broadcast,all_gather,all_to_all_single] [--sizes 8,...,134217728]
       [--rounds 3] [--budget-s 0.2] [--csv FILE]
Which chorus backend runs an operation: CHORUS_BACKEND_MAP (default auto) among CHORUS_BACKENDS.
"""
import argparse
import csv
import resource
import statistics
import sys
import time

import torch
import torch.distributed as dist

import chorus  # noqa: F401  (registers "chorus")

SIZES = [8, 64, 512, 4096, 32768, 262144, 1 << 20, 8 << 20, 32 << 20, 128 << 20]


def make_op(name, nbytes, world, group):
    n = max(1, nbytes // 4)
    if name == "all_reduce":
        t = torch.ones(n)
        return lambda: dist.all_reduce(t, group=group)
    if name == "broadcast":
        t = torch.ones(n)
        return lambda: dist.broadcast(t, src=0, group=group)
    if name == "all_gather":  # nbytes per rank
        t = torch.ones(n)
        outs = [torch.empty(n) for _ in range(world)]
        return lambda: dist.all_gather(outs, t, group=group)
    if name == "all_to_all_single":  # nbytes per rank in all
        n = max(world, n - n % world)
        a, b = torch.ones(n), torch.empty(n)
        return lambda: dist.all_to_all_single(b, a, group=group)
    raise SystemExit(f"bench_torch_backends: --ops: unknown operation '{name}' "
                     "(all_reduce, broadcast, all_gather, all_to_all_single)")


def timed(fn, iters, group):
    """(time per call, page faults per call) of the slowest rank."""
    dist.barrier(group=group)
    faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    start = time.perf_counter()
    for _ in range(iters):
        fn()
    us = (time.perf_counter() - start) / iters * 1e6
    faults = (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - faults) / iters
    t = torch.tensor([us, faults], dtype=torch.float64)
    dist.all_reduce(t, op=dist.ReduceOp.MAX, group=group)  # the slowest rank
    return float(t[0]), float(t[1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ops", default="all_reduce,broadcast,all_gather,all_to_all_single")
    ap.add_argument("--sizes", default=",".join(map(str, SIZES)))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--budget-s", type=float, default=0.2)
    ap.add_argument("--csv")
    args = ap.parse_args()
    dist.init_process_group("chorus")
    rank, world = dist.get_rank(), dist.get_world_size()
    gloo = dist.new_group(backend="gloo")
    groups = {"chorus": None, "gloo": gloo}
    rows = []
    if rank == 0:
        print(f"{world} ranks; median of {args.rounds} rounds of the slowest rank's time per call (us)", flush=True)
        print(f"{'op':<18} {'bytes':>10} {'chorus':>10} {'gloo':>10} {'gloo/chorus':>11} {'faults/c':>9} {'faults/g':>9}",
              flush=True)
    for op in args.ops.split(","):
        for size in [int(s) for s in args.sizes.split(",")]:
            fns = {b: make_op(op, size, world, g) for b, g in groups.items()}
            iters = {}
            for b, fn in fns.items():  # warm-up, and the iteration count for the budget
                fn()
                first, _ = timed(fn, 1, groups[b])
                iters[b] = max(1, min(2000, int(args.budget_s * 1e6 / max(first, 1.0))))
            times = {b: [] for b in fns}
            faults = {b: [] for b in fns}
            for _ in range(args.rounds):
                for b, fn in fns.items():
                    us, pf = timed(fn, iters[b], groups[b])
                    times[b].append(us)
                    faults[b].append(pf)
            med = {b: statistics.median(v) for b, v in times.items()}
            pf = {b: statistics.median(v) for b, v in faults.items()}
            rows.append({"op": op, "bytes": size, "ranks": world, "chorus_us": round(med["chorus"], 2),
                         "gloo_us": round(med["gloo"], 2), "gloo_over_chorus": round(med["gloo"] / med["chorus"], 3),
                         "chorus_faults": round(pf["chorus"], 1), "gloo_faults": round(pf["gloo"], 1)})
            if rank == 0:
                r = rows[-1]
                print(f"{op:<18} {size:>10} {r['chorus_us']:>10.1f} {r['gloo_us']:>10.1f} {r['gloo_over_chorus']:>11.2f}"
                      f" {r['chorus_faults']:>9.0f} {r['gloo_faults']:>9.0f}", flush=True)
            del fns
    if rank == 0 and args.csv:
        with open(args.csv, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
