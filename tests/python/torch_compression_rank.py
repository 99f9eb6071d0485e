"""Compression through the torch.distributed backend (CHORUS_COMPRESSION): float tensors of
all_reduce (SUM, AVG), all_gather, all_to_all_single (equal splits), send and recv travel as zfp
blocks, every element within the bound; everything else (integers, float16, MAX, split sizes,
broadcast) runs uncompressed and exact; compression_stats() counts the bytes; groups made under
looser bounds send fewer bytes; a bad setting is a ValueError naming it.

The world group is made under CHORUS_COMPRESSION="abs:1e-3,all_to_all_single:abs:1e-2" (set
here, before init_process_group: the process group reads it when it is made). Each rank computes
every rank's input from the rank number, so the exact result is known without communication.

Run with 2 or more ranks: chorus launch -n 3 -- python3 tests/python/torch_compression_rank.py
"""
import faulthandler
import os
import signal
import sys

import torch
import torch.distributed as dist

import chorus  # noqa: F401  (registers the "chorus" backend)
from chorus import distributed as chorus_dist

faulthandler.register(signal.SIGUSR1, all_threads=True)  # tests/rt/watchdog.py asks for the stacks of a hung rank

TOL, A2A_TOL = 1e-3, 1e-2
os.environ["CHORUS_COMPRESSION"] = f"abs:{TOL},all_to_all_single:abs:{A2A_TOL}"
dist.init_process_group("chorus")
RANK, WORLD = dist.get_rank(), dist.get_world_size()
CHECKS = 0


def check(ok, what):
    global CHECKS
    if not ok:
        print(f"torch_compression_rank: rank {RANK}: FAILED: {what}", file=sys.stderr, flush=True)
        sys.exit(1)
    CHECKS += 1


def smooth(rank, count, dtype=torch.float32):
    """Rank `rank`'s input: a smooth signal zfp compresses well (computed in float64, then cast)."""
    i = torch.arange(count, dtype=torch.float64)
    return (torch.sin(i / 50.0 + rank) * (rank + 1) + 0.001 * i).to(dtype)


def within(got, want, allowed, what):
    err = (got.to(torch.float64) - want).abs()
    check(bool((err <= allowed).all()), f"{what}: worst error {err.max().item():.3g} exceeds the allowance")


def all_reduce_allowance(inputs, dtype, tol, avg=False):
    """|out - exact| allowed for a compressed all-reduce: the bound plus the float additions'
    rounding, p * eps * (sum_k |x_k| + bound) (derived in tests/rt/compression/rt_compression_check.cpp);
    AVG: that divided by p, plus the division's rounding."""
    eps = torch.finfo(dtype).eps
    magnitude = sum(x.abs() for x in inputs)
    allowed = tol + WORLD * eps * (magnitude + tol)
    return allowed / WORLD + eps * magnitude / WORLD if avg else allowed


def stats_grew(before, what):
    after = chorus_dist.compression_stats()
    check(after["raw_bytes"] > before["raw_bytes"] and after["wire_bytes"] > before["wire_bytes"],
          f"{what}: compression_stats did not count it ({before} -> {after})")
    return after


def uncompressed(before, what):
    after = chorus_dist.compression_stats()
    check(after == before, f"{what}: counted as compressed ({before} -> {after})")


