"""Every torch.distributed operation through the "chorus" backend, on every dtype torch offers for
it, checked element by element against values worked out here from the rank formula, and against
torch's own gloo backend on the same tensors wherever gloo runs the operation (torch 1.13's gloo
has no reduce_scatter, no list all_to_all and no AVG).

Run under torchrun, chorus launch or mpirun with 2 or 4 ranks:
    python3 -m torch.distributed.run --nproc_per_node 4 tests/python/torch_dist_rank.py
    chorus launch -n 2 -- python3 tests/python/torch_dist_rank.py
    mpirun -n 2 python3 tests/python/torch_dist_rank.py
With CHORUS_RT_LOG=PREFIX and CHORUS_TEST_EXPECT_BACKEND=NAME (run with CHORUS_BACKEND_MAP="*:NAME"),
each rank also checks in its communication log that every operation of the world group ran on NAME
and that every kind of operation was logged (sub-groups, logged as torch/<id>, run on their own
runtime group).
Exits 0 and rank 0 prints "torch_dist_rank: N checks passed" when every check holds.
"""
import faulthandler
import json
import os
import signal
import sys
import warnings

import torch
import torch.distributed as dist

import chorus  # noqa: F401  (registers the "chorus" backend)

faulthandler.register(signal.SIGUSR1, all_threads=True)  # tests/rt/watchdog.py asks for the stacks of a hung rank

warnings.filterwarnings("ignore", message=".*all_gather_coalesced will be deprecated")
dist.init_process_group("chorus")
RANK, WORLD = dist.get_rank(), dist.get_world_size()
GLOO = dist.new_group(backend="gloo")
CHECKS = 0

REDUCIBLE = [torch.float16, torch.bfloat16, torch.float32, torch.float64, torch.int8, torch.uint8, torch.int32,
             torch.int64]
MOVABLE = REDUCIBLE + [torch.bool, torch.int16, torch.complex64, torch.complex128]
# The dtypes torch 1.13's gloo moves (it refuses bfloat16, bool, int16 and, for broadcast, complex).
GLOO_DTYPES = {torch.float16, torch.float32, torch.float64, torch.int8, torch.uint8, torch.int32, torch.int64}
SIZES = [1, 7, 1000, 70000]  # 70000 x 8 bytes crosses the runtime's small/large message paths


def check(ok, what):
    global CHECKS
    if not ok:
        print(f"torch_dist_rank: rank {RANK}: FAILED: {what}", file=sys.stderr, flush=True)
        sys.exit(1)
    CHECKS += 1


def same(a, b, what):
    check(a.dtype == b.dtype and a.shape == b.shape and torch.equal(a, b), f"{what}: {a.flatten()[:8]} vs {b.flatten()[:8]}")


def data(rank, n, dtype, salt=0):
    """Small integers (exact in every dtype, sums of 4 ranks included): (i + salt) % 7 + rank + 1."""
    i = torch.arange(n, dtype=torch.int64)
    v = (i + salt) % 7 + rank + 1
    if dtype == torch.bool:
        return ((i + rank + salt) % 3) == 0
    if dtype.is_complex:
        return torch.complex(v.double(), -v.double()).to(dtype)
    return v.to(dtype)


def twin(t, fn_chorus, fn_gloo, what):
    """Runs fn on a clone through chorus and, for a dtype gloo takes, through gloo: the results must be equal."""
    a, b = t.clone(), t.clone()
    fn_chorus(a)
    if t.dtype in GLOO_DTYPES:
        fn_gloo(b)
        same(a, b, f"{what}: chorus vs gloo")
    return a


