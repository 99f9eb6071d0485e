#!/usr/bin/env python3
"""Communication logging end to end: `chorus bench` on 2 ranks under `chorus launch` with
CHORUS_RT_LOG, whose operations are known from its options (per size, out of place and then in
place: --warmup + --iters all-reduces, then one all-reduce of the float64 timings, and a barrier
before timing); the logs hold exactly those, with ordered times; `chorus profile PREFIX --json`
counts them the same and `--trace` has one process per rank. A bad log line names the file and
line (exit 2).

usage: test_comm_log.py CHORUS
"""
import json
import os
import subprocess
import sys
import tempfile

CHORUS = sys.argv[1]

with tempfile.TemporaryDirectory() as d:
    prefix = os.path.join(d, "run")
    env = dict(os.environ, CHORUS_RT_LOG=prefix)
    p = subprocess.run([CHORUS, "launch", "-n", "2", "--", CHORUS, "bench", "--backends", "shm", "--ops", "allreduce",
                        "--sizes", "4KiB", "--iters", "7", "--warmup", "2",
                        "-c", "0"], capture_output=True, text=True, timeout=120, env=env)
    assert p.returncode == 0, p.stderr
    for rank in (0, 1):
        with open(f"{prefix}.{rank}.jsonl") as f:
            lines = [json.loads(x) for x in f]
        assert lines[0]["chorus_comm_log"] == 1 and lines[0]["rank"] == rank and lines[0]["world_size"] == 2, lines[0]
        ops = lines[1:]
        big = [o for o in ops if o["op"] == "all_reduce" and o["bytes"] == 4096]
        assert len(big) == 2 * (2 + 7), (rank, len(big))
        timing = [o for o in ops if o["op"] == "all_reduce" and o["dtype"] == "f64"]
        assert len(timing) == 2 and all(t["count"] == 7 for t in timing), timing
        assert all(o["backend"] == "shm" and o["ok"] and o["rank"] == rank for o in ops)
        assert all(o["issue_ns"] <= o["start_ns"] <= o["end_ns"] for o in ops)
        assert all(a["end_ns"] <= b["issue_ns"] for a, b in zip(big, big[1:])), "blocking calls do not overlap"
    p = subprocess.run([CHORUS, "profile", prefix, "--json", "--trace", os.path.join(d, "t.json")],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    j = json.loads(p.stdout)
    rows = {(r["op"], r["backend"]): r for r in j["rows"]}
    assert rows[("all_reduce", "shm")]["calls_per_rank"] == 2 * (2 + 7 + 1), rows
    assert abs(sum(r["share"] for r in j["rows"]) - 1) < 1e-9
    with open(os.path.join(d, "t.json")) as f:
        trace = json.load(f)
    assert {e["pid"] for e in trace["traceEvents"]} == {0, 1}
    # A damaged line: file and line named, exit 2.
    with open(f"{prefix}.1.jsonl", "a") as f:
        f.write('{"rank": 1, "backend": "shm"}\n')
    p = subprocess.run([CHORUS, "profile", prefix], capture_output=True, text=True, timeout=60)
    assert p.returncode == 2 and "run.1.jsonl:" in p.stderr and "'op'" in p.stderr, p.stderr
    os.remove(f"{prefix}.1.jsonl")
    p = subprocess.run([CHORUS, "profile", prefix], capture_output=True, text=True, timeout=60)
    assert p.returncode == 2 and "run.1.jsonl" in p.stderr, p.stderr
print("comm log: ok")
