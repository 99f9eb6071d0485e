#!/usr/bin/env python3
"""Ranks that disagree on a call on shm, without checking mode (tests/rt/rt_disagree.cpp), on 2
and 4 ranks: every rank involved must fail at once with a CommError naming its own call and the
first peer's that differs, leave every byte past its buffers untouched, fail a later operation
naming that error, and finalize. The expected messages are written out by hand below.

usage: test_shm_disagreement.py CHORUS RT_DISAGREE
"""
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bounds import SLACK, bound  # noqa: E402
from rank_lines import expand  # noqa: E402

CHORUS, RT_DISAGREE = sys.argv[1], sys.argv[2]
failures = []

# case: (rank 0's operation and call, the other ranks' operation and call)
SPLIT = {
    "broadcast-count-cma": (("broadcast", "broadcast of 2097152 u8 from root 0"),
                            ("broadcast", "broadcast of 1572864 u8 from root 0")),
    "broadcast-vs-reduce": (("broadcast", "broadcast of 2097152 u8 from root 0"),
                            ("reduce", "reduce of 1048576 f32 (sum) to root 0")),
    "all-reduce-count": (("all_reduce", "all_reduce of 4 f32 (sum)"), ("all_reduce", "all_reduce of 8 f32 (sum)")),
    "all-reduce-count-large": (("all_reduce", "all_reduce of 100000 f32 (sum)"),
                               ("all_reduce", "all_reduce of 200000 f32 (sum)")),
    "all-gather-count": (("all_gather", "all_gather of 4 f32 per rank"), ("all_gather", "all_gather of 8 f32 per rank")),
    "dtype": (("all_reduce", "all_reduce of 8 f32 (sum)"), ("all_reduce", "all_reduce of 4 f64 (sum)")),
    "reduce-op": (("all_reduce", "all_reduce of 8 f32 (sum)"), ("all_reduce", "all_reduce of 8 f32 (max)")),
    "all-reduce-vs-broadcast": (("all_reduce", "all_reduce of 8 f32 (sum)"),
                                ("broadcast", "broadcast of 8 f32 from root 0")),
}


def expected_errors(case, n):
    """rank -> its error message. Each rank names the lowest other rank whose call differs."""
    if case in SPLIT:
        (op0, call0), (op1, call1) = SPLIT[case]
        errors = {0: f"shm {op0} on rank 0: ranks disagree: rank 0 called {call0}, rank 1 {call1}"}
        for r in range(1, n):
            errors[r] = f"shm {op1} on rank {r}: ranks disagree: rank {r} called {call1}, rank 0 {call0}"
        return errors
    if case == "root":  # every rank names itself root
        return {r: f"shm broadcast on rank {r}: ranks disagree: rank {r} called broadcast of 8 f32 from root {r}, "
                   f"rank {1 if r == 0 else 0} broadcast of 8 f32 from root {1 if r == 0 else 0}" for r in range(n)}
    # rank 0 sends 32 bytes to rank 1 (then 1 MiB, which fills the ring), rank 1 receives 16 or 64
    buffer = 16 if case == "recv-smaller" else 64
    return {0: f"shm send on rank 0: ranks disagree: rank 0 sent 32 bytes, rank 1 received into {buffer} bytes",
            1: f"shm recv on rank 1: ranks disagree: rank 1 received into {buffer} bytes, rank 0 sent 32 bytes"}


def run(case, n):
    name = f"{case} on {n} ranks"
    env = dict(os.environ, CHORUS_RT_TIMEOUT_S="3")  # detection must not wait for it
    cmd = [CHORUS, "launch", "-n", str(n), "--kill-grace-s", "3", "--", RT_DISAGREE, "--case", case]
    t0 = time.monotonic()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=60 * SLACK, env=env)
    except subprocess.TimeoutExpired:
        failures.append(f"{name}: HUNG")
        print(f"FAIL {name}: hung", flush=True)
        return
    secs = time.monotonic() - t0
    lines = expand(p.stdout + p.stderr).splitlines()
    problems = []
    if p.returncode != 3:
        problems.append(f"exit status {p.returncode}, expected 3 (an error, canaries intact)")
    errors = expected_errors(case, n)
    for r, msg in errors.items():
        for line in [f"rank {r}: communication error: {msg}",
                     f"rank {r}: later operation: backend shm is unusable after an earlier failure: {msg}",
                     f"rank {r}: finalized"]:
            if lines.count(line) != 1:
                problems.append(f"expected once: '{line}' (found {lines.count(line)})")
    for r in range(n):
        if lines.count(f"rank {r}: canaries intact") != 1:
            problems.append(f"rank {r} did not report intact canaries")
    if secs > bound(0):  # no operation timeout: the ranks learn of it at their first step
        problems.append(f"took {secs:.1f} s, bound {bound(0):.1f} s")
    print(f"{'ok' if not problems else 'FAIL'} {name} ({secs:.1f} s, exit {p.returncode})", flush=True)
    if problems:
        failures.append(f"{name}: {'; '.join(problems)}\n--- output ---\n" + "\n".join(lines)[-3000:])


for case in list(SPLIT) + ["root", "recv-smaller", "recv-larger"]:
    for n in (2, 4):
        run(case, n)

if failures:
    print("\n\n".join(failures))
    sys.exit(1)
print("every disagreement failed on every rank involved, naming both calls, within its buffers")
