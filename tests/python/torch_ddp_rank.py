"""DistributedDataParallel over the "chorus" backend trains to the same losses as over torch's gloo.

Each rank builds the same model (seed 0) and trains it twice for STEPS steps on its own data
(seed 100 + rank): once with DDP on the default process group ("chorus"), once with DDP on a gloo
group, starting from the same weights. Gradients are averaged by DDP in both runs; on 2 ranks a
sum of two numbers does not depend on the order, so the losses must be bitwise equal; on more
ranks the reduction order may differ, so they must agree to 1e-5 relative (float32 rounding of
a few additions). The losses must also fall (the training does something).

    chorus launch -n 2 -- python3 tests/python/torch_ddp_rank.py
"""
import faulthandler
import signal
import sys

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

import chorus  # noqa: F401

faulthandler.register(signal.SIGUSR1, all_threads=True)  # tests/rt/watchdog.py asks for the stacks of a hung rank

STEPS = 30
dist.init_process_group("chorus")
RANK, WORLD = dist.get_rank(), dist.get_world_size()
GLOO = dist.new_group(backend="gloo")


def model():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 64), torch.nn.ReLU(),
                               torch.nn.Linear(64, 1))


def train(group):
    net = DDP(model(), process_group=group, bucket_cap_mb=0.01)  # several buckets
    opt = torch.optim.SGD(net.parameters(), lr=0.05)
    g = torch.Generator().manual_seed(100 + RANK)
    x = torch.randn(256, 32, generator=g)
    y = x[:, :4].sum(1, keepdim=True)
    losses = []
    for _ in range(STEPS):
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(net(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    params = torch.cat([p.detach().flatten() for p in net.parameters()])
    return losses, params


chorus_losses, chorus_params = train(None)  # the default group: chorus
gloo_losses, gloo_params = train(GLOO)
fail = None
if WORLD == 2 and (chorus_losses != gloo_losses or not torch.equal(chorus_params, gloo_params)):
    fail = f"2 ranks: not bitwise equal: {chorus_losses[-3:]} vs {gloo_losses[-3:]}"
elif WORLD != 2 and not torch.allclose(torch.tensor(chorus_losses), torch.tensor(gloo_losses), rtol=1e-5, atol=0):
    fail = f"losses differ beyond 1e-5 relative: {chorus_losses[-3:]} vs {gloo_losses[-3:]}"
elif not chorus_losses[-1] < 0.5 * chorus_losses[0]:
    fail = f"the loss did not fall: {chorus_losses[0]} -> {chorus_losses[-1]}"
# Every rank holds the same weights after DDP (checked through chorus itself).
mine = chorus_params.clone()
dist.broadcast(mine, src=0)
if fail is None and not torch.equal(mine, chorus_params):
    fail = "ranks disagree on the trained weights"
if fail:
    print(f"torch_ddp_rank: rank {RANK}: FAILED: {fail}", file=sys.stderr, flush=True)
    sys.exit(1)
if RANK == 0:
    print(f"torch_ddp_rank: {WORLD} ranks, {STEPS} steps: loss {chorus_losses[0]:.4f} -> {chorus_losses[-1]:.4f}, "
          f"chorus and gloo agree", flush=True)
dist.destroy_process_group()
