#!/usr/bin/env python3
"""Shared-memory segment tests of chorus::rt (backend shm):

1. Nothing outlives a job: 20 times (fixed seed), `chorus launch -n 2..4` runs `chorus bench` on
   shm and one rank is SIGKILLed at a random moment (during init or a collective). Once the job
   has ended, no process of it is left (so no mapping of its memfd segment exists) and no chorus
   entry of it is in /dev/shm.
2. Too little space is a clear error: with RLIMIT_FSIZE below the segment size, the job exits 2
   with a message naming the bytes needed and how to raise the limit (never SIGBUS/SIGXFSZ).
3. Bad CHORUS_SHM_SLOT_BYTES and CHORUS_SHM_CMA values exit 2 naming the variable.

usage: test_shm_segment.py CHORUS
"""
import os
import random
import resource
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tests/rt: rank_lines.py
from rank_lines import expand  # noqa: E402

CHORUS = sys.argv[1]
SLACK = float(os.environ.get("CHORUS_RT_TEST_SLACK", "1"))
SEED = 20261122
RUNS = 20
ENV = dict(os.environ, CHORUS_RT_TIMEOUT_S="5")
BENCH = [CHORUS, "bench", "--backends", "shm", "--ops", "allreduce,alltoall", "--sizes", "4KiB,1MiB",
         "--iters", "20000", "--warmup", "1"]
failures = []


