#!/usr/bin/env python3
"""One rank of the Python bindings test (chorus._rt): every bound operation on every initialised
backend, every dtype for all_reduce, each result against a numpy reference computed here from
what every rank contributes (each rank's data is a known function of its rank); then the errors
a user can make. Run under `chorus launch -n N` (shm, gloo) or mpirun (mpi, shm, gloo).

usage: rt_bindings_rank.py BACKEND[,BACKEND...]
"""
import json
import os
import shutil
import sys
import tempfile

import numpy as np

import chorus

DTYPES = [np.float16, np.float32, np.float64, np.int8, np.uint8, np.int32, np.int64]
checks = 0


def check(cond, what):
    global checks
    if not cond:
        raise AssertionError(f"rank {chorus.rank()}: {what}")
    checks += 1


def data(rank, count, dtype):
    """What rank `rank` contributes: small integers, exact in every dtype even summed over 8 ranks."""
    return ((np.arange(count) % 7) + rank + 1).astype(dtype)


def expect_raises(exc, fn, needle):
    try:
        fn()
    except exc as e:
        check(needle in str(e), f"{exc.__name__} message '{e}' lacks '{needle}'")
        return
    raise AssertionError(f"rank {chorus.rank()}: expected {exc.__name__} ({needle})")


def run(b):
    r, n = chorus.rank(b), chorus.size(b)
    ranks = range(n)
    for dt in DTYPES:
        x = data(r, 37, dt)
        chorus.all_reduce(b, x)
        check(np.array_equal(x, sum(data(k, 37, np.int64) for k in ranks).astype(dt)), f"{b} all_reduce {dt.__name__}")
    for op, ref in ((chorus.ReduceOp.MAX, np.maximum.reduce), (chorus.ReduceOp.MIN, np.minimum.reduce),
                    (chorus.ReduceOp.PRODUCT, np.multiply.reduce)):
        x = data(r, 11, np.float64)
        chorus.all_reduce(b, x, op=op)
        check(np.array_equal(x, ref([data(k, 11, np.float64) for k in ranks])), f"{b} all_reduce {op}")
    x = data(r, 11, np.float32)
    chorus.all_reduce(b, x, op=chorus.ReduceOp.AVG)
    check(np.allclose(x, sum(data(k, 11, np.float64) for k in ranks) / n), f"{b} all_reduce AVG")
    # async: the call returns a Work; the tensor holds the result after wait()
    x = data(r, 100000, np.float32)
    w = chorus.all_reduce(b, x, async_op=True)
    w.wait()
    check(w.is_completed(), f"{b} Work.is_completed after wait")
    check(np.array_equal(x, sum(data(k, 100000, np.float64) for k in ranks).astype(np.float32)), f"{b} async all_reduce")
    check(chorus.all_reduce(b, data(r, 3, np.int32)) is None, f"{b} blocking call returns None")

    x = data(r, 9, np.int64)
    chorus.broadcast(b, x, src=n - 1)
    check(np.array_equal(x, data(n - 1, 9, np.int64)), f"{b} broadcast")
    x = data(r, 9, np.int32)
    chorus.reduce(b, x, dst=0)
    if r == 0:
        check(np.array_equal(x, sum(data(k, 9, np.int32) for k in ranks)), f"{b} reduce at dst")
    # gather / scatter (torch's forms: the list on the root only)
    dst = n - 1
    outs = [np.zeros(6, np.float32) for _ in ranks] if r == dst else None
    chorus.gather(b, data(r, 6, np.float32), outs, dst=dst)
    if r == dst:
        check(all(np.array_equal(outs[k], data(k, 6, np.float32)) for k in ranks), f"{b} gather")
    x = np.zeros(5, np.int64)
    w = chorus.scatter(b, x, [data(k, 5, np.int64) * 10 for k in ranks] if r == 0 else None, src=0, async_op=True)
    w.wait()
    check(np.array_equal(x, data(r, 5, np.int64) * 10), f"{b} scatter (async)")
    expect_raises(ValueError, lambda: chorus.gather(b, np.ones(2, np.float32), None if r == 0 else [np.ones(2, np.float32)] * n,
                                                    dst=0), "gather_list")

    out = np.zeros(5 * n, np.float64)
    source = data(r, 5, np.float64)
    source.flags.writeable = False  # inputs are only read: a read-only array is accepted
    chorus.all_gather_into_tensor(b, out, source)
    check(np.array_equal(out, np.concatenate([data(k, 5, np.float64) for k in ranks])), f"{b} all_gather_into_tensor")
    outs = [np.zeros(4, np.int8) for _ in ranks]
    w = chorus.all_gather(b, outs, data(r, 4, np.int8), async_op=True)
    w.wait()
    check(all(np.array_equal(outs[k], data(k, 4, np.int8)) for k in ranks), f"{b} all_gather (list, async)")

    out = np.zeros(6, np.float32)
    chorus.reduce_scatter_tensor(b, out, data(r, 6 * n, np.float32))
    full = sum(data(k, 6 * n, np.float64) for k in ranks)
    check(np.array_equal(out, full[6 * r:6 * (r + 1)].astype(np.float32)), f"{b} reduce_scatter_tensor")

    # all_to_all_single, equal blocks: block j of rank k is 1000 k + j
    inp = np.repeat(np.arange(n, dtype=np.int32) + 1000 * r, 3)
    out = np.zeros_like(inp)
    chorus.all_to_all_single(b, out, inp)
    check(np.array_equal(out, np.repeat(np.array([1000 * k + r for k in ranks], np.int32), 3)), f"{b} all_to_all_single")
    # with split sizes (rows of 2 elements): rank k sends j + 1 rows to rank j, all equal to 10 k + j
    inp = np.concatenate([np.full((j + 1, 2), 10 * r + j, np.float64) for j in ranks])
    out = np.zeros((n * (r + 1), 2), np.float64)
    chorus.all_to_all_single(b, out, inp, output_split_sizes=[r + 1] * n, input_split_sizes=[j + 1 for j in ranks])
    check(np.array_equal(out, np.concatenate([np.full((r + 1, 2), 10 * k + r, np.float64) for k in ranks])),
          f"{b} all_to_all_single with split sizes")
    # list form, sizes differ per pair: rank k sends k + j + 1 elements to rank j
    ins = [np.full(r + j + 1, 100 * r + j, np.int64) for j in ranks]
    outs = [np.zeros(k + r + 1, np.int64) for k in ranks]
    chorus.all_to_all(b, outs, ins)
    check(all(np.array_equal(outs[k], np.full(k + r + 1, 100 * k + r)) for k in ranks), f"{b} all_to_all (list)")

    if n > 1:  # a ring of send / recv, the odd ranks receiving first
        x = data(r, 8, np.float32)
        got = np.zeros(8, np.float32)
        if r % 2 == 0:
            chorus.send(b, x, dst=(r + 1) % n)
            chorus.recv(b, got, src=(r - 1) % n)
        else:
            chorus.recv(b, got, src=(r - 1) % n)
            chorus.send(b, x, dst=(r + 1) % n)
        check(np.array_equal(got, data((r - 1) % n, 8, np.float32)), f"{b} send/recv")
    chorus.barrier(b)

    # What a user can get wrong: named, typed errors, before anything is sent.
    expect_raises(TypeError, lambda: chorus.all_reduce(b, np.ones(4, np.bool_)), "element type")
    expect_raises(TypeError, lambda: chorus.all_reduce(b, [1.0, 2.0]), "numpy array or a torch CPU tensor")
    expect_raises(ValueError, lambda: chorus.all_reduce(b, np.ones((4, 4), np.float32)[:, 1]), "not contiguous")
    frozen = np.ones(4, np.float32)
    frozen.flags.writeable = False
    expect_raises(ValueError, lambda: chorus.all_reduce(b, frozen), "read-only")
    expect_raises(ValueError, lambda: chorus.all_gather_into_tensor(b, np.zeros(3, np.float32), np.zeros(2, np.float32)),
                  "expected")
    expect_raises(TypeError, lambda: chorus.all_gather_into_tensor(b, np.zeros(2 * n, np.float64), np.zeros(2, np.float32)),
                  "element types differ")
    expect_raises(ValueError, lambda: chorus.all_to_all_single(b, np.zeros(n, np.float32), np.zeros(n, np.float32),
                                                               input_split_sizes=[1] * (n + 1)), "split sizes")
    # Sizes no int64 holds, or past the rows, are named (not pybind11's "Unable to cast Python instance").
    expect_raises(ValueError, lambda: chorus.all_to_all_single(b, np.zeros(n, np.float32), np.zeros(n, np.float32),
                                                               input_split_sizes=[2 ** 64] + [0] * (n - 1)),
                  f"split size [0] = {2 ** 64} is not an integer of at most 63 bits")
    expect_raises(ValueError, lambda: chorus.all_to_all_single(b, np.zeros(n, np.float32), np.zeros(n, np.float32),
                                                               input_split_sizes=[2 ** 62] * n),
                  f"split size [0] = {2 ** 62} is more than the tensor's {n} rows")
    expect_raises(ValueError, lambda: chorus.all_to_all_single(b, np.zeros(n, np.float32), np.zeros(n, np.float32),
                                                               input_split_sizes=[1.5] * n), "is not an integer")
    expect_raises(ValueError, lambda: chorus.new_group(f"nobody-{b}", [], b), "no ranks: a group needs at least one member")
    expect_raises(ValueError, lambda: chorus.all_reduce("nope", np.ones(2, np.float32)), "unknown backend 'nope'")
    # Named all-reduce algorithms: each one's result checked.
    check("ring_p2p" in chorus.algorithm_names(b), f"{b} algorithm_names {chorus.algorithm_names(b)}")
    for a in chorus.algorithm_names(b):
        x = data(r, 1001, np.float32)
        chorus.all_reduce(f"{b}:{a}", x)
        check(np.array_equal(x, sum(data(k, 1001, np.int64) for k in ranks).astype(np.float32)), f"{b}:{a} all_reduce")
    expect_raises(ValueError, lambda: chorus.all_reduce(f"{b}:nope", np.ones(2, np.float32)), "no all_reduce algorithm 'nope'")
    # The named algorithms of the other operations that take them: each one's result checked.
    for a in chorus.algorithm_names(b, "broadcast"):
        x = data(r, 1001, np.int32)
        chorus.broadcast(f"{b}:{a}", x, src=n - 1)
        check(np.array_equal(x, data(n - 1, 1001, np.int32)), f"{b}:{a} broadcast")
    for a in chorus.algorithm_names(b, "all_gather"):
        out = np.zeros(1001 * n, np.float32)
        chorus.all_gather_into_tensor(f"{b}:{a}", out, data(r, 1001, np.float32))
        check(np.array_equal(out, np.concatenate([data(k, 1001, np.float32) for k in ranks])), f"{b}:{a} all_gather")
    for a in chorus.algorithm_names(b, "reduce_scatter"):
        out = np.zeros(1001, np.float32)
        chorus.reduce_scatter_tensor(f"{b}:{a}", out, data(r, 1001 * n, np.float32))
        full = sum(data(k, 1001 * n, np.float64) for k in ranks)
        check(np.array_equal(out, full[1001 * r:1001 * (r + 1)].astype(np.float32)), f"{b}:{a} reduce_scatter")
    for a in chorus.algorithm_names(b, "all_to_all_single"):
        inp = np.repeat(np.arange(n, dtype=np.int32) + 1000 * r, 101)
        out = np.zeros_like(inp)
        chorus.all_to_all_single(f"{b}:{a}", out, inp)
        check(np.array_equal(out, np.repeat(np.array([1000 * k + r for k in ranks], np.int32), 101)), f"{b}:{a} all_to_all")
    # Every backend has the runtime's point-to-point broadcast and all-gather (all three run them natively).
    check("linear_p2p" in chorus.algorithm_names(b, "broadcast") and "ring_p2p" in chorus.algorithm_names(b, "all_gather"),
          f"{b} algorithm_names of broadcast / all_gather")
    if b == "mpi":  # Open MPI 4.1's coll/tuned lists (ompi_info --param coll tuned --level 9)
        check({"binomial", "knomial", "pipeline"} <= set(chorus.algorithm_names(b, "broadcast")), "mpi broadcast algorithms")
        check({"bruck", "ring", "neighbor"} <= set(chorus.algorithm_names(b, "all_gather")), "mpi all_gather algorithms")
        check({"butterfly", "recursive_halving"} <= set(chorus.algorithm_names(b, "reduce_scatter")), "mpi reduce_scatter")
        check(("two_proc" in chorus.algorithm_names(b, "all_to_all_single")) == (n == 2), "mpi two_proc only on 2 ranks")
    expect_raises(ValueError, lambda: chorus.broadcast(f"{b}:nope", np.ones(2, np.float32), src=0), "no broadcast algorithm 'nope'")
    expect_raises(ValueError, lambda: chorus.algorithm_names(b, "nope"), "nope")


