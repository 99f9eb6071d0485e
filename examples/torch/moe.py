#!/usr/bin/env python3
"""A small DeepSpeed-MoE-like model trained with torch.distributed on the "chorus" backend
(MCR-DL's Fig. 8 in miniature): all-to-all heavy.

Every rank holds one expert (expert parallelism) and a replica of the dense layers (data
parallelism). Per step and MoE layer: a top-1 gate routes each token to an expert, tokens travel to
their expert's rank with an all-to-all (fixed capacity per expert, as DeepSpeed-MoE's), the expert
runs, and a second all-to-all brings them back; after the backward pass the dense layers' gradients
are averaged with one all-reduce per parameter. Everything is seeded: the same command gives the
same losses on every run, and on every backend up to the order of floating-point sums.

Which chorus backend runs what comes from the environment (docs/python.md):
    CHORUS_BACKEND_MAP="all_to_all_single:gloo,all_reduce:shm"   (mixed)
    CHORUS_BACKEND_MAP="*:shm"                                   (one backend)

usage: chorus launch -n 4 -- python3 examples/torch/moe.py [--steps 20] [--json out.json]
       mpirun -n 4 python3 examples/torch/moe.py ...
Prints one line per step (rank 0); --json writes {"losses": [...], "step_ms": [...], ...}.
"""
import argparse
import sys
import time

import torch
import torch.distributed as dist
import torch.distributed.nn.functional as dfn

import chorus  # noqa: F401  (registers "chorus")
from common import average_gradients, record_step, write_results


class MoELayer(torch.nn.Module):
    """Top-1 gated mixture of experts, one expert per rank, fixed capacity per expert."""

    def __init__(self, dim, hidden, world, rank, capacity):
        super().__init__()
        self.world, self.capacity = world, capacity
        self.gate = torch.nn.Linear(dim, world)                      # replicated (data parallel)
        torch.manual_seed(1000 + rank)                               # each rank its own expert
        self.expert = torch.nn.Sequential(torch.nn.Linear(dim, hidden), torch.nn.ReLU(), torch.nn.Linear(hidden, dim))

    def forward(self, x):
        tokens, dim = x.shape
        probs = torch.softmax(self.gate(x), dim=-1)
        weight, expert = probs.max(dim=-1)
        # Slot of each token within its expert's capacity; tokens past capacity are dropped (as DeepSpeed's).
        onehot = torch.nn.functional.one_hot(expert, self.world)
        slot = (torch.cumsum(onehot, dim=0) - 1).gather(1, expert[:, None]).squeeze(1)
        keep = slot < self.capacity
        index = (expert * self.capacity + slot)[keep]
        dispatch = x.new_zeros(self.world * self.capacity, dim).index_copy(0, index, x[keep])
        arrived = dfn.all_to_all_single(torch.empty_like(dispatch), dispatch)   # tokens to their expert
        done = dfn.all_to_all_single(torch.empty_like(arrived), self.expert(arrived))  # and back
        out = x.new_zeros(tokens, dim)
        out[keep] = done.index_select(0, index) * weight[keep, None]
        return x + out


def main():
    ap = argparse.ArgumentParser(description="DeepSpeed-MoE-like training on torch.distributed's chorus backend")
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--tokens", type=int, default=256, help="tokens per rank and step")
    ap.add_argument("--dim", type=int, default=128)
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--layers", type=int, default=2, help="MoE layers")
    ap.add_argument("--lr", type=float, default=0.3)
    ap.add_argument("--backend", default="chorus", help="torch.distributed backend (chorus, or gloo to compare)")
    ap.add_argument("--json", help="write losses and step times here (rank 0)")
    args = ap.parse_args()
    dist.init_process_group(args.backend)
    rank, world = dist.get_rank(), dist.get_world_size()
    capacity = 2 * args.tokens // world  # twice the even share

    torch.manual_seed(0)  # replicated layers: the same on every rank
    head = torch.nn.Linear(args.dim, args.dim)
    moes = torch.nn.ModuleList([MoELayer(args.dim, args.hidden, world, rank, capacity) for _ in range(args.layers)])
    torch.manual_seed(0)
    for m in moes:  # gates equal on every rank (the experts stay each rank's own)
        m.gate.reset_parameters()
    replicated = list(head.parameters()) + [p for m in moes for p in m.gate.parameters()]
    params = list(head.parameters()) + list(moes.parameters())
    opt = torch.optim.SGD(params, lr=args.lr)
    data = torch.Generator().manual_seed(100 + rank)
    target_map = torch.randn(args.dim, args.dim, generator=torch.Generator().manual_seed(7)) / args.dim ** 0.5

    losses, step_ms = [], []
    for step in range(args.steps):
        dist.barrier()
        start = time.perf_counter()
        x = torch.randn(args.tokens, args.dim, generator=data)
        y = torch.tanh(x @ target_map)
        opt.zero_grad()
        h = x
        for m in moes:
            h = m(h)
        loss = torch.nn.functional.mse_loss(head(h), y)
        loss.backward()
        average_gradients(replicated, world)
        opt.step()
        record_step(step, start, loss, losses, step_ms, rank, world)
    write_results(args.json, rank, model="moe", ranks=world, backend=args.backend, losses=losses, step_ms=step_ms,
                  tokens=args.tokens, dim=args.dim, layers=args.layers)
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
