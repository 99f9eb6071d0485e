#!/usr/bin/env python3
"""Ranks that disagree on a call made from Python (tests/python/disagree_rank.py): through the
bindings (chorus.all_reduce ...) and through torch.distributed's "chorus" backend, on shm, gloo
and mpi, without checking mode. Every rank must raise a RuntimeError whose message names its own
call and the peer's (written out by hand below), within the detection's bound (no timeout).

usage: test_python_disagreement.py CHORUS PYTHON RANK_PROGRAM MPIRUN
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bounds import SLACK, START_S, bound  # noqa: E402
from job_run import job_command, report, run_job  # noqa: E402

CHORUS, PYTHON, PROGRAM, MPIRUN = sys.argv[1:5]
failures = []

# case: (operation, rank 0's call, the other ranks' call)
CASES = {
    "all-reduce-count": ("all_reduce", "all_reduce of 4 f32 (sum)", "all_reduce of 8 f32 (sum)"),
    "avg-vs-sum": ("all_reduce", "all_reduce of 8 f32 (avg)", "all_reduce of 8 f32 (sum)"),
    "all-gather-count": ("all_gather", "all_gather of 4 f32 per rank", "all_gather of 8 f32 per rank"),
    "broadcast-algorithm": ("broadcast", "broadcast of 16 f32 from root 0 with algorithm {b}:linear_p2p",
                            "broadcast of 16 f32 from root 0 with the default algorithm"),
}


def run(api, backend, case, n):
    name = f"{api} {backend} {case} on {n} ranks"
    env = dict(os.environ, CHORUS_RT_TIMEOUT_S="5")
    job = run_job(job_command(backend, n, [PYTHON, PROGRAM, api, backend, case], CHORUS, MPIRUN, env), env, 120 * SLACK)
    if job is None:
        return report(name, job, [], failures)
    op, call0, call1 = (c.format(b=backend) for c in CASES[case])
    if api == "torch" and case == "all-gather-count":  # torch's backend moves gathered tensors as bytes
        call0, call1 = call0.replace("4 f32", "16 u8"), call1.replace("8 f32", "32 u8")
    if api == "torch" and case == "broadcast-algorithm":  # and broadcast ones
        call0, call1 = call0.replace("16 f32", "64 u8"), call1.replace("16 f32", "64 u8")
    problems = []
    for r in range(n):
        mine, peer, theirs = (call0, 1, call1) if r == 0 else (call1, 0, call0)
        if case == "broadcast-algorithm":  # the same call: the peer's algorithm only
            theirs = theirs[theirs.index("with "):]
        want = f"{backend} {op} on rank {r}: ranks disagree: rank {r} called {mine}, rank {peer} {theirs}"
        said = [line for line in job.lines if line.startswith(f"rank {r}: ")]
        # chorus.DisagreementError, through torch too (a subclass of RuntimeError, as torch's own)
        if len(said) != 1 or not said[0].startswith(f"rank {r}: error: DisagreementError: ") or want not in said[0]:
            problems.append(f"rank {r} said {said}, expected an error containing '{want}'")
    if job.returncode != 3:
        problems.append(f"exit status {job.returncode}, expected 3")
    if job.secs > bound(START_S):  # python and torch start slower than the C++ programs; no timeout
        problems.append(f"took {job.secs:.1f} s, bound {bound(START_S):.1f} s")
    report(name, job, problems, failures)


def run_fused_skip(backend):
    """torch under CHORUS_FUSION=on, rank 1 skipping an all-reduce and ending its group: rank 0's
    waiting all-reduce fails naming the fusion, a ValueError (it once spun for ever, ignoring the
    timeout);
    rank 1 completes."""
    name = f"torch {backend} fused-skip on 2 ranks"
    env = dict(os.environ, CHORUS_RT_TIMEOUT_S="5", CHORUS_FUSION="on")
    job = run_job(job_command(backend, 2, [PYTHON, PROGRAM, "torch", backend, "fused-skip"], CHORUS, MPIRUN, env,
                              every_rank_ends=True), env, 120 * SLACK)
    if job is None:
        return report(name, job, [], failures)
    want = ("rank 0: error: ValueError: fusion on rank 0: 1 fused operation(s) submitted on this rank (2 in all; "
            "the first waiting a fused all_reduce of 16 elements of f32) were not submitted on every rank: some rank "
            "stopped its fusion after 1")
    problems = [f"expected once: '{line}'" for line in (want, "rank 1: no error") if job.lines.count(line) != 1]
    if job.secs > bound(START_S):
        problems.append(f"took {job.secs:.1f} s, bound {bound(START_S):.1f} s")
    report(name, job, problems, failures)


# Every case and backend is checked in C++ (tests/rt/test_disagreement.py, and in threads by
# backends/test_thread_ranks.cpp); here what the Python layers add: each case once through the bindings,
# on a different backend each, and torch.distributed on every backend.
for backend, case in (("shm", "avg-vs-sum"), ("gloo", "all-gather-count"), ("mpi", "all-reduce-count")):
    run("rt", backend, case, 2)
for backend in ("shm", "gloo", "mpi"):
    run("torch", backend, "all-reduce-count", 2)
run("torch", "shm", "avg-vs-sum", 2)
run("torch", "gloo", "all-gather-count", 2)
run("torch", "gloo", "all-reduce-count", 4)
run("rt", "shm", "avg-vs-sum", 4)
# The algorithm is part of the call: a broadcast with linear_p2p on rank 0 alone (through torch,
# a CHORUS_BACKEND_MAP that differs by rank) once returned zeros on the other rank.
run("rt", "gloo", "broadcast-algorithm", 2)
run("torch", "gloo", "broadcast-algorithm", 2)
run("torch", "mpi", "broadcast-algorithm", 2)
run_fused_skip("gloo")

if failures:
    print("\n\n".join(failures))
    sys.exit(1)
print("every disagreement made from Python raised on every rank, naming both calls")