def smooth(rank, count, dtype):
    """What rank `rank` contributes to a compressed operation: a smooth signal (zfp compresses it)."""
    i = np.arange(count, dtype=np.float64)
    return (np.sin(i / 50.0 + rank) * (rank + 1) + 0.001 * i).astype(dtype)


def run_compressed(b):
    """chorus.compressed on backend b: every element within the bound (all_reduce: the bound plus
    the float additions' rounding, p * eps * (sum_k |x_k| + bound), as rt_compression_check
    derives it), the wire bytes falling as the bound loosens, and the errors a user can make."""
    r, n = chorus.rank(b), chorus.size(b)
    ranks = range(n)
    count = 3001 * n
    for dt in (np.float32, np.float64):
        eps = np.finfo(dt).eps
        inputs = [smooth(k, count, dt).astype(np.float64) for k in ranks]
        exact, magnitude = sum(inputs), sum(np.abs(x) for x in inputs)
        wire = []
        for tol in (1e-5, 1e-3, 1e-1):
            bound = f"abs:{tol}"
            x = smooth(r, count, dt)
            st = chorus.compressed.all_reduce(b, x, bound)
            allowed = tol + n * eps * (magnitude + tol)
            check(np.all(np.abs(x - exact) <= allowed), f"{b} compressed.all_reduce {dt.__name__} {bound}: "
                  f"worst error {np.max(np.abs(x - exact))}")
            wire.append(st["wire_bytes"])
            check(st["raw_bytes"] > 0, f"{b} compressed.all_reduce raw bytes {st}")
            out = np.zeros(count * n, dt)
            st = chorus.compressed.all_gather_into_tensor(b, out, smooth(r, count, dt), bound)
            check(np.all(np.abs(out - np.concatenate(inputs)) <= tol), f"{b} compressed.all_gather {dt.__name__} {bound}")
            if tol == 1e-1:
                check(st["wire_bytes"] < st["raw_bytes"], f"{b} compressed.all_gather at {bound} saves bytes: {st}")
            out = np.zeros(count, dt)
            chorus.compressed.all_to_all_single(b, out, smooth(r, count, dt), bound)
            block = count // n  # block r of every rank k
            want = np.concatenate([inputs[k][r * block:(r + 1) * block] for k in ranks])
            check(np.all(np.abs(out - want) <= tol), f"{b} compressed.all_to_all_single {dt.__name__} {bound}")
        check(wire[0] > wire[1] > wire[2], f"{b} compressed.all_reduce {dt.__name__}: wire bytes {wire} fall as the bound loosens")
        if n > 1:  # a ring of compressed send / recv, the odd ranks receiving first
            got = np.zeros(count, dt)
            send = lambda: chorus.compressed.send(b, smooth(r, count, dt), (r + 1) % n, "abs:1e-3")  # noqa: E731
            recv = lambda: chorus.compressed.recv(b, got, (r - 1) % n, "abs:1e-3")  # noqa: E731
            for step in ((send, recv) if r % 2 == 0 else (recv, send)):
                step()
            check(np.all(np.abs(got - inputs[(r - 1) % n]) <= 1e-3), f"{b} compressed send/recv {dt.__name__}")
    x = smooth(r, count, np.float32)
    chorus.compressed.all_reduce(b, x, "prec:20", op=chorus.ReduceOp.AVG)  # relative: no absolute guarantee to check
    check(np.allclose(x, sum(smooth(k, count, np.float64) for k in ranks) / n, rtol=0, atol=1e-3), f"{b} compressed AVG prec:20")
    expect_raises(TypeError, lambda: chorus.compressed.all_reduce(b, np.ones(4, np.int32), "abs:1"), "cannot be compressed")
    expect_raises(ValueError, lambda: chorus.compressed.all_reduce(b, np.ones(4, np.float32), "abs:-1"), "bound")
    expect_raises(ValueError, lambda: chorus.compressed.all_reduce(b, np.ones(4, np.float32), "zfp:3"), "abs:<tolerance>")
    expect_raises(ValueError, lambda: chorus.compressed.all_reduce(b, np.ones(4, np.float32), "abs:1", op=chorus.ReduceOp.MAX),
                  "max")
    # chorus.compressed.Compressor: the same collectives queued (they overlap with the program),
    # plain all-reduces on the same backend issued between them, everything waited for last.
    with chorus.compressed.Compressor(b) as cz:
        queued = []
        for k in range(4):
            x = smooth(r + k, count, np.float32)
            inputs = [smooth(j + k, count, np.float32).astype(np.float64) for j in ranks]
            if k % 2 == 0:
                allowed = 1e-3 + n * np.finfo(np.float32).eps * (sum(np.abs(v) for v in inputs) + 1e-3)
                queued.append((cz.all_reduce(x, "abs:1e-3"), x, sum(inputs), allowed, f"all_reduce #{k}"))
            else:
                out = np.zeros(count * n, np.float32)
                queued.append((cz.all_gather_into_tensor(out, x, "abs:1e-3"), out, np.concatenate(inputs), 1e-3,
                               f"all_gather #{k}"))
            plain = data(r, 9, np.int64) + k
            chorus.all_reduce(b, plain)
            check(np.array_equal(plain, sum(data(j, 9, np.int64) + k for j in ranks)), f"{b} plain all_reduce beside #{k}")
        for work, got, want, allowed, what in reversed(queued):
            work.wait()
            check(np.all(np.abs(got - want) <= allowed), f"{b} Compressor {what}: worst {np.max(np.abs(got - want))}")
        if n > 1:  # a ring of queued sends and receives, every rank sending first
            right, left = (r + 1) % n, (r - 1) % n
            out = np.zeros(count, np.float64)
            sent = cz.send(smooth(r + 7, count, np.float64), right, "abs:1e-4")
            got = cz.recv(out, left, "abs:1e-4")
            got.wait()
            sent.wait()
            check(np.all(np.abs(out - smooth(left + 7, count, np.float64)) <= 1e-4), f"{b} Compressor send/recv")
        st = cz.stats()
        check(n == 1 or 0 < st["wire_bytes"] < st["raw_bytes"], f"{b} Compressor stats {st}")
        expect_raises(TypeError, lambda: cz.all_reduce(np.ones(4, np.int32), "abs:1"), "cannot be compressed")
        expect_raises(TypeError, lambda: cz.send(np.ones(4, np.int32), 0, "abs:1"), "cannot be compressed")
    expect_raises(ValueError, lambda: cz.all_reduce(np.ones(4, np.float32), "abs:1"), "after close")