def test_all_reduce():
    ops = [dist.ReduceOp.SUM, dist.ReduceOp.PRODUCT, dist.ReduceOp.MIN, dist.ReduceOp.MAX]
    for dtype in REDUCIBLE:
        for n in SIZES:
            for op in ops:
                if op == dist.ReduceOp.PRODUCT:  # factors 1 or 2: products of 4 ranks stay exact
                    per = [1 + (torch.arange(n) + r) % 2 for r in range(WORLD)]
                else:
                    per = [data(r, n, torch.int64) for r in range(WORLD)]
                stack = torch.stack(per)
                want = {dist.ReduceOp.SUM: stack.sum(0), dist.ReduceOp.PRODUCT: stack.prod(0),
                        dist.ReduceOp.MIN: stack.min(0).values, dist.ReduceOp.MAX: stack.max(0).values}[op].to(dtype)
                got = twin(per[RANK].to(dtype), lambda t: dist.all_reduce(t, op=op),
                           lambda t: dist.all_reduce(t, op=op, group=GLOO), f"all_reduce {dtype} n={n} {op}")
                same(got, want, f"all_reduce {dtype} n={n} {op}")
            # AVG (gloo has none): the sum divided by the world size, truncated toward zero for integers.
            s = torch.stack([data(r, n, torch.int64) for r in range(WORLD)]).sum(0)
            want = (s.double() / WORLD).to(dtype) if dtype.is_floating_point else torch.div(s, WORLD, rounding_mode="trunc").to(dtype)
            t = data(RANK, n, dtype)
            dist.all_reduce(t, op=dist.ReduceOp.AVG)
            same(t, want, f"all_reduce {dtype} n={n} AVG")
    # bool as NCCL reduces it: SUM is or, PRODUCT is and.
    for n in SIZES:
        stack = torch.stack([data(r, n, torch.bool) for r in range(WORLD)])
        for op, want in ((dist.ReduceOp.SUM, stack.any(0)), (dist.ReduceOp.MAX, stack.any(0)),
                         (dist.ReduceOp.PRODUCT, stack.all(0)), (dist.ReduceOp.MIN, stack.all(0))):
            t = data(RANK, n, torch.bool)
            dist.all_reduce(t, op=op)
            same(t, want, f"all_reduce bool n={n} {op}")
    for dtype in (torch.complex64, torch.complex128):
        t = data(RANK, 1000, dtype)
        dist.all_reduce(t)
        same(t, sum(data(r, 1000, dtype) for r in range(WORLD)), f"all_reduce {dtype}")


def test_async_and_future():
    t = data(RANK, 4096, torch.float32)
    work = dist.all_reduce(t, async_op=True)
    fut = work.get_future()
    value = fut.wait()
    check(work.is_completed(), "all_reduce async: completed after its future")
    want = sum(data(r, 4096, torch.float32) for r in range(WORLD))
    same(value[0], want, "all_reduce future value")
    same(t, want, "all_reduce async in place")
    chained = dist.all_reduce(data(RANK, 16, torch.float64), async_op=True).get_future().then(lambda f: f.value()[0] * 2)
    same(chained.wait(), 2 * sum(data(r, 16, torch.float64) for r in range(WORLD)), "future.then")
    works = [dist.all_reduce(data(RANK, 100, torch.int32, salt=k), async_op=True) for k in range(20)]
    for w in works:
        w.wait()
    check(all(w.is_completed() for w in works), "20 outstanding all_reduces completed")


def test_broadcast_reduce():
    for dtype in MOVABLE:
        for root in range(WORLD):
            t = data(RANK, 1000, dtype, salt=root)
            got = twin(t, lambda x: dist.broadcast(x, src=root), lambda x: dist.broadcast(x, src=root, group=GLOO),
                       f"broadcast {dtype} root {root}")
            same(got, data(root, 1000, dtype, salt=root), f"broadcast {dtype} root {root}")
    for dtype in REDUCIBLE:
        root = WORLD - 1
        t = data(RANK, 1000, dtype)
        dist.reduce(t, dst=root)
        if RANK == root:
            same(t, sum(data(r, 1000, torch.int64) for r in range(WORLD)).to(dtype), f"reduce {dtype}")


def test_gathers():
    for dtype in MOVABLE:
        for n in (1, 1000):
            mine = data(RANK, n, dtype)
            want = [data(r, n, dtype) for r in range(WORLD)]
            outs = [torch.empty(n, dtype=dtype) for _ in range(WORLD)]
            outs_gloo = [torch.empty(n, dtype=dtype) for _ in range(WORLD)]
            dist.all_gather(outs, mine)
            if dtype in GLOO_DTYPES:
                dist.all_gather(outs_gloo, mine, group=GLOO)
            for r in range(WORLD):
                same(outs[r], want[r], f"all_gather {dtype} n={n} from {r}")
                if dtype in GLOO_DTYPES:
                    same(outs[r], outs_gloo[r], f"all_gather {dtype} n={n} chorus vs gloo")
            flat = torch.empty(WORLD * n, dtype=dtype)
            dist.all_gather_into_tensor(flat, mine)
            same(flat, torch.cat(want), f"all_gather_into_tensor {dtype} n={n}")
            root = 1 % WORLD
            gl = [torch.empty(n, dtype=dtype) for _ in range(WORLD)] if RANK == root else None
            dist.gather(mine, gather_list=gl, dst=root)
            if RANK == root:
                for r in range(WORLD):
                    same(gl[r], want[r], f"gather {dtype} n={n} from {r}")
            out = torch.empty(n, dtype=dtype)
            sl = [data(r, n, dtype, salt=5) for r in range(WORLD)] if RANK == root else None
            dist.scatter(out, scatter_list=sl, src=root)
            same(out, data(RANK, n, dtype, salt=5), f"scatter {dtype} n={n}")
    outs = [[torch.empty(3, dtype=torch.float32), torch.empty(5, dtype=torch.float32)] for _ in range(WORLD)]
    dist.all_gather_coalesced(outs, [data(RANK, 3, torch.float32), data(RANK, 5, torch.float32, salt=1)])
    for r in range(WORLD):
        same(outs[r][0], data(r, 3, torch.float32), "all_gather_coalesced [0]")
        same(outs[r][1], data(r, 5, torch.float32, salt=1), "all_gather_coalesced [1]")


