"""A torch program that hangs: ten all_reduces of 1,009 float32 on the "chorus" backend, which rank 1
leaves one step early for destroy_process_group(). Rank 0 then waits in its tenth (collective seq 9)
until chorus launch's stall watch (--stall-timeout) asks both ranks for their flight records, and
`chorus doctor` must name rank 0 waiting in all_reduce seq 9 (issued by torch) and rank 1 in
finalize after 9 collectives (tests/launch/test_doctor_e2e.py).

    chorus launch -n 2 --stall-timeout 3 -- python3 tests/python/torch_leave_early_rank.py
"""
import torch
import torch.distributed as dist

import chorus  # noqa: F401  (registers the "chorus" backend)

dist.init_process_group("chorus")
rank = dist.get_rank()
t = torch.ones(1009)
for _ in range(9 if rank == 1 else 10):
    dist.all_reduce(t)
dist.destroy_process_group()
print(f"rank {rank} done")