def run_fusion(backends):
    """chorus.Fusion: 300 small all-reduces on every backend and auto, several dtypes and sizes
    (a few larger than the buffer), fused, each result against numpy; then 200 broadcasts (every
    root), all-gathers, reduce-scatters and all-to-alls mixed and 150 reduces, gathers and scatters
    (every root), each checked; then a burst of three kinds alone, each fused."""
    r, n = chorus.rank(), chorus.size()
    choices = backends + ["auto"]
    with chorus.Fusion(backends, buffer_bytes=4096, cycle_us=100) as fusion:
        pending = []
        for i in range(300):
            dt = DTYPES[i % len(DTYPES)]
            count = (i * 37) % 300 if i % 50 else 3000  # 3000 elements: more than the 4 KiB buffer
            x = data(r, count, dt) + (i % 3)
            pending.append((fusion.all_reduce(choices[i % len(choices)], x), x, i, dt, count))
        for work, x, i, dt, count in reversed(pending):
            work.wait()
            want = sum(data(k, count, np.int64) + (i % 3) for k in range(n)).astype(dt)
            check(np.array_equal(x, want), f"Fusion all_reduce #{i} ({dt.__name__}, {count})")
        stats = fusion.stats()
        # How many operations one cycle collects depends on timing (a cycle starts T = 100 us after
        # its oldest entry or once B = 4 KiB are queued, with the count every rank has queued), so
        # the number of buffers grows with the load: 72-100 in 3-4 cycles on a quiet machine, 152
        # in 6 under CI's load. What fusion guarantees whatever the load: per cycle and kind
        # (backend, dtype), the kind's S bytes packed in order into buffers of at most B bytes,
        # at most 2 S / B + 1 of them (two consecutive buffers hold more than B), an operation
        # larger than B alone; summed: cycles x kinds + 2 x (small operations' bytes) / B + the
        # large ones. And fewer buffers than operations.
        kinds, small_bytes, alone = set(), 0, 0
        for _, x, i, dt, _ in pending:
            if x.nbytes > 4096:
                alone += 1
            else:
                kinds.add((choices[i % len(choices)], dt))
                small_bytes += x.nbytes
        bound = stats["cycles"] * len(kinds) + 2 * small_bytes // 4096 + alone
        check(stats["ops"] == 300 and stats["buffers"] <= bound and stats["buffers"] < 300,
              f"Fusion fused: {stats}, at most {bound} buffers expected")
        # Broadcasts (every root), all-gathers, reduce-scatters and all-to-alls, mixed, every backend
        # and auto, some past the buffer. `count` is per rank; wide inputs hold a block per rank.
        pending = []
        for i in range(350):
            dt = DTYPES[i % len(DTYPES)]
            count = (i * 37) % 300 if i % 50 else 3000
            b = choices[i % len(choices)]
            mine = slice(r * count, (r + 1) * count)
            root = i % n
            if i >= 200:  # reduces, gathers and scatters (every root; the root-only buffers None elsewhere)
                if i % 3 == 0:
                    x = data(r, count, dt) + (i % 3)
                    want = sum(data(k, count, np.int64) + (i % 3) for k in range(n)).astype(dt) if r == root else x.copy()
                    pending.append((fusion.reduce(b, x, root), x, want, f"reduce #{i} to {root}"))
                elif i % 3 == 1:
                    out = np.full(count * n, -1).astype(dt) if r == root else None
                    want = np.concatenate([data(k, count, dt) + (i % 3) for k in range(n)]) if r == root else None
                    pending.append((fusion.gather(b, out, data(r, count, dt) + (i % 3), root), out, want, f"gather #{i} to {root}"))
                else:
                    out = np.full(count, -1).astype(dt)
                    whole = data(root, count * n, dt) + (i % 3)
                    pending.append((fusion.scatter(b, out, whole if r == root else None, root), out, whole[mine],
                                    f"scatter #{i} from {root}"))
            elif i % 4 == 0:
                root = i % n
                x = data(r, count, dt) + (i % 3)
                pending.append((fusion.broadcast(b, x, root), x, data(root, count, dt) + (i % 3), f"broadcast #{i} from {root}"))
            elif i % 4 == 1:
                out = np.full(count * n, -1).astype(dt)
                want = np.concatenate([data(k, count, dt) + (i % 3) for k in range(n)])
                pending.append((fusion.all_gather_into_tensor(b, out, data(r, count, dt) + (i % 3)), out, want,
                                f"all_gather_into_tensor #{i}"))
            elif i % 4 == 2:
                out = np.full(count, -1).astype(dt)
                want = sum(data(k, count * n, np.int64) + (i % 3) for k in range(n))[mine].astype(dt)
                pending.append((fusion.reduce_scatter_tensor(b, out, data(r, count * n, dt) + (i % 3)), out, want,
                                f"reduce_scatter_tensor #{i}"))
            else:
                out = np.full(count * n, -1).astype(dt)
                want = np.concatenate([(data(k, count * n, dt) + (i % 3))[mine] for k in range(n)])
                pending.append((fusion.all_to_all_single(b, out, data(r, count * n, dt) + (i % 3)), out, want,
                                f"all_to_all_single #{i}"))
        for work, got, want, what in reversed(pending):
            work.wait()
            check(want is None or np.array_equal(got, want), f"Fusion {what} ({want is not None and got.dtype})")
        # The root-only tensor given where it is not (and missing where it is): refused before anything is queued.
        expect_raises(ValueError, lambda: fusion.gather(backends[0], None if r == 0 else np.zeros(2 * n, np.float32),
                                                        np.zeros(2, np.float32), 0), "on the root rank, None elsewhere")
        # A burst of one kind each: fused into far fewer operations.
        for kind in ("broadcast", "all_gather_into_tensor", "all_to_all_single"):
            before = fusion.stats()
            size = 16 * n if kind == "all_to_all_single" else 16
            xs = [data(r, size, np.float32) for _ in range(200)]
            outs = [np.zeros(16 * n, np.float32) for _ in range(200)]
            works = [fusion.broadcast(backends[0], x, 0) if kind == "broadcast" else
                     getattr(fusion, kind)(backends[0], o, x) for x, o in zip(xs, outs)]
            for w in works:
                w.wait()
            got = xs if kind == "broadcast" else outs
            want = {"broadcast": data(0, 16, np.float32),
                    "all_gather_into_tensor": np.concatenate([data(k, 16, np.float32) for k in range(n)]),
                    "all_to_all_single": np.concatenate([data(k, 16 * n, np.float32)[16 * r:16 * (r + 1)] for k in range(n)])}[kind]
            check(all(np.array_equal(g, want) for g in got), f"Fusion burst of {kind}")
            after = fusion.stats()
            check(after["buffers"] - before["buffers"] < 50, f"Fusion burst of 200 {kind}s: {after['buffers'] - before['buffers']} operations")
        # Uneven all-to-alls (split sizes, as an MoE dispatch): rank i sends s(i, j) rows of 3 to
        # rank j, every row 100 i + j + 1 (none at all for some pairs); a burst of 200, fused.
        before = fusion.stats()
        def rows(i, j, t):
            return (i * 3 + j + t) % 5
        burst = []
        for t in range(200):  # built first, so that the submissions come as fast as the other bursts'
            sends = [rows(r, j, t) for j in range(n)]
            gets = [rows(k, r, t) for k in range(n)]
            inp = np.concatenate([np.full((sends[j], 3), 100 * r + j + 1, np.float32) for j in range(n)])
            out = np.full((sum(gets), 3), -1, np.float32)
            want = np.concatenate([np.full((gets[k], 3), 100 * k + r + 1, np.float32) for k in range(n)])
            burst.append((inp, out, want, sends, gets))
        pending = [(fusion.all_to_all_single(backends[0], out, inp, output_split_sizes=gets, input_split_sizes=sends), out, want, t)
                   for t, (inp, out, want, sends, gets) in enumerate(burst)]
        for work, out, want, t in pending:
            work.wait()
            check(np.array_equal(out, want), f"Fusion uneven all_to_all_single #{t}")
        after = fusion.stats()
        check(after["buffers"] - before["buffers"] < 100, f"Fusion burst of 200 uneven all-to-alls: {after['buffers'] - before['buffers']} operations")
        expect_raises(ValueError, lambda: fusion.all_to_all_single(backends[0], np.zeros((4, 3), np.float32), np.zeros((4, 3), np.float32),
                                                                   output_split_sizes=[4] + [0] * (n - 1),
                                                                   input_split_sizes=[1] * (n + 1)), "split sizes for")
        expect_raises(ValueError, lambda: fusion.broadcast(backends[0], np.ones(2, np.float32), n), "root")
        expect_raises(ValueError, lambda: fusion.all_reduce("nope", np.ones(2, np.float32)), "not one of this fusion's")
    expect_raises(ValueError, lambda: fusion.all_reduce(backends[0], np.ones(2, np.float32)), "after close")