def test_reduce_scatter():
    for dtype in REDUCIBLE:
        n = 777
        ins = [data(RANK, n, dtype, salt=j) for j in range(WORLD)]  # block j goes to rank j
        out = torch.empty(n, dtype=dtype)
        dist.reduce_scatter(out, ins)
        want = sum(data(r, n, torch.int64, salt=RANK) for r in range(WORLD)).to(dtype)
        same(out, want, f"reduce_scatter {dtype}")
        out2 = torch.empty(n, dtype=dtype)
        dist.reduce_scatter_tensor(out2, torch.cat(ins), op=dist.ReduceOp.MAX)
        same(out2, torch.stack([data(r, n, torch.int64, salt=RANK) for r in range(WORLD)]).max(0).values.to(dtype),
             f"reduce_scatter_tensor MAX {dtype}")


def block(src, dst, rows, cols, dtype):
    """What src sends to dst: rows x cols, values from (src, dst, position)."""
    v = (torch.arange(rows * cols, dtype=torch.int64).reshape(rows, cols) + 10 * src + 3 * dst) % 100
    return v.to(dtype)


def test_all_to_all():
    for dtype in MOVABLE:
        if dtype == torch.bool:
            continue
        cols = 3
        ins = torch.cat([block(RANK, j, 2, cols, dtype) for j in range(WORLD)])
        got = twin(torch.empty_like(ins), lambda o: dist.all_to_all_single(o, ins),
                   lambda o: dist.all_to_all_single(o, ins, group=GLOO), f"all_to_all_single {dtype}")
        same(got, torch.cat([block(j, RANK, 2, cols, dtype) for j in range(WORLD)]), f"all_to_all_single {dtype}")
        rows = lambda src, dst: (src + 2 * dst) % 3  # noqa: E731  uneven, some zero
        in_splits = [rows(RANK, j) for j in range(WORLD)]
        out_splits = [rows(j, RANK) for j in range(WORLD)]
        ins = torch.cat([block(RANK, j, rows(RANK, j), cols, dtype) for j in range(WORLD)])
        out = torch.empty(sum(out_splits), cols, dtype=dtype)
        out_gloo = torch.empty_like(out)
        dist.all_to_all_single(out, ins, out_splits, in_splits)
        want = torch.cat([block(j, RANK, rows(j, RANK), cols, dtype) for j in range(WORLD)])
        same(out, want, f"all_to_all_single splits {dtype}")
        if dtype in GLOO_DTYPES:
            dist.all_to_all_single(out_gloo, ins, out_splits, in_splits, group=GLOO)
            same(out, out_gloo, f"all_to_all_single splits {dtype}: chorus vs gloo")
        ins_list = [block(RANK, j, rows(RANK, j), cols, dtype) for j in range(WORLD)]
        outs_list = [torch.empty(rows(j, RANK), cols, dtype=dtype) for j in range(WORLD)]
        dist.all_to_all(outs_list, ins_list)
        for j in range(WORLD):
            same(outs_list[j], block(j, RANK, rows(j, RANK), cols, dtype), f"all_to_all list {dtype} from {j}")


def test_point_to_point():
    for dtype in (torch.float32, torch.bfloat16, torch.int64, torch.bool, torch.complex64):
        nxt, prv = (RANK + 1) % WORLD, (RANK - 1) % WORLD
        out = torch.empty(5000, dtype=dtype)
        reqs = [dist.isend(data(RANK, 5000, dtype), nxt), dist.irecv(out, prv)]
        for r in reqs:
            r.wait()
        same(out, data(prv, 5000, dtype), f"isend/irecv ring {dtype}")
        ops = [dist.P2POp(dist.isend, data(RANK, 100, dtype, salt=1), prv), dist.P2POp(dist.irecv, out[:100], nxt)]
        for r in dist.batch_isend_irecv(ops):
            r.wait()
        same(out[:100], data(nxt, 100, dtype, salt=1), f"batch_isend_irecv {dtype}")
    if RANK % 2 == 0 and RANK + 1 < WORLD:
        dist.send(data(RANK, 10, torch.float64), RANK + 1)
    elif RANK % 2 == 1:
        t = torch.empty(10, dtype=torch.float64)
        dist.recv(t, RANK - 1)
        same(t, data(RANK - 1, 10, torch.float64), "blocking send/recv")
    dist.barrier()


