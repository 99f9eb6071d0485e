"""Records the execution graphs in this directory (torch.profiler.ExecutionGraphObserver, Debian's
torch 1.13, gloo on the CPU): two ranks each of

  ddp       one training step of a 16-32-4 MLP under DistributedDataParallel (one gradient bucket)
  alltoall  a linear layer, an all_to_all_single of its output, another linear layer

and, around the same window, the torch profiler's trace of each (`<name>.<rank>.trace.json`, what
`export_chrome_trace` writes; this torch has no Kineto, so it is the legacy profiler's format: a list
of complete events with name, ts, dur and tid in microseconds, and empty args).

Run from the repository root: /usr/bin/python3 tests/data/pytorch_eg/record_graphs.py
"""
import os
import sys

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.profiler import ExecutionGraphObserver, ProfilerActivity, profile

HERE = os.path.dirname(os.path.abspath(__file__))


def record(rank, name, step):
    eg = ExecutionGraphObserver()
    eg.register_callback(os.path.join(HERE, f"{name}.{rank}.json"))
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        eg.start()
        step()
        eg.stop()
    eg.unregister_callback()
    prof.export_chrome_trace(os.path.join(HERE, f"{name}.{rank}.trace.json"))


def main(rank, world):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = "29541"
    dist.init_process_group("gloo", rank=rank, world_size=world)
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))
    ddp = torch.nn.parallel.DistributedDataParallel(model)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.1)
    x, y = torch.randn(8, 16), torch.randn(8, 4)

    def train_step():
        opt.zero_grad()
        torch.nn.functional.mse_loss(ddp(x), y).backward()
        opt.step()

    train_step()  # DDP's first step builds its buckets
    record(rank, "ddp", train_step)

    a, b = torch.nn.Linear(16, 64), torch.nn.Linear(64, 16)

    def dispatch():
        with torch.no_grad():
            h = a(x)
            out = torch.empty_like(h)
            dist.all_to_all_single(out, h)
            b(out)

    record(rank, "alltoall", dispatch)
    dist.destroy_process_group()


if __name__ == "__main__":
    mp.spawn(main, args=(2,), nprocs=2)
    sys.exit(0)
