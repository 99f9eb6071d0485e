#!/usr/bin/env python3
"""A torch program written for `chorus reproduce capture-validation` (docs/capture.md), not one of
examples/torch: other layer types and one more collective a step than the gradients' average.

Per step and rank: a token embedding, a 1-d convolution over the sequence, a layer norm, a GRU
cell unrolled over a few positions and a linear head; the gradients averaged by hand (one
all_reduce per parameter, after the backward pass), the SGD step, then an all_gather of the
step's loss and gradient norm (a metric every rank logs), which the next step waits for. It knows
nothing of chorus capture (it asks for gloo, as a user's program would). Seeded throughout.

usage: chorus capture -n 2 -- /usr/bin/python3 validation_program.py [--steps 10] [--batch 32]
"""
import argparse
import sys

import torch
import torch.distributed as dist


class Model(torch.nn.Module):
    def __init__(self, vocab, dim, positions):
        super().__init__()
        self.positions = positions
        self.embed = torch.nn.Embedding(vocab, dim)
        self.conv = torch.nn.Conv1d(dim, dim, kernel_size=3, padding=1)
        self.norm = torch.nn.LayerNorm(dim)
        self.cell = torch.nn.GRUCell(dim, dim)
        self.head = torch.nn.Linear(dim, vocab)

    def forward(self, tokens):  # tokens: (batch, length)
        x = self.embed(tokens).transpose(1, 2)                # (batch, dim, length)
        x = torch.relu(self.conv(x)).transpose(1, 2)          # (batch, length, dim)
        x = self.norm(x)
        h = x.new_zeros(x.shape[0], x.shape[2])
        for t in range(self.positions):                       # the last positions, one GRU step each
            h = self.cell(x[:, x.shape[1] - self.positions + t, :], h)
        return self.head(h)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--length", type=int, default=64)
    ap.add_argument("--dim", type=int, default=128)
    ap.add_argument("--vocab", type=int, default=2000)
    ap.add_argument("--positions", type=int, default=4)
    args = ap.parse_args()
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)
    model = Model(args.vocab, args.dim, args.positions)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    data = torch.Generator().manual_seed(100 + rank)
    metrics = [torch.zeros(2) for _ in range(world)]
    for step in range(args.steps):
        tokens = torch.randint(0, args.vocab, (args.batch, args.length), generator=data)
        target = tokens[:, -1]
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(tokens), target)
        loss.backward()
        norm = torch.zeros(())
        for p in model.parameters():
            dist.all_reduce(p.grad)
            p.grad /= world
            norm += p.grad.pow(2).sum()
        opt.step()
        dist.all_gather(metrics, torch.stack([loss.detach(), norm.sqrt()]))
        if rank == 0:
            print(f"step {step:3d}  loss {sum(m[0].item() for m in metrics) / world:.6f}", flush=True)
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
