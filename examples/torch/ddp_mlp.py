#!/usr/bin/env python3
"""A multi-layer perceptron trained with torch's DistributedDataParallel on the "chorus" backend:
data parallelism as most users write it. DDP buckets the gradients and all-reduces each bucket as
the backward pass produces it, so the communication overlaps the backward compute.

Every rank holds the same model (seed 0) and its own data (seed 100 + rank); the target is a fixed
random map of the input. Seeded throughout: the same command gives the same losses on every run.

usage: chorus launch -n 2 -- python3 examples/torch/ddp_mlp.py [--steps 20] [--json out.json]
Backends per operation: CHORUS_BACKEND_MAP (see examples/torch/moe.py).
"""
import argparse
import sys
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

import chorus  # noqa: F401  (registers "chorus")
from common import record_step, write_results


def main():
    ap = argparse.ArgumentParser(description="DDP MLP training on torch.distributed's chorus backend")
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--batch", type=int, default=256, help="samples per rank and step")
    ap.add_argument("--width", type=int, default=512, help="hidden layer width")
    ap.add_argument("--layers", type=int, default=4, help="hidden layers")
    ap.add_argument("--bucket-mb", type=float, default=1.0, help="DDP's bucket_cap_mb")
    ap.add_argument("--lr", type=float, default=0.01)
    ap.add_argument("--backend", default="chorus")
    ap.add_argument("--json")
    args = ap.parse_args()
    dist.init_process_group(args.backend)
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)
    sizes = [64] + [args.width] * args.layers
    layers = []
    for a, b in zip(sizes[:-1], sizes[1:]):
        layers += [torch.nn.Linear(a, b), torch.nn.ReLU()]
    net = DDP(torch.nn.Sequential(*layers, torch.nn.Linear(sizes[-1], 8)), bucket_cap_mb=args.bucket_mb)
    opt = torch.optim.SGD(net.parameters(), lr=args.lr)
    data = torch.Generator().manual_seed(100 + rank)
    target_map = torch.randn(64, 8, generator=torch.Generator().manual_seed(7)) / 8

    losses, step_ms = [], []
    for step in range(args.steps):
        start = time.perf_counter()
        x = torch.randn(args.batch, 64, generator=data)
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(net(x), torch.tanh(x @ target_map))
        loss.backward()
        opt.step()
        record_step(step, start, loss, losses, step_ms, rank, world)
    write_results(args.json, rank, model="ddp_mlp", ranks=world, backend=args.backend, losses=losses,
                  step_ms=step_ms, batch=args.batch, width=args.width, layers=args.layers)
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
