#!/usr/bin/env python3
"""A peer that sends more than mpi's agreement rows have room for (as another build of chorus
might): rank 1's first part of each agreement row is rewritten by a preloaded MPI profiling
layer (mpi_row_tamper.c) to say a row of 1 MiB, or to be 64 bytes longer than a first part may
be, in an all-reduce of 16 KiB that both ranks call alike (rt_disagree --case agree-16k). Rank 0
must fail with a CommError naming rank 1 and the room, before any further receive or any write
past its buffers, and finalize; without the layer the same job succeeds on both ranks.
The expected messages are written out by hand below (16424 = 8 bytes of length + 32 of digest +
16384 of data).

usage: test_mpi_row_tamper.py RT_DISAGREE TAMPER_LIBRARY MPIRUN
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from bounds import SLACK  # noqa: E402
from job_run import job_command, report, run_job  # noqa: E402

RT_DISAGREE, LIBRARY, MPIRUN = sys.argv[1:4]
failures = []
ROOM = "every rank's row has 16424 bytes of room (do the ranks run the same build of chorus?)"
EXPECTED = {
    None: None,
    "length": f"mpi all_reduce on rank 0: rank 1 sent an agreement row of 1048576 bytes where {ROOM}",
    "part": "mpi all_reduce on rank 0: rank 1 sent more of its agreement row than a receive had room for, "
            "in a row of 16424 bytes of room received in parts of at most 4032 (do the ranks run the same build of "
            "chorus?)",
}

for mode, error in EXPECTED.items():
    name = f"mpi agreement row tampered ({mode or 'not'})"
    env = dict(os.environ, CHORUS_RT_TIMEOUT_S="5")
    program = [RT_DISAGREE, "--backend", "mpi", "--case", "agree-16k"]
    cmd = job_command("mpi", 2, program, None, MPIRUN, env, every_rank_ends=True)
    if mode is not None:
        cmd[1:1] = ["-x", f"LD_PRELOAD={LIBRARY}", "-x", f"CHORUS_TEST_ROW={mode}"]
    job = run_job(cmd, env, 60 * SLACK)
    if job is None:
        report(name, job, [], failures)
        continue
    wanted = ["rank 0: canaries intact", "rank 0: finalized"]
    if error is None:
        wanted += ["rank 0: no error", "rank 1: no error", "rank 0: exit 0", "rank 1: exit 0"]
    else:
        wanted += [f"rank 0: communication error: {error}", "rank 0: exit 3",
                   f"rank 0: later operation: backend mpi is unusable after an earlier failure: {error}"]
    problems = [f"expected once: '{line}' (found {job.lines.count(line)})"
                for line in wanted if job.lines.count(line) != 1]
    report(name, job, problems, failures)

if failures:
    print("\n\n".join(failures))
    sys.exit(1)
print("a peer's row past the room was refused, naming the peer, with every buffer intact")