def run_flight_record(backends):
    """chorus.dump(): the rank's flight record (docs/flight-recorder.md), with the calls above in it."""
    b = backends[0]
    x = np.arange(5, dtype=np.float32)
    chorus.all_reduce(b, x)
    path = chorus.dump()
    check(os.path.basename(path) == f"rank-{chorus.rank()}.json", f"chorus.dump() wrote {path}")
    with open(path) as f:
        record = json.load(f)
    check(record["rank"] == chorus.rank() and record["world_size"] == chorus.size() and record["reason"] == "python",
          f"the record's header: rank {record['rank']}, reason {record['reason']}")
    comm = next(c for c in record["communicators"] if c["name"] == b)
    last = [e for e in comm["entries"] if e["seq"] is not None][-1]
    check(last["op"] == "all_reduce" and last["count"] == 5 and last["dtype"] == "f32" and last["layer"] == "python"
          and last["state"] == "completed" and last["seq"] == comm["collectives"] - 1,
          f"{b}: the last collective in the record is this all_reduce through Python: {last}")
    layers = {e["layer"] for c in record["communicators"] for e in c["entries"]}
    check("fusion" in layers, f"the fused operations are recorded as the fusion's (layers: {sorted(layers)})")


def main():
    wanted = sys.argv[1].split(",")
    # The flight record goes to a directory of this rank's own (removed at the end).
    dump_dir = os.environ.setdefault("CHORUS_RT_DUMP", tempfile.mkdtemp(prefix="chorus-dump-test-"))
    chorus.init(wanted)
    check(sorted(chorus.backends()) == sorted(wanted), f"backends() is {chorus.backends()}")
    for b in wanted:
        run(b)
        run_compressed(b)
    run_fusion(wanted)
    try:
        import torch  # noqa: F401  (python3-torch; the same calls on torch CPU tensors, no copies)
    except ImportError:
        torch = None
    if torch is not None:
        t = torch.arange(12, dtype=torch.float32) + chorus.rank()
        chorus.all_reduce(wanted[0], t)
        n = chorus.size()
        check(torch.equal(t, torch.arange(12, dtype=torch.float32) * n + n * (n - 1) / 2), "torch all_reduce in place")
        # bfloat16 (numpy has none): reduced as numbers in place on every backend; small integers
        # are exact in its 8-bit significand, so the sums are too.
        for b in wanted:
            t = torch.arange(12, dtype=torch.bfloat16) + chorus.rank()
            chorus.all_reduce(b, t, op=chorus.ReduceOp.MAX)
            check(torch.equal(t, torch.arange(12, dtype=torch.bfloat16) + (n - 1)), f"{b}: torch bfloat16 all_reduce MAX")
            t = torch.arange(12, dtype=torch.bfloat16) + chorus.rank()
            chorus.all_reduce(b, t)
            check(torch.equal(t, (torch.arange(12, dtype=torch.float32) * n + n * (n - 1) / 2).to(torch.bfloat16)),
                  f"{b}: torch bfloat16 all_reduce SUM")
            out = torch.zeros(3 * n, dtype=torch.bfloat16)
            chorus.all_gather_into_tensor(b, out, torch.full((3,), 0.5 + chorus.rank(), dtype=torch.bfloat16))
            check(torch.equal(out, torch.arange(n, dtype=torch.float32).repeat_interleave(3).add(0.5).to(torch.bfloat16)),
                  f"{b}: torch bfloat16 all_gather_into_tensor")
        expect_raises(ValueError, lambda: chorus.all_reduce(wanted[0], torch.zeros((4, 4), dtype=torch.bfloat16).t()),
                      "not contiguous")
    run_flight_record(wanted)
    chorus.finalize()
    if dump_dir.startswith(tempfile.gettempdir() + "/chorus-dump-test-"):
        shutil.rmtree(dump_dir, ignore_errors=True)
    print(f"{checks} checks passed on {','.join(wanted)}")


if __name__ == "__main__":
    main()