def main():
    n = 4113 * WORLD  # elements per tensor: all_to_all_single's blocks of 4113 are not a multiple of zfp's 4
    stats = chorus_dist.compression_stats()
    check(stats == {"raw_bytes": 0, "wire_bytes": 0}, f"fresh group's stats {stats}")
    # One runtime in the process: chorus._rt sees the one the process group initialised (chorus._c10d).
    check(chorus.is_initialized(), "chorus.is_initialized() after init_process_group: two runtimes in one process")
    x = smooth(RANK, 1000).numpy()
    chorus.compressed.all_reduce("auto", x, "abs:1e-3")
    within(torch.from_numpy(x), sum(smooth(k, 1000).to(torch.float64) for k in range(WORLD)),
           all_reduce_allowance([smooth(k, 1000).to(torch.float64) for k in range(WORLD)], torch.float32, 1e-3),
           "chorus.compressed.all_reduce on the process group's runtime")

    for dtype in (torch.float32, torch.float64):
        inputs = [smooth(k, n, dtype).to(torch.float64) for k in range(WORLD)]
        exact = sum(inputs)
        t = smooth(RANK, n, dtype)
        dist.all_reduce(t)
        within(t, exact, all_reduce_allowance(inputs, dtype, TOL), f"all_reduce SUM {dtype}")
        stats = stats_grew(stats, f"all_reduce {dtype}")
        t = smooth(RANK, n, dtype)
        work = dist.all_reduce(t, op=dist.ReduceOp.AVG, async_op=True)
        work.wait()
        check(work.is_completed(), "async compressed all_reduce completed after wait")
        within(t, exact / WORLD, all_reduce_allowance(inputs, dtype, TOL, avg=True), f"all_reduce AVG {dtype}")
        stats = stats_grew(stats, f"all_reduce AVG {dtype}")

        out = torch.zeros(n * WORLD, dtype=dtype)
        dist.all_gather_into_tensor(out, smooth(RANK, n, dtype))
        within(out, torch.cat(inputs), TOL, f"all_gather_into_tensor {dtype}")
        stats = stats_grew(stats, f"all_gather_into_tensor {dtype}")
        outs = [torch.zeros(n, dtype=dtype) for _ in range(WORLD)]
        dist.all_gather(outs, smooth(RANK, n, dtype))
        for k in range(WORLD):
            within(outs[k], inputs[k], TOL, f"all_gather (list) {dtype}, from rank {k}")
        stats = stats_grew(stats, f"all_gather {dtype}")

        out = torch.zeros(n, dtype=dtype)
        dist.all_to_all_single(out, smooth(RANK, n, dtype))
        block = n // WORLD
        want = torch.cat([inputs[k][RANK * block:(RANK + 1) * block] for k in range(WORLD)])
        within(out, want, A2A_TOL, f"all_to_all_single {dtype} (its own bound)")
        stats = stats_grew(stats, f"all_to_all_single {dtype}")

        got = torch.zeros(n, dtype=dtype)  # a ring, the odd ranks receiving first
        steps = [lambda: dist.send(smooth(RANK, n, dtype), (RANK + 1) % WORLD),
                 lambda: dist.recv(got, (RANK - 1) % WORLD)]
        for step in (steps if RANK % 2 == 0 else steps[::-1]):
            step()
        within(got, inputs[(RANK - 1) % WORLD], TOL, f"send/recv {dtype}")
        stats = stats_grew(stats, f"send/recv {dtype}")

    # complex64: compressed as its float32 parts
    z = torch.complex(smooth(RANK, n), smooth(RANK + 7, n))
    dist.all_reduce(z)
    re = [smooth(k, n).to(torch.float64) for k in range(WORLD)]
    im = [smooth(k + 7, n).to(torch.float64) for k in range(WORLD)]
    within(z.real, sum(re), all_reduce_allowance(re, torch.float32, TOL), "all_reduce complex64, real parts")
    within(z.imag, sum(im), all_reduce_allowance(im, torch.float32, TOL), "all_reduce complex64, imaginary parts")
    stats = stats_grew(stats, "all_reduce complex64")

    # Not compressed, so exact: integers, float16, MAX, split sizes, broadcast.
    t = torch.arange(n, dtype=torch.int64) + RANK
    dist.all_reduce(t)
    check(torch.equal(t, torch.arange(n, dtype=torch.int64) * WORLD + WORLD * (WORLD - 1) // 2), "all_reduce int64 exact")
    t = torch.full((n,), float(RANK + 1), dtype=torch.float16)
    dist.all_reduce(t)
    check(torch.equal(t, torch.full((n,), float(WORLD * (WORLD + 1) // 2), dtype=torch.float16)), "all_reduce float16 exact")
    t = smooth(RANK, n)
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    check(torch.equal(t, torch.stack([smooth(k, n) for k in range(WORLD)]).max(dim=0).values), "all_reduce MAX exact")
    inp = torch.cat([torch.full((j + 1,), 10.0 * RANK + j + 0.123456789) for j in range(WORLD)])
    out = torch.zeros(WORLD * (RANK + 1))
    dist.all_to_all_single(out, inp, output_split_sizes=[RANK + 1] * WORLD, input_split_sizes=[j + 1 for j in range(WORLD)])
    check(torch.equal(out, torch.cat([torch.full((RANK + 1,), 10.0 * k + RANK + 0.123456789) for k in range(WORLD)])),
          "all_to_all_single with split sizes exact")
    t = smooth(RANK, n)
    dist.broadcast(t, src=WORLD - 1)
    check(torch.equal(t, smooth(WORLD - 1, n)), "broadcast exact")
    uncompressed(stats, "integer, float16, MAX, split-size and broadcast operations")

    # Asynchronous (the world group's compressed collectives run on a Compressor of their own):
    # compressed all-reduces and all-gathers queued with uncompressed integer all-reduces issued
    # between them, waited for last, in reverse order.
    queued = []
    for k in range(6):
        t = smooth(RANK + k, n)
        if k % 2 == 0:
            queued.append((dist.all_reduce(t, async_op=True), t, k, None))
        else:
            out = torch.empty(WORLD * n)
            queued.append((dist.all_gather_into_tensor(out, t, async_op=True), out, k, t))
        i = torch.full((7,), RANK + k, dtype=torch.int64)
        dist.all_reduce(i)
        check(torch.equal(i, torch.full((7,), WORLD * (WORLD - 1) // 2 + WORLD * k, dtype=torch.int64)),
              f"integer all_reduce between queued compressed ones (#{k})")
    for work, got, k, _ in reversed(queued):
        work.wait()
        inputs = [smooth(r + k, n).to(torch.float64) for r in range(WORLD)]
        if k % 2 == 0:
            within(got, sum(inputs), all_reduce_allowance(inputs, torch.float32, TOL), f"async compressed all_reduce #{k}")
        else:
            within(got, torch.cat(inputs), TOL, f"async compressed all_gather_into_tensor #{k}")
    # isend / irecv around the ring, every rank sending first: on the Compressor's send and
    # receive workers, so the send does not wait for the receive queued after it.
    got = torch.zeros(4 * n)
    sent = dist.isend(smooth(RANK + 11, 4 * n), (RANK + 1) % WORLD)
    received = dist.irecv(got, (RANK - 1) % WORLD)
    received.wait()
    sent.wait()
    within(got, smooth((RANK - 1) % WORLD + 11, 4 * n), TOL, "isend / irecv around the ring")
    stats = stats_grew(stats, "the asynchronous compressed operations")

    # Groups made under looser bounds send fewer bytes for the same all-reduce.
    wire = []
    for tol in (1e-5, 1e-3, 1e-1):
        os.environ["CHORUS_COMPRESSION"] = f"all_reduce:abs:{tol}"
        group = dist.new_group()
        inputs = [smooth(k, n).to(torch.float64) for k in range(WORLD)]
        t = smooth(RANK, n)
        dist.all_reduce(t, group=group)
        within(t, sum(inputs), all_reduce_allowance(inputs, torch.float32, tol), f"all_reduce on a group under abs:{tol}")
        gstats = chorus_dist.compression_stats(group)
        wire.append(gstats["wire_bytes"])
    check(wire[0] > wire[1] > wire[2], f"wire bytes {wire} fall as the bound loosens (1e-5, 1e-3, 1e-1)")
    check(wire[2] < gstats["raw_bytes"], f"abs:0.1 sends fewer bytes than raw: {gstats}")

    # A bad setting: every rank's new_group fails the same way, before anything is sent.
    os.environ["CHORUS_COMPRESSION"] = "broadcast:abs:1e-3"
    try:
        dist.new_group()
        check(False, "a bad CHORUS_COMPRESSION was accepted")
    except ValueError as e:
        check("CHORUS_COMPRESSION" in str(e) and "no compressed form" in str(e), f"message: {e}")

    ratio = stats["wire_bytes"] / stats["raw_bytes"]
    dist.barrier()
    dist.destroy_process_group()
    if RANK == 0:
        print(f"torch_compression_rank: {CHECKS} checks passed on {WORLD} ranks (world group: wire/raw = {ratio:.3f})")


if __name__ == "__main__":
    main()
