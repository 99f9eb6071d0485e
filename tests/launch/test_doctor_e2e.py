#!/usr/bin/env python3
"""The doctor end to end, on the runtime's own flight records: two ranks of leave_early.cpp, a
loop of ten all-reduces of 1,009 f32 that rank 1 leaves one step early for finalize(), on shm and
on gloo. Twice per backend:
- with --stall-timeout 3 (operation timeout 60 s): the launcher sees no progress, asks both ranks
  for their records (SIGUSR1), and the diagnosis names rank 0 waiting in all_reduce seq 9 and
  rank 1 in finalize;
- without it (operation timeout 5 s): rank 0's all-reduce times out, it dumps and fails, the
  launcher asks rank 1, and the diagnosis is the same.
Then `chorus doctor --json` on the directory says it too. And a job that crawls: rank 1 starts
each all-reduce 50 ms late, every rank writes its record at the end (rt::dump_flight_record), and
`chorus doctor --stragglers` names rank 1. And ranks that disagree: rank 1's seq 4 is a broadcast
where rank 0 all-reduces.

The same hang in a torch program (CHORUS_TEST_TORCH_PYTHON set) and on mpi under mpirun
(CHORUS_TEST_MPIRUN set, no launcher: the ranks' own records on the timeout and in finalize).

usage: test_doctor_e2e.py CHORUS LEAVE_EARLY
"""
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

CHORUS, PROGRAM = sys.argv[1], sys.argv[2]
# Optional cases: a torch program (the interpreter with torch and chorus's modules on PYTHONPATH)
# and backend mpi under mpirun.
TORCH = os.environ.get("CHORUS_TEST_TORCH_PYTHON", "")
MPIRUN = os.environ.get("CHORUS_TEST_MPIRUN", "")
SOURCE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SLACK = float(os.environ.get("CHORUS_RT_TEST_SLACK", "1"))
failures = []


def check(name, ok, detail=""):
    print(f"{'ok' if ok else 'FAIL'} {name}{'' if ok else ': ' + detail}", flush=True)
    if not ok:
        failures.append(f"{name}: {detail}")


def case(backend, flags, timeout_s, bound_s):
    name = f"{backend} {' '.join(flags) or 'timeout'}"
    cwd = tempfile.mkdtemp(prefix="chorus-doctor-e2e-")
    env = {k: v for k, v in os.environ.items() if k != "CHORUS_RT_DUMP"}
    env["CHORUS_RT_TIMEOUT_S"] = str(timeout_s)
    start = time.monotonic()
    p = subprocess.run([CHORUS, "launch", "-n", "2", "--kill-grace-s", "1", *flags, "--", PROGRAM, backend],
                       cwd=cwd, env=env, capture_output=True, text=True, timeout=120 * SLACK)
    elapsed = time.monotonic() - start
    stall = "--stall-timeout" in flags
    check(f"{name}: the job fails" + (" as stalled (124)" if stall else ""),
          p.returncode == 124 if stall else p.returncode != 0, f"{p.returncode}")
    check(f"{name}: ends within {bound_s} s", elapsed < bound_s * SLACK, f"{elapsed:.1f} s")
    head = f"parted on communicator '{backend}' (backend {backend}) at collective seq 9: all_reduce f32 x1009"
    check(f"{name}: the diagnosis names seq 9", head in p.stderr, p.stderr)
    check(f"{name}: rank 0 waits in it", "waiting in it:   rank 0 for" in p.stderr, p.stderr)
    check(f"{name}: rank 1 is in finalize after 9",
          "never issued it: rank 1: in finalize for" in p.stderr and f"after 9 collectives on '{backend}'" in p.stderr,
          p.stderr)
    dirs = glob.glob(os.path.join(cwd, "chorus-dumps", "*"))
    if len(dirs) == 1:
        d = subprocess.run([CHORUS, "doctor", "--json", dirs[0]], capture_output=True, text=True, timeout=60)
        j = json.loads(d.stdout) if d.returncode == 0 else {}
        f = (j.get("findings") or [{}])[0]
        got = (j.get("verdict"), f.get("communicator"), f.get("seq"), f.get("op"),
               [w["rank"] for w in f.get("waiting", [])],
               [(a["rank"], a["where"], a["issued"]) for a in f.get("absent", [])])
        check(f"{name}: chorus doctor --json agrees",
              got == ("parted", backend, 9, "all_reduce", [0], [(1, "in_finalize", 9)]), f"{got} {d.stderr}")
    else:
        check(f"{name}: one dump directory", False, f"{dirs}")
    shutil.rmtree(cwd, ignore_errors=True)


