"""What the training examples share: the data-parallel gradient average, the step record, the JSON."""
import json
import time

import torch.distributed as dist


def average_gradients(params, world):
    """Data parallelism: one all-reduce per parameter, then the mean."""
    for p in params:
        dist.all_reduce(p.grad)
        p.grad /= world


def record_step(step, start, loss, losses, step_ms, rank, world):
    """Appends the step's time and its loss averaged over ranks (printed by rank 0)."""
    mean = loss.detach().clone()
    dist.all_reduce(mean)
    step_ms.append((time.perf_counter() - start) * 1e3)
    losses.append(mean.item() / world)
    if rank == 0:
        print(f"step {step:3d}  loss {losses[-1]:.6f}  {step_ms[-1]:8.2f} ms", flush=True)


def write_results(path, rank, **fields):
    """Rank 0 writes the run's record (losses, step times, shape) as JSON."""
    if rank == 0 and path:
        with open(path, "w") as f:
            json.dump(fields, f, indent=1)
