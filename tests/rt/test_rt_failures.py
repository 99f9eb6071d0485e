#!/usr/bin/env python3
"""Failure tests of chorus::rt: a killed rank, a stalled rank and mismatched arguments must end
in clear errors within a bounded time (never a hang); an unknown backend name lists the
available ones and exits 2.

usage: test_rt_failures.py CHORUS RT_FAIL [MPIRUN]
"""
import os
import re
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bounds import FINALIZE_GRACE_S, SLACK, TERM_TO_KILL_S, bound  # noqa: E402
from rank_lines import expand  # noqa: E402

CHORUS, RT_FAIL = sys.argv[1], sys.argv[2]
MPIRUN = sys.argv[3] if len(sys.argv) > 3 and sys.argv[3] else None
TIMEOUT_S = 3  # operation timeout given to the ranks
failures = []


def run(name, cmd, expect_exit, must_contain, max_seconds, env_extra=None):
    env = dict(os.environ, CHORUS_RT_TIMEOUT_S=str(TIMEOUT_S), OMPI_ALLOW_RUN_AS_ROOT="1",
               OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    env.update(env_extra or {})
    t0 = time.monotonic()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=90 * SLACK, env=env)
    except subprocess.TimeoutExpired:
        failures.append(f"{name}: HUNG (no exit within {90 * SLACK:.0f} s)")
        print(f"FAIL {name}: hung", flush=True)
        return
    secs = time.monotonic() - t0
    out = expand(p.stdout + p.stderr)  # one line per rank (tests/rt/rank_lines.py)
    problems = []
    if expect_exit == "nonzero":
        if p.returncode == 0:
            problems.append("exit status 0, expected non-zero")
    elif p.returncode != expect_exit:
        problems.append(f"exit status {p.returncode}, expected {expect_exit}")
    for text, times, *at_most in must_contain:
        # "re:PATTERN" counts the lines matching a regular expression; else plain occurrences. A
        # third element bounds the count from above.
        found = (sum(1 for line in out.splitlines() if re.search(text[3:], line)) if text.startswith("re:")
                 else out.count(text))
        if found < times or (at_most and found > at_most[0]):
            problems.append(f"expected {times}{'-' + str(at_most[0]) if at_most else ''}x '{text}' in the output, "
                            f"found {found}")
    if secs > max_seconds:  # bound(...) of the design's time (tests/rt/bounds.py)
        problems.append(f"took {secs:.1f} s, bound {max_seconds:.1f} s")
    status = "ok" if not problems else "FAIL"
    print(f"{status} {name} ({secs:.1f} s, exit {p.returncode})", flush=True)
    if problems:
        failures.append(f"{name}: {'; '.join(problems)}\n--- output ---\n{out[-3000:]}")


