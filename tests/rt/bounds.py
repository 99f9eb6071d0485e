"""Wall-clock bounds of the failure tests, derived from the design rather than picked: the
time the design allows (operation timeouts, finalize's deadline, the launcher's grace), plus a
margin that scales with it (half of it again, for a loaded machine stretching every wait) and a
fixed part for starting the ranks and their runtimes on 2 oversubscribed cores; all times SLACK
(CHORUS_RT_TEST_SLACK, > 1 for sanitizer builds)."""
import os

SLACK = float(os.environ.get("CHORUS_RT_TEST_SLACK", "1"))
START_S = 8             # fork, exec and init of 4 ranks (gloo's connections, shm's segment) under load
FINALIZE_GRACE_S = 10   # finalize waits for the other ranks the operation timeout plus this (docs/runtime.md)
TERM_TO_KILL_S = 2      # the launcher's SIGTERM -> SIGKILL (src/launch/supervise.h)


def bound(design_s):
    return (1.5 * design_s + START_S) * SLACK
