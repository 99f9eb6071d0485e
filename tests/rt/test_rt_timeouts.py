#!/usr/bin/env python3
"""Timeouts and failures of chorus::rt, per backend (docs/failures.md):
- a killed rank: every survivor's error names the failure and the dead rank ("rank 1 (pid N) died");
- a stalled rank: the error says the operation timed out and, where the backend can tell, which
  rank it waited for ("timed out waiting for rank 1");
- a message arriving after the receiver's timeout (rt_timeout): the receiver gets a TimeoutError
  naming the sender, a later operation on the broken backend fails fast naming the original
  failure, and the receive buffer is never written after the throw (poison check; under the
  sanitizer build a write after the buffer is freed is a reported use after free).

usage: test_rt_timeouts.py CHORUS RT_FAIL RT_TIMEOUT [MPIRUN]
"""
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bounds import SLACK, TERM_TO_KILL_S, bound  # noqa: E402
from rank_lines import expand  # noqa: E402

CHORUS, RT_FAIL, RT_TIMEOUT = sys.argv[1], sys.argv[2], sys.argv[3]
MPIRUN = sys.argv[4] if len(sys.argv) > 4 and sys.argv[4] else None
TIMEOUT_S = 2 * SLACK
failures = []


def run(name, cmd, expect_exit, must_match, max_seconds, must_not=()):
    env = dict(os.environ, CHORUS_RT_TIMEOUT_S=str(TIMEOUT_S), OMPI_ALLOW_RUN_AS_ROOT="1",
               OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    t0 = time.monotonic()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=120 * SLACK, env=env)
    except subprocess.TimeoutExpired:
        failures.append(f"{name}: HUNG")
        print(f"FAIL {name}: hung", flush=True)
        return
    secs = time.monotonic() - t0
    out = expand(p.stdout + p.stderr)  # one line per rank (tests/rt/rank_lines.py)
    problems = []
    if expect_exit == "nonzero":
        if p.returncode == 0:
            problems.append("exit status 0, expected non-zero")
    elif expect_exit is not None and p.returncode != expect_exit:
        problems.append(f"exit status {p.returncode}, expected {expect_exit}")
    for pattern, times, *at_most in must_match:  # a third element bounds the count from above
        found = len(re.findall(pattern, out))
        if found < times or (at_most and found > at_most[0]):
            problems.append(f"expected {times}{'-' + str(at_most[0]) if at_most else ''}x /{pattern}/ in the output, "
                            f"found {found}")
    for pattern in must_not:
        if re.search(pattern, out):
            problems.append(f"unexpected /{pattern}/ in the output")
    if secs > max_seconds:  # bound(...) of the design's time (tests/rt/bounds.py)
        problems.append(f"took {secs:.1f} s, bound {max_seconds:.1f} s")
    print(f"{'ok' if not problems else 'FAIL'} {name} ({secs:.1f} s, exit {p.returncode})", flush=True)
    if problems:
        failures.append(f"{name}: {'; '.join(problems)}\n--- output ---\n{out[-4000:]}")


launch = [CHORUS, "launch", "-n", "4", "--kill-grace-s", "5", "--"]
launch_stall = [CHORUS, "launch", "-n", "4", "--kill-grace-s", "2", "--"]
launch2 = [CHORUS, "launch", "-n", "2", "--kill-grace-s", "15", "--"]
KILLED_S = 5 + TERM_TO_KILL_S  # the survivors report at once; the launcher's grace, then its SIGKILL
STALLED_S = TIMEOUT_S + 2 + TERM_TO_KILL_S  # the survivors time out; the stalled rank is stopped after the grace
LATE_S = TIMEOUT_S + 5  # rank 1's late send at T + 5 s, then both finalize (tests/rt/rt_timeout.cpp)
MPIRUN_STOP_S = 5  # mpirun's own tear-down after a rank exits without MPI_Finalize
SANITIZER = [r"ERROR: AddressSanitizer", r"runtime error:"]
# The rank whose receive timed out finalizes a broken runtime: it does not wait for its peer, but
# counts itself in finalize's barrier, so the healthy peer finalizes at once (it used to wait for
# it until its deadline, the timeout and 10 s more, saying "waited N s for rank(s) 0").
NO_FINALIZE_WAIT = SANITIZER + [r"to reach finalize", r"did not all reach finalize"]
for backend in ["shm", "gloo"]:
    # Rank 1 is SIGKILLed before an all_reduce: the 3 survivors name it and its pid.
    run(f"{backend} killed rank names the rank", launch + [RT_FAIL, "--backend", backend, "--mode", "kill"],
        "nonzero", [(r"rank 1 \(pid \d+\) died", 3)], bound(KILLED_S))
    # Rank 1 never joins: the survivors time out with a communication error (shm can tell for
    # which rank it waited); the launcher stops the stalled rank 2 s after the first survivor exits.
    who = r"timed out waiting for rank 1" if backend == "shm" else r"timed out waiting for rank 1 \(which never reached"
    # shm also says once, after a second, whom each survivor waits for (not once a second).
    waiting = [(r"shm all_reduce: rank \d waiting for rank \d \(", 1, 3)] if backend == "shm" else []
    run(f"{backend} stalled rank times out", launch_stall + [RT_FAIL, "--backend", backend, "--mode", "stall"],
        "nonzero", [(who, 1), ("communication error", 1)] + waiting, bound(STALLED_S))
    run(f"{backend} late message never lands in a timed-out buffer",
        launch2 + [RT_TIMEOUT, "--backend", backend, "--timeout-s", str(TIMEOUT_S)], 0,
        [(r"rank 0: timeout after [\d.]+ s: .*timed out waiting for rank 1", 1),
         (r"rank 0: fail-fast names the original failure", 1),
         (r"rank 0: buffer untouched after the late send", 1), (r"rank 0: finalized", 1),
         # shm's ring takes the late message without the receiver; Gloo closed the connection
         # when rank 0's receive timed out, so rank 1's late send fails.
         (r"rank 1: sent late" if backend == "shm" else
          r"rank 1: late send failed: gloo send on rank 1 with rank 0: .*Connection closed by peer", 1)],
        bound(LATE_S), NO_FINALIZE_WAIT)

