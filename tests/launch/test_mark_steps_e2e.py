#!/usr/bin/env python3
"""Steps marked at the optimizer, a hang diagnosed step by step: tests/python/torch_mark_steps_rank.py
(five steps alike, each an all_reduce and an optimizer step; rank 1 skips step 3's all_reduce)
under `chorus launch -n 2 --stall-timeout 3`, its steps marked by nothing in the program but
- env: CHORUS_MARK_STEPS=optimizer (chorus.distributed hooks the optimizers' step()), with a
  communication log (CHORUS_RT_LOG), so that the dumps also carry each rank's clock offset to
  rank 0 as estimated at init (rank 0's: 0, error 0);
- capture: python3 -m chorus.capture (what `chorus capture` runs on each rank; its window past the
  program's end, so nothing is recorded): each step it counts also marks the runtime's;
- none: neither, the control: the flight records carry no steps, so the doctor cannot name one
  (and, without a log, no clock offset).
By construction rank 0 waits in all_reduce seq 4 (its fifth), rank 1 is in finalize after 4
collectives, and with steps marked `chorus doctor --json` names rank 1's skip in step 3: it issued
no collective there (from its seq 3) where rank 0 issued one.

usage: test_mark_steps_e2e.py CHORUS   (CHORUS_TEST_TORCH_PYTHON: the interpreter with torch)
"""
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile

CHORUS = sys.argv[1]
TORCH = os.environ.get("CHORUS_TEST_TORCH_PYTHON", "")
SOURCE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PROGRAM = os.path.join(SOURCE, "tests", "python", "torch_mark_steps_rank.py")
SLACK = float(os.environ.get("CHORUS_RT_TEST_SLACK", "1"))
SKIPPED_STEP, WAITED_SEQ = 3, 4  # the program's construction
failures = []


def check(name, ok, detail=""):
    print(f"{'ok' if ok else 'FAIL'} {name}{'' if ok else ': ' + detail}", flush=True)
    if not ok:
        failures.append(f"{name}: {detail}")


def case(how):
    cwd = tempfile.mkdtemp(prefix="chorus-mark-steps-")
    env = {k: v for k, v in os.environ.items() if k not in ("CHORUS_RT_DUMP", "CHORUS_MARK_STEPS")}
    env["CHORUS_RT_TIMEOUT_S"] = "60"  # the stall watch, not the operation timeout, ends the hang
    rank = [TORCH, PROGRAM]
    if how == "env":
        env["CHORUS_MARK_STEPS"] = "optimizer"
        env["CHORUS_RT_LOG"] = os.path.join(cwd, "log")  # (with a log the dumps carry the clock offsets)
    elif how == "capture":
        env.update(CHORUS_CAPTURE_DIR=cwd, CHORUS_CAPTURE_STEPS="10:11")
        rank = [TORCH, "-m", "chorus.capture", PROGRAM]
    cmd = [CHORUS, "launch", "-n", "2", "--kill-grace-s", "1", "--stall-timeout", "3", "--", *rank]
    p = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=120 * SLACK)
    out = p.stdout + p.stderr
    check(f"{how}: the job stalls (124)", p.returncode == 124, f"{p.returncode}\n{out}")
    dirs = glob.glob(os.path.join(cwd, "chorus-dumps", "*"))
    records = sorted(os.path.basename(f) for f in glob.glob(os.path.join(dirs[0], "rank-*.json"))) if dirs else []
    check(f"{how}: both ranks' flight records", records == ["rank-0.json", "rank-1.json"], f"{dirs} {records}\n{out}")
    if not dirs:
        return
    clocks = []
    for r in (0, 1):
        with open(os.path.join(dirs[0], f"rank-{r}.json")) as fh:
            rec = json.load(fh)
        clocks.append((rec.get("clock_to_rank0_ns"), rec.get("clock_error_ns")))
    if how == "env":  # rank 0's offset to itself is 0, exactly; rank 1's is estimated, bounded
        ok = clocks[0] == (0, 0) and isinstance(clocks[1][0], int) and isinstance(clocks[1][1], int) \
            and 0 <= clocks[1][1] < 10**9
        check(f"{how}: the dumps carry the log's clock offsets to rank 0", ok, f"{clocks}")
    else:
        check(f"{how}: without a log the dumps carry no clock offset", clocks == [(None, None)] * 2, f"{clocks}")
    d = subprocess.run([CHORUS, "doctor", "--json", dirs[0]], capture_output=True, text=True, timeout=60)
    j = json.loads(d.stdout) if d.returncode == 0 else {}
    f = (j.get("findings") or [{}])[0]
    absent = [(a["rank"], a["where"], a["issued"]) for a in f.get("absent", [])]
    got = (j.get("verdict"), f.get("communicator"), f.get("seq"), [w["rank"] for w in f.get("waiting", [])], absent)
    want = ("parted", "shm", WAITED_SEQ, [0], [(1, "in_finalize", WAITED_SEQ)])
    check(f"{how}: rank 0 waits in seq 4, rank 1 in finalize after 4", got == want, f"{got}\n{d.stdout}{d.stderr}")
    skips = f.get("step_skips")
    if how == "none":
        check(f"{how}: no step named without marks", not skips, f"{skips}\n{d.stdout}")
    else:
        want = [{"rank": 1, "step": SKIPPED_STEP, "issued": 0, "others": 1, "from_seq": SKIPPED_STEP}]
        check(f"{how}: the doctor names rank 1's skip in step 3", skips == want, f"{skips}\n{d.stdout}{d.stderr}")
        text = subprocess.run([CHORUS, "doctor", dirs[0]], capture_output=True, text=True, timeout=60).stdout
        check(f"{how}: the doctor's text names step 3 and rank 1", "step 3" in text and "rank 1" in text, text)
    shutil.rmtree(cwd, ignore_errors=True)


if not TORCH:
    print("skipped (CHORUS_TEST_TORCH_PYTHON not set)")
    sys.exit(0)
for how in ("env", "capture", "none"):
    case(how)
if failures:
    print(f"{len(failures)} failure(s)")
    sys.exit(1)
print("all passed")
