"""A torch program that hangs or fails on purpose: ten all_reduces on the "chorus" backend, with a
fault put in by rank 1 (tests/launch/test_doctor_e2e.py and test_faults_e2e.py):

- no argument (or `leave`): ten all_reduces of 1,009 float32 which rank 1 leaves one step early for
  destroy_process_group(). Rank 0 then waits in its tenth (collective seq 9) until chorus launch's
  stall watch (--stall-timeout) asks both ranks for their flight records, and `chorus doctor` must
  name rank 0 waiting in all_reduce seq 9 (issued by torch) and rank 1 in finalize after 9
  collectives;
- `skip`: step i all-reduces 1000 + i floats and rank 1 skips step 4: at seq 4 rank 0 calls x1004,
  rank 1 x1005 (a disagreement);
- `kill` / `stop`: rank 1 sends itself SIGKILL / SIGSTOP before step 4: rank 0 waits in seq 4
  (continued, a stopped rank 1 sleeps until it is ended).
- `differ`: rank 1's step 4 is a broadcast from rank 0 where rank 0 all-reduces;
- `late`: all ten steps, rank 1 sleeping 50 ms before each; every rank writes its flight record
  (chorus.dump()) before destroy_process_group().

    chorus launch -n 2 --stall-timeout 3 -- python3 tests/python/torch_leave_early_rank.py [MODE]
"""
import os
import signal
import sys
import time

import torch
import torch.distributed as dist

import chorus  # (importing it registers the "chorus" backend)

mode = sys.argv[1] if len(sys.argv) > 1 else ""
dist.init_process_group("chorus")
rank = dist.get_rank()
t = torch.ones(1009)
for i in range(9 if rank == 1 and mode in ("", "leave") else 10):
    if rank == 1 and i == 4:
        if mode == "kill":
            os.kill(os.getpid(), signal.SIGKILL)
        if mode == "stop":
            os.kill(os.getpid(), signal.SIGSTOP)
            while True:  # continued: out of chorus until it is ended
                time.sleep(3600)
        if mode == "skip":
            continue
        if mode == "differ":
            dist.broadcast(t, 0)
            continue
    if mode == "late" and rank == 1:
        time.sleep(0.05)
    dist.all_reduce(torch.ones(1000 + i) if mode == "skip" else t)
if mode == "late":
    chorus.dump()
dist.destroy_process_group()
print(f"rank {rank} done")
