#!/usr/bin/env python3
"""chorus launch --stall-timeout and the flight records the launcher collects, with ranks of
beacon_rank.cpp (a beacon mapped as the runtime maps it, a minimal flight record on SIGUSR1):
- stall: rank 0 in a call that never ends, rank 1 outside chorus; --stall-timeout 2 stops the job
  (status 124) within seconds, launcher.json and the doctor's diagnosis appear;
- fail: rank 1 exits with status 3, no --stall-timeout: rank 0 is asked for its record, the
  diagnosis names rank 1 as exited;
- stop: rank 1 stops itself (SIGSTOP): launcher.json says stopped, the job still ends;
- compute: both ranks outside chorus longer than the timeout: no stall, status 0, no directory
  left behind.
Every run is in a temporary directory, where the default chorus-dumps/ goes.

usage: test_stall.py CHORUS BEACON_RANK
"""
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

CHORUS, RANK = sys.argv[1], sys.argv[2]
SLACK = float(os.environ.get("CHORUS_RT_TEST_SLACK", "1"))
failures = []
workdirs = []


def check(name, ok, detail=""):
    print(f"{'ok' if ok else 'FAIL'} {name}{'' if ok else ': ' + detail}", flush=True)
    if not ok:
        failures.append(f"{name}: {detail}")


def run(mode, *flags, dump_env=None):
    cwd = tempfile.mkdtemp(prefix="chorus-stall-test-")
    workdirs.append(cwd)
    env = {k: v for k, v in os.environ.items() if k != "CHORUS_RT_DUMP"}
    if dump_env is not None:
        env["CHORUS_RT_DUMP"] = dump_env
    start = time.monotonic()
    p = subprocess.run([CHORUS, "launch", "-n", "2", "--kill-grace-s", "1", *flags, "--", RANK, mode], cwd=cwd,
                       env=env, capture_output=True, text=True, timeout=90 * SLACK)
    elapsed = time.monotonic() - start
    dirs = glob.glob(os.path.join(cwd, "chorus-dumps", "*"))
    record = None
    if len(dirs) == 1 and os.path.exists(os.path.join(dirs[0], "launcher.json")):
        with open(os.path.join(dirs[0], "launcher.json")) as f:
            record = json.load(f)
    beacons = sorted({line.split()[-1] for line in p.stdout.splitlines() if line.startswith("beacon dir ")})
    return p, elapsed, cwd, dirs, record, beacons


def beacons_removed(name, beacons):
    check(f"{name}: the ranks saw one beacon directory", len(beacons) == 1, f"{beacons}")
    check(f"{name}: the beacon directory is removed", all(not os.path.exists(b) for b in beacons), f"{beacons}")


# ---- stall ----------------------------------------------------------------------------------
p, elapsed, cwd, dirs, rec, beacons = run("stall", "--stall-timeout", "2")
check("stall: status 124", p.returncode == 124, f"{p.returncode}: {p.stderr}")
check("stall: not before the timeout, and within 20 s", 2.0 <= elapsed < 20 * SLACK, f"{elapsed:.1f} s")
check("stall: the launcher says the job stalled", "the job stalled" in p.stderr, p.stderr)
check("stall: one dump directory under ./chorus-dumps", len(dirs) == 1, f"{dirs}")
check("stall: launcher.json written", rec is not None, f"{dirs}")
if rec is not None:
    check("stall: reason and timeout", (rec["reason"], rec["stall_timeout_s"], rec["failed_rank"]) == ("stall", 2, -1),
          f"{rec}")
    check("stall: both ranks dumped and were running",
          [(r["rank"], r["dumped"], r["state"]) for r in rec["ranks"]] == [(0, True, "running"), (1, True, "running")],
          f"{rec['ranks']}")
    b0, b1 = rec["ranks"][0]["beacon"], rec["ranks"][1]["beacon"]
    check("stall: rank 0's beacon in a call (4 started, 3 ended), rank 1's not (3, 3)",
          (b0["started"], b0["ended"], b1["started"], b1["ended"], b0["place"]) == (4, 3, 3, 3, "running"),
          f"{b0} {b1}")
check("stall: the diagnosis names seq 3 on shm",
      "parted on communicator 'shm' (backend shm) at collective seq 3: all_reduce f32 x1009" in p.stderr, p.stderr)
check("stall: rank 0 waits in it", "waiting in it:   rank 0 for" in p.stderr, p.stderr)
check("stall: rank 1 is outside chorus",
      "never issued it: rank 1: outside chorus (no call in flight), after 3 collectives on 'shm'" in p.stderr, p.stderr)
check("stall: the launcher names the directory", len(dirs) == 1 and dirs[0] in p.stderr, p.stderr)
beacons_removed("stall", beacons)
if len(dirs) == 1:
    d = subprocess.run([CHORUS, "doctor", "--json", dirs[0]], capture_output=True, text=True, timeout=60)
    j = json.loads(d.stdout) if d.returncode == 0 else {}
    f = (j.get("findings") or [{}])[0]
    check("stall: chorus doctor on the directory agrees",
          (j.get("verdict"), f.get("seq"), f.get("communicator"), j.get("launcher", {}).get("reason")) ==
          ("parted", 3, "shm", "stall"), d.stdout + d.stderr)

