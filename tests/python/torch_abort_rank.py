"""The torch backend's abort path, under chorus launch on 2 ranks (CHORUS_BACKEND_MAP picks shm or
gloo): after one all_reduce that both ranks join, rank 0 issues an asynchronous all_reduce that
rank 1 joins only 2 s later, and another thread of rank 0 calls chorus.distributed.abort() 0.3 s
in. Rank 0's work.wait() must raise a RuntimeError naming the reason well before the operation
timeout (CHORUS_RT_TIMEOUT_S, 30 s in the test); rank 1's call (its second at the latest: rank 0's
part of the first may already have arrived) must fail naming rank 0's abort, and any call of rank
1 that completes must hold both ranks' data. Rank 0 stays until rank 1 has seen it (torch's store,
which tells the reason, lives in rank 0's process); both ranks then destroy the group and exit 0.

    CHORUS_RT_TIMEOUT_S=30 CHORUS_BACKEND_MAP='*:gloo' chorus launch -n 2 -- python3 tests/python/torch_abort_rank.py
"""
import datetime
import sys
import threading
import time

import torch
import torch.distributed as dist

import chorus.distributed

REASON = "the torch test gave up"


def fail(msg):
    print(f"FAIL rank {dist.get_rank()}: {msg}", flush=True)
    sys.exit(1)


dist.init_process_group("chorus")
rank = dist.get_rank()
store = dist.distributed_c10d._get_default_store()
t = torch.ones(4096)
dist.all_reduce(t)
if not torch.equal(t, torch.full((4096,), 2.0)):
    fail(f"the first all_reduce gave {t[:4]}, expected 2.0 everywhere")
if rank == 0:
    aborter = threading.Timer(0.3, chorus.distributed.abort, args=(REASON,))
    aborter.start()
    start = time.monotonic()
    work = dist.all_reduce(torch.ones(4096), async_op=True)
    try:
        work.wait()
        fail("the all_reduce rank 1 had not joined completed")
    except RuntimeError as e:
        waited = time.monotonic() - start
        if f"aborted on rank 0: {REASON}" not in str(e):
            fail(f"the error does not name the abort: {e}")
        if waited > 10:
            fail(f"the abort ended the wait only after {waited:.1f} s")
        print(f"rank 0: the in-flight all_reduce ended {waited:.2f} s after it was issued: {e}", flush=True)
    aborter.join()
    store.wait(["rank 1 saw it"], datetime.timedelta(seconds=60))
else:
    time.sleep(2.0)
    error = None
    for call in range(2):
        x = torch.ones(4096)
        try:
            dist.all_reduce(x)
        except RuntimeError as e:
            error = str(e)
            break
        if call > 0:
            fail("a second all_reduce completed without rank 0")
        if not torch.equal(x, torch.full((4096,), 2.0)):
            fail(f"an all_reduce that completed holds {x[:4]}, not both ranks' data")
    if error is None or f"aborted on rank 0: {REASON}" not in error:
        fail(f"rank 1's call did not fail naming rank 0's abort: {error}")
    print(f"rank 1: {error}", flush=True)
    store.set("rank 1 saw it", "1")
dist.destroy_process_group()
print(f"rank {rank}: done", flush=True)