# gloo all-reduces up to 64 KiB take another path (Gloo's classic halving-doubling object over
# bound buffers, on their own connections; rt_fail's default 4 MiB takes the ring): the same
# two failures with 16 floats.
run("gloo small all_reduce: killed rank names the rank",
    launch + [RT_FAIL, "--backend", "gloo", "--mode", "kill", "--count", "16"],
    "nonzero", [(r"gloo all_reduce on rank \d: .*rank 1 \(pid \d+\) died", 3)], bound(KILLED_S))
run("gloo small all_reduce: stalled rank times out",
    launch_stall + [RT_FAIL, "--backend", "gloo", "--mode", "stall", "--count", "16"],
    "nonzero", [(r"gloo all_reduce on rank \d: timed out waiting for rank 1 \(which never reached", 1)],
    bound(STALLED_S))

if MPIRUN:
    mpirun = [MPIRUN, "-n", "2", "--oversubscribe"]
    # After the timeout rank 0 never calls MPI again (not even MPI_Finalize: an abandoned
    # request would progress), so mpirun reports an abnormal end: any exit status is accepted,
    # the checks are on rank 0's own lines.
    run("mpi late message never lands in a timed-out buffer",
        # 16 floats: small enough for Open MPI's inline eager send, which completes on rank 1
        # without rank 0 (at 1 KiB it needs rank 0 to progress, which it never does again).
        mpirun + [RT_TIMEOUT, "--backend", "mpi", "--timeout-s", str(TIMEOUT_S), "--count", "16"], None,
        [(r"rank 0: timeout after [\d.]+ s: mpi recv: rank 0 timed out waiting for rank 1", 1),
         (r"rank 0: fail-fast names the original failure", 1),
         (r"rank 0: buffer untouched after the late send", 1), (r"rank 0: finalized", 1),
         (r"rank 1: sent late", 1)],  # eager: the message reached rank 0, which never took it
        bound(LATE_S + MPIRUN_STOP_S), SANITIZER)
    # 256 floats (1 KiB) need the receiver's progress to complete: rank 0, which never calls
    # MPI again after its timeout, never completes it, so rank 1's send times out (at 2T + 1.5 s,
    # which rank 0 outlives: mpirun kills the others when a rank exits without MPI_Finalize).
    run("mpi late 1 KiB message is never progressed by the timed-out receiver",
        mpirun + [RT_TIMEOUT, "--backend", "mpi", "--timeout-s", str(TIMEOUT_S), "--count", "256",
                  "--hold-s", str(2 * TIMEOUT_S + 3)], None,
        [(r"rank 0: buffer untouched after the late send", 1),
         (r"rank 1: late send failed: mpi send: rank 1 timed out waiting for rank 0", 1)],
        bound(2 * TIMEOUT_S + 3 + MPIRUN_STOP_S), SANITIZER)  # rank 0 holds until --hold-s
    run("shm under mpirun, late message",
        mpirun + [RT_TIMEOUT, "--backend", "shm", "--timeout-s", str(TIMEOUT_S)], None,
        [(r"rank 0: buffer untouched after the late send", 1)], bound(LATE_S + MPIRUN_STOP_S), SANITIZER)

if failures:
    print("\n\n".join(failures))
    sys.exit(1)
print("every failure named its cause and rank; no buffer was written after its wait threw")
