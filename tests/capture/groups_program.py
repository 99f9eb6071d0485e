"""A 2-rank torch program for tests/capture/test_capture.py, written as any user's would be (it
knows nothing of chorus capture, and asks for gloo): every step, after an SGD step on a tiny
model, one collective on each of three groups, each of its own size so that the test can tell
them apart:

  all_reduce of 16 floats (64 bytes)            on the world                  [0, 1]
  all_reduce of 32 floats (128 bytes)           on new_group([0, 1])          [0, 1]
  all_reduce of 8 floats (32 bytes)             on this rank's new_group([r]) [r]
  all_to_all_single of 2 x 4 floats (32 bytes)  on new_group([0, 1])          [0, 1]

With --marker the program has no optimizer and marks its steps with chorus.capture.step().

usage: chorus capture -n 2 -- /usr/bin/python3 groups_program.py [--steps 6] [--fail-at STEP] [--marker]
"""
import argparse
import sys

import torch
import torch.distributed as dist


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=6)
    ap.add_argument("--fail-at", type=int, default=-1, help="raise at this step (the bad-input test)")
    ap.add_argument("--marker", action="store_true", help="no optimizer: chorus.capture.step() ends a step")
    args = ap.parse_args()
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    pair = dist.new_group([0, 1])
    alone = [dist.new_group([0]), dist.new_group([1])]
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 2)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(args.steps):
        if step == args.fail_at:
            raise RuntimeError(f"failing at step {step} as asked")
        if args.marker:
            import chorus.capture
            chorus.capture.step()
        else:
            opt.zero_grad()
            torch.nn.functional.mse_loss(model(torch.ones(3, 4)), torch.zeros(3, 2)).backward()
            opt.step()
        dist.all_reduce(torch.ones(16))
        dist.all_reduce(torch.ones(32), group=pair)
        dist.all_reduce(torch.ones(8), group=alone[rank])
        out = torch.empty(8)
        dist.all_to_all_single(out, torch.ones(8), group=pair)
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
