"""A 2-rank pipeline-style torch program with point-to-point operations in the capture window
(docs/capture.md, "Point-to-point"), written as any user's would be (it asks for gloo and knows
nothing of chorus capture). Every step, rank 0 is stage 0 and rank 1 stage 1; each message has its
own size so that the tests can tell them apart:

  rank 0: mm; send 256 floats (1024 bytes) to 1;     ...; recv 128 floats (512 bytes) from 1
  rank 1: recv 256 floats from 0; mm; isend 128 floats (512 bytes) to 0, wait
  both:   all_reduce of 64 floats (256 bytes) on the world, then an SGD step

usage: chorus capture -n 2 -- /usr/bin/python3 p2p_program.py [--steps 6]
"""
import argparse
import sys

import torch
import torch.distributed as dist


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=6)
    args = ap.parse_args()
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.manual_seed(0)
    model = torch.nn.Linear(16, 16)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.ones(16, 16)
    for _ in range(args.steps):
        opt.zero_grad()
        if rank == 0:
            act = model(x)
            dist.send(torch.ones(256), dst=1)
            grad = torch.empty(128)
            dist.recv(grad, src=1)
        else:
            act = torch.empty(256)
            dist.recv(act, src=0)
            y = model(x)
            work = dist.isend(torch.ones(128), dst=0)
            work.wait()
            act = y
        act.sum().backward()
        dist.all_reduce(torch.ones(64))
        opt.step()
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
