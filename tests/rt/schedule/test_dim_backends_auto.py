#!/usr/bin/env python3
"""`chorus run collective --dim-backends auto` with a tuning table: on a 2 x 3 grid, each
dimension's groups go on the backend the table makes fastest for that dimension's size (world
size 2 for dimension 1, 3 for dimension 2), the JSON says so and why, and the all-reduce is
checked by the ranks. The table is written here by hand, so the expected choice is known; the
same run with the table's two backends swapped must swap the choice. Without a table, auto is
the runtime's first backend and the reason names the missing table.

usage: test_dim_backends_auto.py CHORUS
"""
import json
import os
import subprocess
import sys
import tempfile

CHORUS = sys.argv[1]


def table(fast2, slow2, fast3, slow3):
    def rows(fast, slow):
        return [{"bytes": 1024, "time_us": {fast: 10.0, slow: 100.0}},
                {"bytes": 1 << 20, "time_us": {fast: 1000.0, slow: 10000.0}}]
    return {"schema": "chorus-rt-tuning/1", "machine": "hand-written for test_dim_backends_auto.py",
            "tables": [{"op": op, "world_size": ws, "rows": rows(*fs)}
                       for op in ("reduce_scatter", "all_gather")
                       for ws, fs in ((2, (fast2, slow2)), (3, (fast3, slow3)))]}


def run(tuning):
    env = dict(os.environ)
    env.pop("CHORUS_RT_TUNING", None)
    if tuning:
        env["CHORUS_RT_TUNING"] = tuning
    p = subprocess.run([CHORUS, "launch", "-n", "6", "--", CHORUS, "run", "collective", "--grid", "2x3",
                        "--size", "96KiB", "--chunks", "2", "--scheduler", "themis-scf", "--iters", "1",
                        "--warmup", "0", "--dim-backends", "auto", "--json"],
                       capture_output=True, text=True, timeout=120, env=env)
    assert p.returncode == 0, f"exit {p.returncode}\n{p.stdout}\n{p.stderr}"
    j = json.loads(p.stdout)
    assert j["check"] == "passed", j["check"]
    return j["dims"]


with tempfile.TemporaryDirectory() as tmp:
    path = os.path.join(tmp, "t.json")
    for fast2, fast3 in (("gloo", "shm"), ("shm", "gloo")):
        slow2 = "shm" if fast2 == "gloo" else "gloo"
        slow3 = "shm" if fast3 == "gloo" else "gloo"
        with open(path, "w") as f:
            json.dump(table(fast2, slow2, fast3, slow3), f)
        dims = run(path)
        got = [d["backend"] for d in dims]
        assert got == [fast2, fast3], f"table fast at {fast2}/{fast3}: chose {got}"
        for d in dims:
            assert d["backend_chosen_by"] == "tuning table", d
            est = d["backend_estimate_us"]
            assert set(est) == {"shm", "gloo"}, est
            # In every row the slow backend takes 10x the fast one, so every estimate does too.
            assert abs(est[d["backend"]] * 10 - max(est.values())) < 1e-6 * max(est.values()), est
        print(f"table fast at {fast2}/{fast3}: chose {got}, estimates {[d['backend_estimate_us'] for d in dims]}")
    dims = run(None)
    assert all(d["backend"] == "shm" for d in dims), dims  # shm first in the runtime's order
    assert all("no tuning table" in d["backend_chosen_by"] for d in dims), dims
print("dim-backends auto: choices follow the tuning table")
