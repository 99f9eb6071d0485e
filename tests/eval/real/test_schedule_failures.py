#!/usr/bin/env python3
"""A rank killed in the middle of an executed schedule (chorus run collective) must end the job
with an error naming it, within the runtime's timeout: rank 2 of a 2x2 grid is SIGKILLed while
the schedule runs (paced, so that it runs long enough); the launcher must exit non-zero, name
rank 2 as killed, and at least one survivor's error must say that rank 2 died. Also: bad options
of `chorus run` are errors with exit status 2 that name the option.

usage: test_schedule_failures.py CHORUS
"""
import os
import signal
import subprocess
import sys
import time

CHORUS = sys.argv[1]
SLACK = float(os.environ.get("CHORUS_RT_TEST_SLACK", "1"))
TIMEOUT_S = 5
failures = []
env = dict(os.environ, CHORUS_RT_TIMEOUT_S=str(TIMEOUT_S))


def rank_pid(launcher_pid, rank, deadline):
    """The pid of the child of the launcher with CHORUS_RANK=rank."""
    while time.monotonic() < deadline:
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            try:
                with open(f"/proc/{pid}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
                if ppid != launcher_pid:
                    continue
                with open(f"/proc/{pid}/environ", "rb") as f:
                    if f"CHORUS_RANK={rank}".encode() in f.read().split(b"\0"):
                        return int(pid)
            except (OSError, IndexError, ValueError):
                continue
        time.sleep(0.05)
    return None


cmd = [CHORUS, "launch", "-n", "4", "--kill-grace-s", str(2 * TIMEOUT_S), "--", CHORUS, "run", "collective",
       "--grid", "2x2", "--size", "8MiB", "--chunks", "8", "--emulate", "--iters", "10000", "--dim-backends", "shm,gloo"]
t0 = time.monotonic()
p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
victim = rank_pid(p.pid, 2, t0 + 20 * SLACK)
if victim is None:
    p.kill()
    failures.append("could not find rank 2's process")
else:
    time.sleep(2.0 * SLACK)  # well inside the schedule's iterations
    os.kill(victim, signal.SIGKILL)
    killed_at = time.monotonic()
    try:
        out, _ = p.communicate(timeout=60 * SLACK)
    except subprocess.TimeoutExpired:
        p.kill()
        out, _ = p.communicate()
        failures.append("HUNG after rank 2 was killed")
    took = time.monotonic() - killed_at
    print(f"job ended {took:.1f} s after rank 2 was killed, exit {p.returncode}")
    if p.returncode == 0:
        failures.append("exit status 0 after a rank was killed")
    if f"rank 2 (pid {victim}) was killed by signal {int(signal.SIGKILL)}" not in out:
        failures.append("the launcher did not name rank 2 as killed")
    # Errors of a group name its ranks and map them to world ranks ("[in group 'grid-d2' on gloo:
    # group rank 0 = world rank 0, group rank 1 = world rank 2]"); a kill that lands in the
    # world-level barrier between iterations is named with the world rank directly.
    def names_world_rank_2(line):
        if "[in group" in line:
            return "= world rank 2" in line
        return f"rank 2 (pid {victim}) died" in line
    named = [line for line in out.splitlines()
             if f"(pid {victim}) died" in line and "communication error" in line and names_world_rank_2(line)]
    if not named:
        failures.append("no survivor's error says that rank 2 (world) died")
    if took > (TIMEOUT_S + 2 * TIMEOUT_S + 10) * SLACK:
        failures.append(f"took {took:.1f} s after the kill, more than the timeout and grace allow")
    if failures:
        print(out[-4000:])

# Bad options: exit 2, naming the option (one process, no launcher needed).
for args, needle in [(["--grid", "2x0"], "--grid"), (["--op", "broadcast"], "--op"),
                     (["--scheduler", "ideal"], "--scheduler"), (["--size", "3B"], "--size"),
                     (["--grid", "2", "--topology", "2D-SW_SW"], "--grid"), (["--iters", "0"], "--iters"),
                     (["--topology", "2D-SW_SW"], "the world has 1"), (["--topology", "nope.yaml"], "--topology"),
                     (["--dim-backends", "shm,bogus"], "unknown backend 'bogus'"), (["--dtype", "f8"], "--dtype")]:
    q = subprocess.run([CHORUS, "run", "collective"] + args, capture_output=True, text=True, timeout=60, env=env)
    status = "ok" if q.returncode == 2 and needle in q.stderr else "FAIL"
    print(f"{status} chorus run collective {' '.join(args)}: exit {q.returncode}: {q.stderr.strip()}")
    if status == "FAIL":
        failures.append(f"{args}: exit {q.returncode}, stderr {q.stderr!r}")

if failures:
    print("\n".join(failures))
    sys.exit(1)
print("a killed rank ended the executed schedule with its name; bad options were errors")