# ---- a failed rank, without --stall-timeout -------------------------------------------------
p, elapsed, cwd, dirs, rec, beacons = run("fail")
check("fail: the failed rank's status 3", p.returncode == 3, f"{p.returncode}: {p.stderr}")
check("fail: ends within 20 s", elapsed < 20 * SLACK, f"{elapsed:.1f} s")
check("fail: launcher.json written", rec is not None, f"{dirs} {p.stderr}")
if rec is not None:
    check("fail: reason rank_failure, rank 1", (rec["reason"], rec["failed_rank"]) == ("rank_failure", 1), f"{rec}")
    r1 = rec["ranks"][1]
    check("fail: rank 1 exited 3 without a record", (r1["state"], r1["exit_status"], r1["dumped"]) == ("exited", 3, False),
          f"{r1}")
    check("fail: rank 0 dumped", rec["ranks"][0]["dumped"] is True, f"{rec['ranks'][0]}")
check("fail: the diagnosis says rank 1 exited",
      "no record:       rank 1: no dump: exited with status 3" in p.stderr, p.stderr)
check("fail: rank 0 waits at seq 3", "at collective seq 3" in p.stderr and "rank 0 for" in p.stderr, p.stderr)
beacons_removed("fail", beacons)

# ---- a stopped rank -------------------------------------------------------------------------
p, elapsed, cwd, dirs, rec, beacons = run("stop", "--stall-timeout", "2")
check("stop: status 124", p.returncode == 124, f"{p.returncode}: {p.stderr}")
check("stop: ends within 25 s", elapsed < 25 * SLACK, f"{elapsed:.1f} s")
if rec is not None:
    check("stop: rank 1 stopped, no record", (rec["ranks"][1]["state"], rec["ranks"][1]["dumped"]) == ("stopped", False),
          f"{rec['ranks']}")
else:
    check("stop: launcher.json written", False, f"{dirs} {p.stderr}")
check("stop: the diagnosis says rank 1 is stopped", "rank 1: no dump: stopped (pid" in p.stderr, p.stderr)
beacons_removed("stop", beacons)

# ---- computing for longer than the timeout is no stall --------------------------------------
p, elapsed, cwd, dirs, rec, beacons = run("compute", "--stall-timeout", "1")
check("compute: status 0", p.returncode == 0, f"{p.returncode}: {p.stderr}")
check("compute: no stall said", "stalled" not in p.stderr, p.stderr)
check("compute: no dump directory left behind", not os.path.exists(os.path.join(cwd, "chorus-dumps")),
      f"{os.listdir(cwd)}")
beacons_removed("compute", beacons)

# ---- CHORUS_RT_DUMP set but empty: a stall still stops the job, no flight records -----------
p, elapsed, cwd, dirs, rec, beacons = run("stall", "--stall-timeout", "2", dump_env="")
check("no records: status 124", p.returncode == 124, f"{p.returncode}: {p.stderr}")
check("no records: nothing written", not os.path.exists(os.path.join(cwd, "chorus-dumps")) and
      "flight records are in" not in p.stderr, p.stderr)

# ---- a directory the user names -------------------------------------------------------------
user_dir = os.path.join(tempfile.mkdtemp(prefix="chorus-stall-user-"), "mine")
workdirs.append(os.path.dirname(user_dir))
p, elapsed, cwd, dirs, rec, beacons = run("stall", "--stall-timeout", "2", dump_env=user_dir)
check("user directory: the records and launcher.json are there",
      sorted(os.listdir(user_dir)) == ["launcher.json", "rank-0.json", "rank-1.json"] if os.path.isdir(user_dir)
      else False, f"{p.stderr}")
check("user directory: no ./chorus-dumps", not os.path.exists(os.path.join(cwd, "chorus-dumps")), f"{os.listdir(cwd)}")

# ---- a SIGKILLed launcher's beacon directory is removed by the next launcher ------------------
tmp = tempfile.mkdtemp(prefix="chorus-stall-tmpdir-")
workdirs.append(tmp)
dead = subprocess.Popen(["true"])
dead.wait()
stale = os.path.join(tmp, f"chorus-beacons-{dead.pid}-abcdef")
live = os.path.join(tmp, f"chorus-beacons-{os.getpid()}-abcdef")
for d in (stale, live):
    os.makedirs(d)
    open(os.path.join(d, "rank-0.beacon"), "w").close()
r = subprocess.run([CHORUS, "launch", "-n", "1", "--", "true"], capture_output=True, text=True, timeout=60,
                   env={**os.environ, "TMPDIR": tmp})
check("stale beacons: the job runs", r.returncode == 0, r.stderr)
check("stale beacons: a dead launcher's directory is removed, a live one's kept, the job's own removed",
      sorted(os.listdir(tmp)) == [os.path.basename(live)], f"{os.listdir(tmp)}")

# ---- bad flag value -------------------------------------------------------------------------
r = subprocess.run([CHORUS, "launch", "-n", "2", "--stall-timeout", "-1", "--", RANK, "compute"], capture_output=True,
                   text=True, timeout=60)
check("bad --stall-timeout: exit 2 naming the flag", r.returncode == 2 and "--stall-timeout" in r.stderr, r.stderr)

for w in workdirs:
    shutil.rmtree(w, ignore_errors=True)
if failures:
    print(f"{len(failures)} failure(s)")
    sys.exit(1)
print("all passed")
