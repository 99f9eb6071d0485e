#!/usr/bin/env python3
"""Ranks that disagree on a call, without checking mode (tests/rt/rt_disagree.cpp), on shm, gloo
or mpi, on 2 and 4 ranks: every rank involved must fail at once with a CommError naming its own
call and the first peer's that differs, leave every byte past its buffers untouched, fail a later
operation naming that error, and finalize. The expected messages are written out by hand below.

shm compares signatures on its data path, gloo and mpi exchange a digest of every collective's
call before it (docs/failures.md). A receive of the wrong size: on shm both ranks
fail (the sender learns of the refusal); on gloo and mpi the receiver fails naming both sizes
and the sender's message is never received (the sender is ended with the job).

usage: test_disagreement.py CHORUS RT_DISAGREE BACKEND [MPIRUN [CASE,...]]
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bounds import SLACK, bound  # noqa: E402
from job_run import job_command, report, run_job  # noqa: E402

CHORUS, RT_DISAGREE, BACKEND = sys.argv[1], sys.argv[2], sys.argv[3]
MPIRUN = sys.argv[4] if len(sys.argv) > 4 else "mpirun"
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
    "all-reduce-empty": (("all_reduce", "all_reduce of 0 f32 (sum)"), ("all_reduce", "all_reduce of 4 f32 (sum)")),
    # gloo, 2 ranks: rank 0's 1 MiB rides inside the agreement exchange, the others' 4 bytes more do not
    "all-reduce-count-edge": (("all_reduce", "all_reduce of 262144 f32 (sum)"),
                              ("all_reduce", "all_reduce of 262145 f32 (sum)")),
    "all-gather-count-edge": (("all_gather", "all_gather of 262144 f32 per rank"),
                              ("all_gather", "all_gather of 262145 f32 per rank")),
    # gloo and mpi, up to 8 ranks: both calls ride inside the agreement exchange, in rows of different lengths
    "all-reduce-count-inline": (("all_reduce", "all_reduce of 256 f32 (sum)"),
                                ("all_reduce", "all_reduce of 512 f32 (sum)")),
    "all-gather-count-inline": (("all_gather", "all_gather of 256 f32 per rank"),
                                ("all_gather", "all_gather of 512 f32 per rank")),
    "broadcast-count-inline": (("broadcast", "broadcast of 1024 u8 from root 0"),
                               ("broadcast", "broadcast of 2048 u8 from root 0")),
    # 4 ranks (gloo) and 2 ranks at 32 KiB (an edge mpi once had): calls of different sizes on either side
    "all-reduce-count-4k-edge": (("all_reduce", "all_reduce of 1024 f32 (sum)"),
                                 ("all_reduce", "all_reduce of 1025 f32 (sum)")),
    "all-reduce-count-32k-edge": (("all_reduce", "all_reduce of 8192 f32 (sum)"),
                                  ("all_reduce", "all_reduce of 8193 f32 (sum)")),
    # mpi, up to 4 ranks: both calls ride inside the agreement exchange, in rows of 3 and 5 parts;
    # then a row of 5 parts against the digest alone (16 KiB rides, 4 bytes more does not)
    "all-reduce-count-8k-16k": (("all_reduce", "all_reduce of 2048 f32 (sum)"),
                                ("all_reduce", "all_reduce of 4096 f32 (sum)")),
    "all-gather-count-8k-16k": (("all_gather", "all_gather of 2048 f32 per rank"),
                                ("all_gather", "all_gather of 4096 f32 per rank")),
    "all-reduce-count-16k-edge": (("all_reduce", "all_reduce of 4096 f32 (sum)"),
                                  ("all_reduce", "all_reduce of 4097 f32 (sum)")),
    "reduce-scatter-count": (("reduce_scatter", "reduce_scatter of 4 f32 per rank (sum)"),
                             ("reduce_scatter", "reduce_scatter of 8 f32 per rank (sum)")),
    "dtype": (("all_reduce", "all_reduce of 8 f32 (sum)"), ("all_reduce", "all_reduce of 4 f64 (sum)")),
    "reduce-op": (("all_reduce", "all_reduce of 8 f32 (sum)"), ("all_reduce", "all_reduce of 8 f32 (max)")),
    "avg-vs-sum": (("all_reduce", "all_reduce of 8 f32 (avg)"), ("all_reduce", "all_reduce of 8 f32 (sum)")),
    "named-algorithm-count": (("all_reduce", "all_reduce of 4 f32 (sum)"), ("all_reduce", "all_reduce of 8 f32 (sum)")),
    "all-reduce-vs-broadcast": (("all_reduce", "all_reduce of 8 f32 (sum)"),
                                ("broadcast", "broadcast of 8 f32 from root 0")),
}
if BACKEND != "shm":  # on shm these run as exchanges whose sizes are checked pair by pair (an InputError)
    SPLIT["all-to-all-count"] = (("all_to_all_single", "all_to_all_single of 4 f32 per rank"),
                                 ("all_to_all_single", "all_to_all_single of 8 f32 per rank"))
# case: (operation, call, rank 0's algorithm, the other ranks'): the same call with another algorithm
# (rank 0's ring_p2p against a call that rides inside gloo's and mpi's agreement exchange; the
# libraries' own algorithms, whose messages differ in number and size)
ALGORITHM = {
    "algorithm": ("all_reduce", "all_reduce of 16 f32 (sum)", f"algorithm {BACKEND}:ring_p2p", "the default algorithm"),
    "broadcast-algorithm": ("broadcast", "broadcast of 16 f32 from root 0", f"algorithm {BACKEND}:linear_p2p",
                            "the default algorithm"),
}
if BACKEND != "shm":
    ALGORITHM["library-algorithms"] = ("all_reduce", "all_reduce of 1048576 f32 (sum)", f"algorithm {BACKEND}:ring",
                                       f"algorithm {BACKEND}:" + ("bcube" if BACKEND == "gloo" else "recursive_doubling"))
# Tensor fusion's disagreements are InputErrors from the Fusion, which leave the backend usable.
# case: rank -> its error (the ranks without one complete their operations and exit 0)
FUSED = {
    "fused-extra": lambda n: {0: "fusion on rank 0: 1 fused operation(s) submitted on this rank (3 in all; the "
                                 "first waiting a fused all_reduce of 16 elements of f32) were not submitted on every "
                                 "rank: some rank stopped its fusion after 2"},
    "fused-buffer-bytes": lambda n: {
        r: f"fusion on rank {r}: ranks disagree on the fused buffer size B: this rank's is "
           f"{1048576 if r == 0 else 65536} bytes, the ranks' range from 65536 to 1048576 (every rank must use the same "
           "B, CHORUS_FUSION)" for r in range(n)},
}
CASES = (list(SPLIT) + list(ALGORITHM) + ["root", "recv-smaller", "recv-larger"] +
         (["all-to-allv-counts"] if BACKEND != "shm" else []) + list(FUSED))


def expected_errors(case, n):
    """rank -> its error message. Each rank names the lowest other rank whose call differs."""
    b = BACKEND
    if case in SPLIT:
        (op0, call0), (op1, call1) = SPLIT[case]
        errors = {0: f"{b} {op0} on rank 0: ranks disagree: rank 0 called {call0}, rank 1 {call1}"}
        for r in range(1, n):
            errors[r] = f"{b} {op1} on rank {r}: ranks disagree: rank {r} called {call1}, rank 0 {call0}"
        return errors
    if case in ALGORITHM:
        op, call, algorithm0, algorithm1 = ALGORITHM[case]
        errors = {0: f"{b} {op} on rank 0: ranks disagree: rank 0 called {call} with {algorithm0}, rank 1 with {algorithm1}"}
        for r in range(1, n):
            errors[r] = f"{b} {op} on rank {r}: ranks disagree: rank {r} called {call} with {algorithm1}, rank 0 with {algorithm0}"
        return errors
    if case == "root":  # every rank names itself root
        return {r: f"{b} broadcast on rank {r}: ranks disagree: rank {r} called broadcast of 8 f32 from root {r}, "
                   f"rank {1 if r == 0 else 0} broadcast of 8 f32 from root {1 if r == 0 else 0}" for r in range(n)}
    if case == "all-to-allv-counts":  # rank 0 sends 4 elements to each peer, which expect 8
        return {r: f"{b} all_to_allv on rank {r}: ranks disagree: in all_to_allv of f32, some rank sends a peer a "
                   "number of elements other than the peer expects from it (run with CHORUS_RT_CHECK=1 to name them)"
                for r in range(n)}
    # rank 0 sends 32 bytes to rank 1 (then 1 MiB), rank 1 receives 16 or 64
    buffer = 16 if case == "recv-smaller" else 64
    errors = {1: f"{b} recv on rank 1: ranks disagree: rank 1 received into {buffer} bytes, rank 0 sent 32 bytes"}
    if b == "shm":  # the sender learns of the refusal on the full ring
        errors[0] = f"shm send on rank 0: ranks disagree: rank 0 sent 32 bytes, rank 1 received into {buffer} bytes"
    return errors


def run_fused(case, n):
    """A fusion's disagreement: each rank named fails its Fusion's operation with an InputError
    (exit 3), the others complete theirs (exit 0), and every rank finalizes."""
    name = f"{BACKEND} {case} on {n} ranks"
    env = dict(os.environ, CHORUS_RT_TIMEOUT_S="3")
    cmd = job_command(BACKEND, n, [RT_DISAGREE, "--backend", BACKEND, "--case", case], CHORUS, MPIRUN, env,
                      every_rank_ends=True)
    job = run_job(cmd, env, 60 * SLACK)
    if job is None:
        return report(name, job, [], failures)
    errors = FUSED[case](n)
    problems = []
    for r in range(n):
        wanted = [f"rank {r}: input error: {errors[r]}", f"rank {r}: exit 3"] if r in errors else \
                 [f"rank {r}: no error", f"rank {r}: exit 0"]
        for line in wanted + [f"rank {r}: canaries intact", f"rank {r}: finalized"]:
            if job.lines.count(line) != 1:
                problems.append(f"expected once: '{line}' (found {job.lines.count(line)})")
    if job.secs > bound(0):  # not the operation timeout: the ranks learn of it from the fusion's cycles
        problems.append(f"took {job.secs:.1f} s, bound {bound(0):.1f} s")
    report(name, job, problems, failures)


def run(case, n):
    if case in FUSED:
        return run_fused(case, n)
    name = f"{BACKEND} {case} on {n} ranks"
    env = dict(os.environ, CHORUS_RT_TIMEOUT_S="3")  # detection must not wait for it
    # Every rank ends on its own after its error, except mpi's sender of a refused message, which
    # waits in MPI_Send until mpiexec ends the job (the receiver's non-zero exit ends it).
    sender_ended_with_job = BACKEND == "mpi" and case in ("recv-smaller", "recv-larger")
    cmd = job_command(BACKEND, n, [RT_DISAGREE, "--backend", BACKEND, "--case", case], CHORUS, MPIRUN, env,
                      every_rank_ends=not sender_ended_with_job)
    job = run_job(cmd, env, 60 * SLACK)
    if job is None:
        return report(name, job, [], failures)
    lines = job.lines
    problems = []
    errors = expected_errors(case, n)
    if (BACKEND != "mpi" or sender_ended_with_job) and job.returncode != 3:
        problems.append(f"exit status {job.returncode}, expected 3 (an error, canaries intact)")
    for r in errors:  # each rank's own status (under mpirun, mpiexec's can be 0: job_command)
        if lines.count(f"rank {r}: exit 3") != 1:
            problems.append(f"rank {r} did not exit 3 (an error, canaries intact)")
    for r, msg in errors.items():
        for line in [f"rank {r}: communication error: {msg}",
                     f"rank {r}: later operation: backend {BACKEND} is unusable after an earlier failure: {msg}",
                     f"rank {r}: finalized"]:
            if lines.count(line) != 1:
                problems.append(f"expected once: '{line}' (found {lines.count(line)})")
    involved = range(n) if case not in ("recv-smaller", "recv-larger") else (0, 1)
    for r in involved:
        if r in errors and lines.count(f"rank {r}: canaries intact") != 1:
            problems.append(f"rank {r} did not report intact canaries")
        if f"rank {r}: no error" in lines:
            problems.append(f"rank {r} completed its call")
        if any(line.startswith(f"rank {r}: canary damaged") for line in lines):
            problems.append(f"rank {r} wrote past a buffer")
    if BACKEND == "gloo" and case in ("recv-smaller", "recv-larger"):
        # The sender finds the receiver gone and says it ended on its own error (published by
        # its finalize()), not that it died.
        want = re.compile(r"rank 0: communication error: gloo send on rank 0: rank 1 \(pid \d+\) ended after its own "
                          r"failure: gloo recv on rank 1: ranks disagree")
        if not any(want.match(line) for line in lines):
            problems.append("rank 0 did not say that rank 1 ended after its own failure")
    if job.secs > bound(0):  # no operation timeout: the ranks learn of it before any data moves
        problems.append(f"took {job.secs:.1f} s, bound {bound(0):.1f} s")
    report(name, job, problems, failures)


for case in CASES if len(sys.argv) <= 5 else sys.argv[5].split(","):
    for n in (2, 4):
        run(case, n)

if failures:
    print("\n\n".join(failures))
    sys.exit(1)
print(f"every disagreement on {BACKEND} failed on every rank involved, naming both calls, within its buffers")
