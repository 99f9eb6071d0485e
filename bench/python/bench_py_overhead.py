#!/usr/bin/env python3
"""The Python layer's cost (issue 11: at most 5 % over the C++ call at 4 KiB): in one process per
rank, the same blocking in-place all_reduce looped ITERS times in Python (chorus.all_reduce) and in
C++ (chorus._rt._loop_all_reduce), alternating, ROUNDS rounds; each loop is timed as a whole (no
timer calls inside). Per row: median over rounds of the slowest rank's time per call, and the
ratio Python / C++.

usage: PYTHONPATH=build/python build/chorus launch -n 2 -- python3 bench/python/bench_py_overhead.py
       [--backends shm,gloo] [--sizes 8,4096,65536,1048576] [--rounds 5]
"""
import argparse
import statistics
import time

import numpy as np

import chorus
from chorus import _rt


def slowest(backend, us):
    t = np.array([us], np.float64)
    chorus.all_reduce(backend, t, op=chorus.ReduceOp.MAX)
    return float(t[0])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--backends", default="shm,gloo")
    ap.add_argument("--sizes", default="8,4096,65536,1048576")
    ap.add_argument("--rounds", type=int, default=5)
    a = ap.parse_args()
    backends = a.backends.split(",")
    chorus.init(backends)
    me = chorus.rank()
    if me == 0:
        print(f"# {chorus.size()} ranks; median over {a.rounds} rounds of the slowest rank's time per call, us")
        print(f"{'backend':<8} {'bytes':>9} {'iters':>6} {'python':>10} {'C++':>10} {'python/C++':>10}")
    for b in backends:
        for size in (int(s) for s in a.sizes.split(",")):
            x = np.ones(max(size // 4, 1), np.float32)
            iters = max(200, min(20000, int(2e8 // max(size, 1) // 100))) if b == "shm" else 300
            py, cc = [], []
            for _ in range(a.rounds):
                chorus.barrier(b)
                t0 = time.perf_counter_ns()
                for _ in range(iters):
                    chorus.all_reduce(b, x)
                py.append(slowest(b, (time.perf_counter_ns() - t0) / 1e3) / iters)
                chorus.barrier(b)
                cc.append(slowest(b, _rt._loop_all_reduce(b, x, iters)) / iters)
            p, c = statistics.median(py), statistics.median(cc)
            if me == 0:
                print(f"{b:<8} {size:>9} {iters:>6} {p:>10.2f} {c:>10.2f} {p / c:>10.3f}")
    chorus.finalize()


if __name__ == "__main__":
    main()