def stragglers(backend):
    """Rank 1 sleeps 50 ms before each of ten all-reduces: last at (nearly) all of them, costing
    rank 0 about 10 x 50 ms; the job itself completes."""
    name = f"{backend} late rank"
    cwd = tempfile.mkdtemp(prefix="chorus-doctor-e2e-")
    dumps = os.path.join(cwd, "dumps")
    env = {**os.environ, "CHORUS_RT_DUMP": dumps}
    p = subprocess.run([CHORUS, "launch", "-n", "2", "--", PROGRAM, backend, "late"], cwd=cwd, env=env,
                       capture_output=True, text=True, timeout=120 * SLACK)
    check(f"{name}: the job completes", p.returncode == 0, p.stderr)
    d = subprocess.run([CHORUS, "doctor", "--json", "--stragglers", dumps], capture_output=True, text=True, timeout=60)
    j = json.loads(d.stdout) if d.returncode == 0 else {}
    check(f"{name}: no problem, ten collectives",
          (j.get("verdict"), j.get("completed")) == ("no_problem", [{"communicator": backend, "collectives": 10}]),
          d.stdout + d.stderr)
    s = j.get("stragglers", {})
    ranks = {r["rank"]: r for r in s.get("ranks", [])}
    check(f"{name}: rank 1 is the straggler", s.get("stragglers") == [1], f"{s}")
    check(f"{name}: rank 1 last at 8 or more of 10", ranks.get(1, {}).get("last", 0) >= 8, f"{ranks}")
    check(f"{name}: rank 0 lost at least 0.25 s waiting for it", ranks.get(1, {}).get("others_lost_s", 0) >= 0.25,
          f"{ranks}")
    shutil.rmtree(cwd, ignore_errors=True)


def disagreement(backend):
    """Rank 1's fifth call (seq 4) is a broadcast where rank 0 all-reduces: both fail, both dump."""
    name = f"{backend} differ"
    cwd = tempfile.mkdtemp(prefix="chorus-doctor-e2e-")
    dumps = os.path.join(cwd, "dumps")
    env = {**os.environ, "CHORUS_RT_DUMP": dumps, "CHORUS_RT_TIMEOUT_S": "20"}
    p = subprocess.run([CHORUS, "launch", "-n", "2", "--kill-grace-s", "1", "--", PROGRAM, backend, "differ"], cwd=cwd,
                       env=env, capture_output=True, text=True, timeout=120 * SLACK)
    check(f"{name}: the job fails", p.returncode != 0, f"{p.returncode}")
    check(f"{name}: the diagnosis names the disagreement at seq 4",
          f"disagreement on communicator '{backend}' (backend {backend}) at collective seq 4: the ranks called "
          "different collectives (op, root differ)" in p.stderr, p.stderr)
    d = subprocess.run([CHORUS, "doctor", "--json", dumps], capture_output=True, text=True, timeout=60)
    j = json.loads(d.stdout) if d.returncode == 0 else {}
    f = (j.get("findings") or [{}])[0]
    got = (j.get("verdict"), f.get("communicator"), f.get("seq"), [(c["rank"], c["op"]) for c in f.get("calls", [])])
    check(f"{name}: chorus doctor --json agrees",
          got == ("disagreement", backend, 4, [(0, "all_reduce"), (1, "broadcast")]), f"{got} {d.stderr}")
    shutil.rmtree(cwd, ignore_errors=True)


