#!/usr/bin/env python3
"""A small DLRM-like model trained with torch.distributed on the "chorus" backend (MCR-DL's Fig. 9 in
miniature): embeddings model-parallel with all-to-all, MLPs data-parallel with all-reduce.

Each rank owns tables/world of the embedding tables (table-wise sharding) and a replica of the
bottom and top MLPs. Per step: every rank looks up its tables for the whole global batch, an
all-to-all hands each rank its own slice of the batch from every table (model parallel -> data
parallel), the dot-product interaction and the top MLP run on the local slice; the backward pass
sends the embedding gradients back through the same all-to-all, and one all-reduce per MLP
parameter averages the dense gradients. Seeded throughout.

usage: chorus launch -n 4 -- python3 examples/torch/dlrm.py [--steps 20] [--json out.json]
Backends per operation: CHORUS_BACKEND_MAP (see examples/torch/moe.py).
"""
import argparse
import sys
import time

import torch
import torch.distributed as dist
import torch.distributed.nn.functional as dfn

import chorus  # noqa: F401  (registers "chorus")
from common import average_gradients, record_step, write_results


def mlp(sizes):
    layers = []
    for a, b in zip(sizes[:-1], sizes[1:]):
        layers += [torch.nn.Linear(a, b), torch.nn.ReLU()]
    return torch.nn.Sequential(*layers[:-1])


def main():
    ap = argparse.ArgumentParser(description="DLRM-like training on torch.distributed's chorus backend")
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--batch", type=int, default=256, help="samples per rank and step")
    ap.add_argument("--tables", type=int, default=8, help="embedding tables (a multiple of the world size)")
    ap.add_argument("--rows", type=int, default=5000, help="rows per table")
    ap.add_argument("--dim", type=int, default=64, help="embedding dimension")
    ap.add_argument("--dense", type=int, default=16, help="dense features")
    ap.add_argument("--lr", type=float, default=1.0)
    ap.add_argument("--backend", default="chorus")
    ap.add_argument("--json")
    args = ap.parse_args()
    dist.init_process_group(args.backend)
    rank, world = dist.get_rank(), dist.get_world_size()
    if args.tables % world:
        raise SystemExit(f"dlrm.py: --tables {args.tables} is not a multiple of the world size {world}")
    mine = args.tables // world  # tables rank r owns: r*mine .. r*mine+mine-1

    torch.manual_seed(0)  # the MLPs: the same on every rank
    bottom = mlp([args.dense, 128, args.dim])
    pairs = (args.tables + 1) * args.tables // 2
    top = mlp([args.dim + pairs, 256, 64, 1])
    torch.manual_seed(1000 + rank)  # this rank's tables
    tables = torch.nn.ModuleList([torch.nn.EmbeddingBag(args.rows, args.dim, mode="sum") for _ in range(mine)])
    for t in tables:  # as the DLRM reference initialises them: U(-1/sqrt(rows), 1/sqrt(rows))
        torch.nn.init.uniform_(t.weight, -args.rows ** -0.5, args.rows ** -0.5)
    dense_params = list(bottom.parameters()) + list(top.parameters())
    opt = torch.optim.SGD(dense_params + list(tables.parameters()), lr=args.lr)
    local = torch.Generator().manual_seed(100 + rank)
    shared = torch.Generator().manual_seed(5)  # the global batch's sparse indices: the same on every rank
    hot = 3  # indices per table and sample

    losses, step_ms = [], []
    for step in range(args.steps):
        dist.barrier()
        start = time.perf_counter()
        dense_x = torch.randn(args.batch, args.dense, generator=local)
        sparse = torch.randint(0, args.rows, (world * args.batch, args.tables, hot), generator=shared)
        mine_sparse = sparse[:, rank * mine:(rank + 1) * mine, :]
        label = (dense_x[:, :1] > 0).float()
        opt.zero_grad()
        # Model parallel: my tables for the whole global batch, (world*batch, mine, dim) ...
        looked = torch.stack([t(mine_sparse[:, k, :]) for k, t in enumerate(tables)], dim=1)
        # ... to data parallel: every rank's tables for my slice of the batch, (world, batch, mine, dim).
        send = looked.reshape(world, args.batch, mine, args.dim).contiguous()
        recv = dfn.all_to_all_single(torch.empty_like(send), send)
        emb = recv.permute(1, 0, 2, 3).reshape(args.batch, args.tables, args.dim)
        z = bottom(dense_x)
        feats = torch.cat([z[:, None, :], emb], dim=1)
        inter = feats @ feats.transpose(1, 2)
        iu = torch.triu_indices(args.tables + 1, args.tables + 1, offset=1)  # pairs of distinct features
        logits = top(torch.cat([z, inter[:, iu[0], iu[1]]], dim=1))
        loss = torch.nn.functional.binary_cross_entropy_with_logits(logits, label)
        loss.backward()
        average_gradients(dense_params, world)
        opt.step()
        record_step(step, start, loss, losses, step_ms, rank, world)
    write_results(args.json, rank, model="dlrm", ranks=world, backend=args.backend, losses=losses, step_ms=step_ms,
                  batch=args.batch, tables=args.tables, dim=args.dim)
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