def test_sub_groups():
    """new_group with the chorus backend: a runtime group made by its members alone."""
    members = [0, WORLD - 1] if WORLD > 2 else [0, 1]
    sub = dist.new_group(ranks=members)  # every rank calls it; only members get a group
    evens = dist.new_group(ranks=list(range(0, WORLD, 2)))
    if RANK in members:
        t = data(RANK, 999, torch.float32)
        dist.all_reduce(t, group=sub)
        same(t, sum(data(r, 999, torch.float32) for r in members), f"sub-group {members} all_reduce")
        b = data(RANK, 10, torch.int64)
        dist.broadcast(b, src=members[-1], group=sub)  # src is a world rank
        same(b, data(members[-1], 10, torch.int64), f"sub-group {members} broadcast from world rank {members[-1]}")
        outs = [torch.empty(5, dtype=torch.bfloat16) for _ in members]
        dist.all_gather(outs, data(RANK, 5, torch.bfloat16), group=sub)
        for o, r in zip(outs, members):
            same(o, data(r, 5, torch.bfloat16), f"sub-group {members} all_gather from {r}")
    if RANK % 2 == 0:
        t = torch.full((3,), float(RANK))
        dist.all_reduce(t, op=dist.ReduceOp.MAX, group=evens)
        same(t, torch.full((3,), float(2 * ((WORLD - 1) // 2))), "even ranks' sub-group all_reduce MAX")
    everyone = dist.new_group()
    t = torch.ones(4)
    dist.all_reduce(t, group=everyone)
    same(t, torch.full((4,), float(WORLD)), "new_group() of every rank")


def raises(kind, fn, what, needle):
    try:
        fn()
    except kind as e:
        check(needle in str(e), f"{what}: message names {needle!r}: {e}")
        return
    except Exception as e:  # noqa: BLE001
        check(False, f"{what}: raised {type(e).__name__} ({e}), wanted {kind.__name__}")
    check(False, f"{what}: did not raise")


def test_bad_arguments():
    strided = torch.arange(20, dtype=torch.float32)[::2]
    raises(ValueError, lambda: dist.all_reduce(strided), "non-contiguous", "not contiguous")
    raises(ValueError, lambda: dist.all_gather_into_tensor(torch.empty(3), torch.empty(2)), "size mismatch", "elements")
    raises(TypeError, lambda: dist.all_reduce(torch.ones(4, dtype=torch.int16)), "int16 reduce", "int16" if False else "Short")
    raises(ValueError, lambda: dist.all_reduce(torch.ones(4), op=dist.ReduceOp.BAND), "BAND", "BAND")
    raises(ValueError, lambda: dist.send(torch.ones(2), (RANK + 1) % WORLD, tag=7), "tag", "tag 7")
    raises(ValueError, lambda: dist.all_reduce(torch.ones(2, dtype=torch.bool), op=dist.ReduceOp.AVG), "bool AVG", "AVG")
    # The group still works after the refused calls (nothing was sent).
    t = torch.ones(8)
    dist.all_reduce(t)
    same(t, torch.full((8,), float(WORLD)), "all_reduce after refused calls")


for test in (test_all_reduce, test_async_and_future, test_broadcast_reduce, test_gathers, test_reduce_scatter,
             test_all_to_all, test_point_to_point, test_sub_groups, test_bad_arguments):
    test()
dist.barrier()
if RANK == 0:
    print(f"torch_dist_rank: {CHECKS} checks passed on {WORLD} ranks ({dist.get_backend()})", flush=True)
# Destroying the group with operations in flight whose Works and tensors Python has dropped: it
# waits for them, and freeing those tensors (on the runtime's threads, when each operation ends)
# takes the GIL, which Python holds while it destroys the group. The destructor gives it up
# while it waits (it did not: a rare hang here, every time with these operations).
for k in range(20):
    dist.all_reduce(torch.full((1000,), float(k)), async_op=True)
dist.destroy_process_group()  # finalises the runtime: the log is complete

expect = os.environ.get("CHORUS_TEST_EXPECT_BACKEND")
if expect:
    with open(f"{os.environ['CHORUS_RT_LOG']}.{RANK}.jsonl") as f:
        records = [json.loads(line) for line in f][1:]
    world_records = [r for r in records if not r["backend"].startswith("torch/")]  # sub-groups run on their own
    backends = {r["backend"] for r in world_records}
    check(backends == {expect}, f"log: operations ran on {backends}, wanted only {expect}")
    ops = {r["op"] for r in world_records}
    wanted = {"all_reduce", "broadcast", "reduce", "all_gather", "gather", "scatter", "reduce_scatter",
              "all_to_all_single", "all_to_allv", "all_to_all", "send", "recv", "barrier"}
    check(wanted <= ops, f"log: missing operations {wanted - ops}")
    if RANK == 0:
        print(f"torch_dist_rank: the log shows {len(world_records)} operations of the world group, all on {expect}",
              flush=True)