# A killed rank must be named, with its signal. The launcher's exit status (src/launch/launcher.h)
# is the first failing rank's: rank 1 raised SIGKILL, so 128 + 9.
SIGKILL_EXIT = 128 + signal.SIGKILL
KILLED_RANK_1 = [("chorus launch: rank 1 (pid ", 1), (f"was killed by signal {int(signal.SIGKILL)}", 1)]
KILL_GRACE_S = 3
launch = [CHORUS, "launch", "-n", "4", "--kill-grace-s", str(KILL_GRACE_S), "--"]
# A failed rank: the others report at once, the launcher stops what is left after its grace.
STOPPED_S = KILL_GRACE_S + TERM_TO_KILL_S
MPIRUN_STOP_S = 5  # mpirun's own tear-down of the job after a rank's death or error exit
for backend in ["shm", "gloo"]:
    # The victim dies: every survivor reports a communication error well before the grace ends;
    # shm's survivors name the dead rank themselves (gloo's see only a closed connection).
    # A late survivor may see more ranks gone (those that reported and exited): it names them all.
    survivors_name_it = ([(r"re:communication error .*shm all_reduce: .*rank 1 \(pid \d+\) died.*; rank \d cannot complete", 3)]
                         if backend == "shm" else [])
    run(f"{backend} killed rank", launch + [RT_FAIL, "--backend", backend, "--mode", "kill"], SIGKILL_EXIT,
        [("communication error", 3), ("finalized after the error", 3)] + KILLED_RANK_1 + survivors_name_it, bound(STOPPED_S))
    # The victim dies with a tensor fusion made: the survivors' queued operations get the error of
    # the cycle's agreement at once (naming the dead rank on shm), not a timeout of their waits.
    run(f"{backend} killed rank under fusion", launch + [RT_FAIL, "--backend", backend, "--mode", "fused-kill"], SIGKILL_EXIT,
        [("communication error", 3), ("finalized after the error", 3)] + KILLED_RANK_1 +
        ([(r"re:communication error .*rank 1 \(pid \d+\) died", 3)] if backend == "shm" else []), bound(STOPPED_S))
    # The victim aborts (rt::abort) 0.5 s into an all-reduce the others join only 2 s in: its own
    # call ends at once with the abort's reason, well before the 3 s timeout; the others' calls
    # fail as they start, naming the victim's abort.
    run(f"{backend} aborted rank", launch + [RT_FAIL, "--backend", backend, "--mode", "abort"], 3,
        [(r"re:rank 1: communication error after [0-2]\.\d+ s: .*(rank 1 aborted|aborted on rank 1: gave up)", 1),
         (r"re:rank [023]: communication error .*aborted on rank 1: gave up on purpose", 3)], bound(2 + STOPPED_S))
    # (A victim that never joins, the survivors giving up after the operation timeout: run once,
    # by test_rt_timeouts.py, which also checks that they name the rank they waited for.)
    # A different count on one rank: checking mode stops every rank with an input error.
    run(f"{backend} mismatched sizes", launch + [RT_FAIL, "--backend", backend, "--mode", "mismatch"], 2,
        [("ranks disagree", 4)], bound(0))
    # One rank reaches finalize 2.5 s late: the others wait for it, say once whom they wait for
    # (after a second at this timeout), and then finalize normally.
    run(f"{backend} late finalize", launch + [RT_FAIL, "--backend", backend, "--mode", "late-finalize"], 0,
        [(r"re:finalize on rank [023]: waiting for rank\(s\) 1 to reach finalize", 3, 3), ("finalized after", 4)],
        bound(2.5))
    # One rank never finalizes: the others give up at finalize's deadline (timeout + 10 s grace),
    # name it, and still exit cleanly. (The barrier is the store's, whatever the backend: once.)
    if backend == "shm":
        run(f"{backend} missing finalize", launch + [RT_FAIL, "--backend", backend, "--mode", "no-finalize"], 0,
            [(r"re:finalize on rank [023]: the ranks did not all reach finalize \(rank\(s\) 1 did not arrive within", 3),
             ("finalized after", 3)], bound(TIMEOUT_S + FINALIZE_GRACE_S))

if MPIRUN:
    mpirun = [MPIRUN, "-n", "4", "--oversubscribe"]
    # Open MPI 4 names the rank and the signal, and exits with the killed rank's 128 + signal.
    MPI_KILLED_RANK_1 = [("process rank 1 with PID", 1), (f"exited on signal {int(signal.SIGKILL)} (Killed)", 1)]
    run("mpi killed rank", mpirun + [RT_FAIL, "--backend", "mpi", "--mode", "kill"], SIGKILL_EXIT,
        MPI_KILLED_RANK_1, bound(MPIRUN_STOP_S))
    run("mpi stalled rank", mpirun + [RT_FAIL, "--backend", "mpi", "--mode", "stall"], "nonzero",
        [("did not complete within", 1)], bound(TIMEOUT_S + TIMEOUT_S + FINALIZE_GRACE_S + MPIRUN_STOP_S))
    run("mpi mismatched sizes", mpirun + [RT_FAIL, "--backend", "mpi", "--mode", "mismatch"], "nonzero",
        [("ranks disagree", 1)], bound(MPIRUN_STOP_S))
    # An MPI operation cannot be abandoned: the victim's watchdog ends the job as soon as it
    # aborts with its all-reduce in flight, naming why (not after the others join 2 s in).
    run("mpi aborted rank", mpirun + [RT_FAIL, "--backend", "mpi", "--mode", "abort"], "nonzero",
        [("was in flight when the rank aborted (aborted on rank 1: gave up on purpose); aborting the job", 1)],
        bound(0.5 + MPIRUN_STOP_S))
    # (mpirun may stop the survivors before they report, so only mpirun's own line is required.)
    run("shm under mpirun, killed rank", mpirun + [RT_FAIL, "--backend", "shm", "--mode", "kill"], SIGKILL_EXIT,
        MPI_KILLED_RANK_1, bound(MPIRUN_STOP_S))

run("unknown backend", [CHORUS, "bench", "--backends", "nccl"], 2,
    [("unknown backend 'nccl'", 1), ("available: shm, mpi, gloo", 1)], bound(0))
run("launch of a missing program", [CHORUS, "launch", "-n", "2", "--", "/nonexistent/program"], "nonzero",
    [("cannot execute", 2)], bound(0))
run("launch without a program", [CHORUS, "launch", "-n", "2"], 2, [], bound(0))

if failures:
    print("\n\n".join(failures))
    sys.exit(1)
print("all failure cases ended in clear errors within their bounds")
