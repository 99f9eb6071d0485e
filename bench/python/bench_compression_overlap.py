#!/usr/bin/env python3
"""Do the torch backend's compressed collectives overlap with the program? (docs/python.md,
CHORUS_COMPRESSION: on the world group they run on a Compressor, a worker thread of their own.)

Per rank, for a float32 all-reduce of --mib MiB under CHORUS_COMPRESSION (default abs:1e-3) and
a stretch of "work" that takes about as long as the all-reduce alone:
  comm        the compressed all-reduce alone (blocking)
  work        the work alone
  sequential  the blocking all-reduce, then the work
  overlapped  the all-reduce issued with async_op=True, the work, then wait()
and hidden = (sequential - overlapped) / min(comm, work): 1 when the shorter one is hidden
completely, 0 when nothing overlaps. Side by side in the same run: the world group (its
compressed collectives on a Compressor) and a sub-group of all ranks made with new_group (whose
compressed operations run when issued: the behaviour before the Compressor). Two kinds of work: "sleep" (the rank waits, as it would on
an accelerator) and "cpu" (float32 matrix products on the calling thread, competing with zfp for
the same cores). Times: the slowest rank's, median of --reps.

usage: PYTHONPATH=build/python CHORUS_BACKEND_MAP=all_reduce:gloo \\
       build/chorus launch -n 2 -- python3 bench/python/bench_compression_overlap.py [--mib 16] [--reps 5]
"""
import argparse
import os
import statistics
import time

os.environ.setdefault("CHORUS_COMPRESSION", "all_reduce:abs:1e-3")

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402

import chorus  # noqa: E402,F401  (registers "chorus")


def slowest(seconds):
    t = torch.tensor([seconds], dtype=torch.float64)
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    return t.item()


def timed(fn):
    dist.barrier()
    t0 = time.perf_counter()
    fn()
    return slowest(time.perf_counter() - t0)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mib", type=float, default=16)
    ap.add_argument("--reps", type=int, default=5)
    args = ap.parse_args()
    dist.init_process_group("chorus")
    rank = dist.get_rank()
    n = int(args.mib * (1 << 20)) // 4
    grad = torch.sin(torch.arange(n, dtype=torch.float32) / 50.0 + rank)
    a = torch.rand(256, 256)

    sub = dist.new_group()

    def comm():
        dist.all_reduce(grad.clone())

    comm_s = statistics.median(timed(comm) for _ in range(args.reps))
    # A matrix product of 256 x 256 takes ~1 ms here: as many as the all-reduce lasts.
    t0 = time.perf_counter()
    for _ in range(20):
        a @ a
    per_product = (time.perf_counter() - t0) / 20
    products = max(1, int(comm_s / per_product))
    works = {"sleep": lambda: time.sleep(comm_s), "cpu": lambda: [a @ a for _ in range(products)]}
    if rank == 0:
        print(f"compressed all_reduce of {args.mib:g} MiB ({os.environ['CHORUS_COMPRESSION']}, "
              f"CHORUS_BACKEND_MAP={os.environ.get('CHORUS_BACKEND_MAP', 'auto')}), {dist.get_world_size()} ranks: "
              f"{comm_s * 1e3:.1f} ms alone")
        print("group,work,comm_ms,work_ms,sequential_ms,overlapped_ms,hidden")
    for group_name, group in (("world", None), ("new_group", sub)):
        for name, work in works.items():
            def sequential():
                dist.all_reduce(grad.clone(), group=group)
                work()

            def overlapped():
                w = dist.all_reduce(grad.clone(), group=group, async_op=True)
                work()
                w.wait()

            work_s = statistics.median(timed(work) for _ in range(args.reps))
            seq = statistics.median(timed(sequential) for _ in range(args.reps))
            ovl = statistics.median(timed(overlapped) for _ in range(args.reps))
            hidden = (seq - ovl) / min(comm_s, work_s)
            if rank == 0:
                print(f"{group_name},{name},{comm_s * 1e3:.1f},{work_s * 1e3:.1f},{seq * 1e3:.1f},{ovl * 1e3:.1f},{hidden:.2f}",
                      flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
