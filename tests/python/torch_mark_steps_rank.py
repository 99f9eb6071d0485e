"""A torch program whose steps the optimizer marks (tests/launch/test_mark_steps_e2e.py): five
steps alike on the "chorus" backend, each an all_reduce of 1,009 float32 and an SGD step; rank 1
skips the all_reduce of step 3 (0-based) but still steps its optimizer. Nothing in the program
marks steps: CHORUS_MARK_STEPS=optimizer (or chorus.capture) does, at each optimizer step. Rank 0
then waits in its fifth all_reduce (collective seq 4) while rank 1 is in destroy_process_group
after four, and `chorus doctor` must name step 3 as the one rank 1 issued no collective in.

    CHORUS_MARK_STEPS=optimizer chorus launch -n 2 --stall-timeout 3 -- python3 torch_mark_steps_rank.py
"""
import torch
import torch.distributed as dist

import chorus  # noqa: F401  (importing it registers the "chorus" backend)

SKIPPED_STEP = 3
dist.init_process_group("chorus")
rank = dist.get_rank()
weight = torch.nn.Parameter(torch.ones(4))
optimizer = torch.optim.SGD([weight], lr=0.1)
t = torch.ones(1009)
for step in range(5):
    weight.grad = torch.ones(4)
    if not (rank == 1 and step == SKIPPED_STEP):
        dist.all_reduce(t)
    optimizer.step()
dist.destroy_process_group()
print(f"rank {rank} done")