def torch_case():
    """The same hang in a torch program (tests/python/torch_leave_early_rank.py) on the "chorus"
    backend: the launcher's stall watch catches it and the diagnosis names the call torch issued."""
    name = "torch --stall-timeout 3"
    cwd = tempfile.mkdtemp(prefix="chorus-doctor-e2e-")
    env = {k: v for k, v in os.environ.items() if k != "CHORUS_RT_DUMP"}
    env["CHORUS_RT_TIMEOUT_S"] = "60"
    start = time.monotonic()
    p = subprocess.run([CHORUS, "launch", "-n", "2", "--kill-grace-s", "1", "--stall-timeout", "3", "--", TORCH,
                        os.path.join(SOURCE, "tests", "python", "torch_leave_early_rank.py")],
                       cwd=cwd, env=env, capture_output=True, text=True, timeout=120 * SLACK)
    elapsed = time.monotonic() - start
    check(f"{name}: the job fails as stalled (124)", p.returncode == 124, f"{p.returncode}\n{p.stderr}")
    check(f"{name}: ends within 40 s", elapsed < 40 * SLACK, f"{elapsed:.1f} s")
    check(f"{name}: the diagnosis names seq 9, issued by torch",
          "at collective seq 9: all_reduce f32 x1009 (algorithm shm, from torch)" in p.stderr, p.stderr)
    check(f"{name}: rank 1 is in finalize after 9",
          "never issued it: rank 1: in finalize for" in p.stderr and "after 9 collectives" in p.stderr, p.stderr)
    check(f"{name}: no warning of mixed jobs", "different jobs" not in p.stderr, p.stderr)
    shutil.rmtree(cwd, ignore_errors=True)


def mpirun_case():
    """The same hang on backend mpi under mpirun, with no launcher to ask for records: rank 0's
    agreement exchange times out (it writes its record on the failure), rank 1 writes its own once
    it has waited in finalize, and chorus doctor on the directory names both."""
    name = "mpi under mpirun"
    cwd = tempfile.mkdtemp(prefix="chorus-doctor-e2e-")
    dumps = os.path.join(cwd, "dumps")
    p = subprocess.run([MPIRUN, "-n", "2", "--oversubscribe", "-x", f"CHORUS_RT_DUMP={dumps}", "-x",
                        "CHORUS_RT_TIMEOUT_S=6", PROGRAM, "mpi"], cwd=cwd, capture_output=True, text=True,
                       timeout=120 * SLACK,
                       env={**os.environ, "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"})
    check(f"{name}: the job fails", p.returncode != 0, f"{p.returncode}")
    d = subprocess.run([CHORUS, "doctor", "--json", dumps], capture_output=True, text=True, timeout=60)
    j = json.loads(d.stdout) if d.returncode == 0 else {}
    f = (j.get("findings") or [{}])[0]
    got = (j.get("verdict"), f.get("communicator"), f.get("seq"), f.get("op"),
           [(a["rank"], a["where"], a["issued"]) for a in f.get("absent", [])])
    check(f"{name}: chorus doctor names rank 0's all_reduce seq 9 and rank 1 in finalize",
          got[1:] == ("mpi", 9, "all_reduce", [(1, "in_finalize", 9)]), f"{got}\n{d.stdout}{d.stderr}\n{p.stderr}")
    shutil.rmtree(cwd, ignore_errors=True)


for backend in ("shm", "gloo"):
    case(backend, ["--stall-timeout", "3"], 60, 40)
    case(backend, [], 5, 40)
    stragglers(backend)
    disagreement(backend)
if TORCH:
    torch_case()
if MPIRUN:
    mpirun_case()

if failures:
    print(f"{len(failures)} failure(s)")
    sys.exit(1)
print("all passed")
