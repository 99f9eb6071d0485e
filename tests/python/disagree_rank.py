"""One rank of the Python-level disagreement test (tests/rt/test_python_disagreement.py): rank 0
makes one call, the other ranks another, through the Python bindings (chorus.all_reduce) or
torch.distributed's "chorus" backend, without checking mode. Prints "rank R: error: MESSAGE" and
exits 3 when the call raises, "rank R: no error" and exits 0 when it completes.

usage: disagree_rank.py rt|torch BACKEND CASE
    CASE: all-reduce-count, avg-vs-sum, all-gather-count, broadcast-algorithm (rank 0 broadcasts
    with BACKEND:linear_p2p: through torch, rank 0 alone has it in its CHORUS_BACKEND_MAP), or
    fused-skip (torch, under CHORUS_FUSION=on: rank 1 skips an all-reduce, then ends its group)
"""
import os
import sys

import numpy as np

API, BACKEND, CASE = sys.argv[1], sys.argv[2], sys.argv[3]

if API == "torch":
    import torch
    import torch.distributed as dist

    import chorus  # noqa: F401  (registers the "chorus" backend)

    rank0 = os.environ.get("RANK", os.environ.get("OMPI_COMM_WORLD_RANK")) == "0"
    algorithm = CASE == "broadcast-algorithm" and rank0
    os.environ["CHORUS_BACKEND_MAP"] = (f"broadcast:{BACKEND}:linear_p2p," if algorithm else "") + f"*:{BACKEND}"
    dist.init_process_group("chorus")
    rank, size = dist.get_rank(), dist.get_world_size()
else:
    import chorus

    chorus.init([BACKEND])
    rank, size = chorus.rank(), chorus.size()

first = rank == 0
try:
    if CASE == "all-reduce-count":
        n = 4 if first else 8
        if API == "torch":
            dist.all_reduce(torch.ones(n))
        else:
            chorus.all_reduce(BACKEND, np.ones(n, np.float32))
    elif CASE == "avg-vs-sum":
        if API == "torch":
            dist.all_reduce(torch.ones(8), op=dist.ReduceOp.AVG if first else dist.ReduceOp.SUM)
        else:
            chorus.all_reduce(BACKEND, np.ones(8, np.float32), op=chorus.ReduceOp.AVG if first else chorus.ReduceOp.SUM)
    elif CASE == "all-gather-count":
        n = 4 if first else 8
        if API == "torch":
            dist.all_gather_into_tensor(torch.zeros(size * n), torch.ones(n))
        else:
            chorus.all_gather_into_tensor(BACKEND, np.zeros(size * n, np.float32), np.ones(n, np.float32))
    elif CASE == "fused-skip":  # CHORUS_FUSION=on: rank 1 skips the second all-reduce and ends its group
        for i in range(2 if first else 1):
            dist.all_reduce(torch.ones(16))
        dist.destroy_process_group()
    elif CASE == "broadcast-algorithm":
        if API == "torch":
            dist.broadcast(torch.ones(16), 0)
        else:
            chorus.broadcast(f"{BACKEND}:linear_p2p" if first else BACKEND, np.ones(16, np.float32), 0)
    said, code = f"rank {rank}: no error", 0
except (RuntimeError, ValueError) as e:  # chorus.CommError, its DisagreementError; an InputError (ValueError)
    said, code = f"rank {rank}: error: {type(e).__name__}: {e}", 3
os.write(1, (said + "\n").encode())  # one write: mpirun would join two ranks' partial lines
os._exit(code)  # the backend is broken after the error: no orderly shutdown to wait for