def stat_of(pid):
    """(ppid, start time) of a live process, or None."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        if fields[0] == "Z":
            return None
        return int(fields[1]), int(fields[19])
    except (OSError, IndexError, ValueError):
        return None


def children_of(parent):
    found = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            s = stat_of(int(entry))
            if s and s[0] == parent:
                found[int(entry)] = s[1]
    return found


def alive(pid, start):
    s = stat_of(pid)
    return s is not None and s[1] == start


def shm_entries_of(pids):
    """Entries in /dev/shm named after any of `pids` (the old chorus-<pid>-<n> scheme) or chorus-*."""
    names = []
    for name in os.listdir("/dev/shm"):
        if name.startswith("chorus") and any(f"-{p}-" in name or name.endswith(f"-{p}") for p in pids):
            names.append(name)
    return names


def holders_of_memfd(pids):
    """Those of `pids` that map a chorus memfd segment."""
    held = []
    for pid in pids:
        try:
            with open(f"/proc/{pid}/maps") as f:
                if "memfd:chorus-shm" in f.read():
                    held.append(pid)
        except OSError:
            pass
    return held


def kill_run(i, rng):
    n = rng.randint(2, 4)
    victim = rng.randrange(n)
    # Half the kills land in the first 60 ms after the ranks exist (init: segment creation,
    # descriptor passing, barrier), half later (collectives).
    delay = rng.uniform(0.0, 0.06) if i % 2 == 0 else rng.uniform(0.06, 0.5)
    t0 = time.monotonic()
    launcher = subprocess.Popen([CHORUS, "launch", "-n", str(n), "--kill-grace-s", "0.3", "--"] + BENCH,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV)
    ranks = {}
    while len(ranks) < n and time.monotonic() - t0 < 10 * SLACK and launcher.poll() is None:
        ranks.update(children_of(launcher.pid))
        time.sleep(0.001)
    if len(ranks) < n:
        launcher.kill()
        launcher.communicate()
        return f"run {i}: only {len(ranks)} of {n} ranks appeared"
    pids = sorted(ranks)  # forked in rank order
    time.sleep(delay)
    victim_pid = pids[victim]
    mapped_before = holders_of_memfd(pids)
    killed = alive(victim_pid, ranks[victim_pid])
    if killed:
        os.kill(victim_pid, signal.SIGKILL)
    try:
        out, err = launcher.communicate(timeout=30 * SLACK)
    except subprocess.TimeoutExpired:
        launcher.kill()
        out, err = launcher.communicate()
        return f"run {i}: the job did not end within {30 * SLACK:.0f} s of the kill\n{err[-2000:]}"
    # The launcher reaps its ranks before it returns: give the kernel a moment, then nothing.
    deadline = time.monotonic() + 5
    while any(alive(p, s) for p, s in ranks.items()) and time.monotonic() < deadline:
        time.sleep(0.02)
    left = [p for p, s in ranks.items() if alive(p, s)]
    residue = shm_entries_of(pids + [launcher.pid])
    held = holders_of_memfd(left)
    print(f"run {i:2d}: n={n} victim={victim} after {delay * 1000:5.1f} ms "
          f"({len(mapped_before)} ranks had the segment mapped); exit {launcher.returncode}; "
          f"{time.monotonic() - t0:.2f} s", flush=True)
    problems = []
    if not killed:
        problems.append("the job had ended before the kill (the bench is too short)")
    elif launcher.returncode == 0:
        problems.append("exit status 0 after a rank was killed")
    if left:
        for p in left:
            os.kill(p, signal.SIGKILL)
        problems.append(f"processes left: {left}")
    if residue:
        problems.append(f"/dev/shm residue: {residue}")
    if held:
        problems.append(f"segment still mapped by {held}")
    if problems:
        return f"run {i}: " + "; ".join(problems) + f"\n--- stderr ---\n{err[-2000:]}"
    return None


rng = random.Random(SEED)
t_start = time.monotonic()
for i in range(RUNS):
    problem = kill_run(i, rng)
    if problem:
        failures.append(problem)
        print("FAIL " + problem.splitlines()[0], flush=True)


def expected_segment_bytes(n, slot=1 << 20):
    """The layout of docs/runtime-backends.md, by hand: a page of header; per rank a 128-byte control
    block (rounded to pages) and a page of exchange headers; per rank two slots; per ordered pair
    a 256-byte ring control and a ring of 16 MiB / n^2 bytes (power of two in [16 KiB, 256 KiB])."""
    page = 4096
    up = lambda x: (x + page - 1) // page * page
    ring = min(max((16 << 20) // (n * n), 16 << 10), 256 << 10)
    ring = 1 << (ring.bit_length() - 1)
    return up(page + n * 128) + n * up(2 * 2 * n * 8) + n * 2 * slot + n * n * (256 + ring)


def expect(name, cmd, status, texts, env_extra=None, limit_fsize=None):
    env = dict(ENV, **(env_extra or {}))
    pre = (lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (limit_fsize, limit_fsize))) if limit_fsize else None
    t0 = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, preexec_fn=pre, timeout=30 * SLACK)
    out = expand(p.stdout + p.stderr)  # one line per rank (tests/rt/rank_lines.py)
    problems = []
    if p.returncode != status:
        problems.append(f"exit status {p.returncode}, expected {status}")
    for t in texts:
        if t not in out:
            problems.append(f"'{t}' not in the output")
    print(f"{'ok' if not problems else 'FAIL'} {name} ({time.monotonic() - t0:.1f} s, exit {p.returncode})", flush=True)
    if problems:
        failures.append(f"{name}: {'; '.join(problems)}\n--- output ---\n{out[-3000:]}")


need = expected_segment_bytes(2)
launch2 = [CHORUS, "launch", "-n", "2", "--"]
expect("too little space (RLIMIT_FSIZE 1 MiB)", launch2 + BENCH[:-4] + ["--iters", "2"], 2,
       [f"cannot reserve {need} bytes", "RLIMIT_FSIZE", "ulimit -f"], limit_fsize=1 << 20)
expect("too little space, world of one", [CHORUS, "bench", "--backends", "shm", "--sizes", "4KiB", "--iters", "2"], 2,
       [f"cannot reserve {expected_segment_bytes(1)} bytes"], limit_fsize=1 << 20)
for bad in ["0", "12abc", "-4096", "99999999999999999999", "2000000000"]:
    expect(f"CHORUS_SHM_SLOT_BYTES={bad}", launch2 + BENCH[:-4] + ["--iters", "2"], 2,
           ["CHORUS_SHM_SLOT_BYTES"], env_extra={"CHORUS_SHM_SLOT_BYTES": bad})

for bad in ["2", "yes"]:
    expect(f"CHORUS_SHM_CMA={bad}", launch2 + BENCH[:-4] + ["--iters", "2"], 2,
           ["CHORUS_SHM_CMA", f"'{bad}'"], env_extra={"CHORUS_SHM_CMA": bad})

print(f"total {time.monotonic() - t_start:.1f} s")
if failures:
    print("\n\n".join(failures))
    sys.exit(1)
print("no segment or process outlived a killed job; too little space is a clear error")
