#!/usr/bin/env python3
"""Emulated stages run on the model's clock (docs/schedule-executor.md, "Emulation"): in the
measured trace of `chorus run collective --emulate --trace`, every stage begins exactly when the
model begins it, max(its chunk's arrival + A_K, the end of the previous stage on its dimension),
and lasts at least n_K x B_K; every arrival is the end of the chunk's previous stage. These hold
whatever the load (a late real operation makes a stage longer, never a start later than the
model's), so nothing here is timed. Before, each stage began when its thread woke, a little
later every time, and those delays added up along the chain of stages.

The network (4 ranks, 2x2): dimension 1 a ring of 2, 2 links of 0.125 Gb/s (32 ns per byte),
step latency 300 us; dimension 2 a switch of 2, one link of 0.5 Gb/s (16 ns per byte), 20 us.
On two NPUs every algorithm of Themis Table 1 takes one step and sends half the resident data
in a reduce-scatter, all of it in an all-gather. 1 MiB in 4 chunks of 262144 bytes; the
baseline runs RS ring, RS switch, AG switch, AG ring. By hand: the ring's reduce-scatter sends
131072 bytes (4194.304 us), the switch's 65536 (1048.576 us), the all-gathers the same. The
ring is the bottleneck: it runs 4 RS then 4 AG back to back from its first fixed delay, so the
prediction is 300 + 8 x 4194.304 = 33854.432 us.

usage: test_schedule_pacing.py CHORUS
"""
import json
import os
import subprocess
import sys
import tempfile

CHORUS = sys.argv[1]
NET = """name: pacing-2x2
dims:
  - {kind: Ring, size: 2, link_bandwidth_gbps: 0.125, links_per_npu: 2, latency_ns: 300000}
  - {kind: Switch, size: 2, link_bandwidth_gbps: 0.5, links_per_npu: 1, latency_ns: 20000}
"""
LATENCY_US = {0: 300.0, 1: 20.0}
NS_PER_BYTE = {0: 32.0, 1: 16.0}
CHUNK = 262144
EPS = 1e-6  # us: the trace's doubles, far below any delay of a real wake-up
failures = []


def stages(trace_file):
    """(chunk, dim, phase, arrive, start, end) in us, from the track of each dimension."""
    with open(trace_file) as f:
        events = json.load(f)["traceEvents"]
    return [(e["args"]["chunk"], e["tid"], e["cat"], e["args"]["arrive_us"], e["ts"], e["ts"] + e["dur"],
             e["args"]["bytes_per_npu"]) for e in events if e.get("ph") == "X" and e["pid"] == 0]


def check(scheduler, trace, measured):
    st = stages(trace)
    if len(st) != 16:
        failures.append(f"{scheduler}: {len(st)} stages in the trace, expected 4 chunks x 4")
        return
    by_chunk = {}
    for s in st:
        by_chunk.setdefault(s[0], []).append(s)
    for c, ss in by_chunk.items():
        ss.sort(key=lambda s: s[4])
        resident, prev_end = CHUNK, 0.0
        for (_, dim, phase, arrive, start, end, sent) in ss:
            want_sent = resident / 2 if phase == "RS" else resident  # P = 2: Table 1, by hand
            resident = resident / 2 if phase == "RS" else resident * 2
            if sent != want_sent:
                failures.append(f"{scheduler} chunk {c} {phase} dim{dim + 1}: {sent} bytes, by hand {want_sent}")
            if abs(arrive - prev_end) > EPS:
                failures.append(f"{scheduler} chunk {c} {phase} dim{dim + 1}: arrives at {arrive} us, its previous "
                                f"stage ended at {prev_end} us")
            prev_end = end
    for dim in (0, 1):
        free = 0.0
        for (c, _, phase, arrive, start, end, sent) in sorted((s for s in st if s[1] == dim), key=lambda s: s[4]):
            model_start = max(arrive + LATENCY_US[dim], free)
            if abs(start - model_start) > EPS:
                failures.append(f"{scheduler}{' (predicted)' if not measured else ''} chunk {c} {phase} dim{dim + 1}: "
                                f"starts at {start:.6f} us, the model at max(arrival + A, dimension free) = "
                                f"{model_start:.6f} us ({(start - model_start) * 1e3:.3f} ns later)")
            bw_us = sent * NS_PER_BYTE[dim] / 1e3
            too_short = end - start < bw_us - EPS
            wrong = abs(end - start - bw_us) > EPS if not measured else too_short
            if wrong:
                failures.append(f"{scheduler}{' (predicted)' if not measured else ''} chunk {c} {phase} "
                                f"dim{dim + 1}: lasts {end - start:.6f} us, n x B = {bw_us:.6f} us")
            free = end


with tempfile.TemporaryDirectory() as tmp:
    net = os.path.join(tmp, "net.yaml")
    with open(net, "w") as f:
        f.write(NET)
    for scheduler in ("baseline", "themis-scf"):
        real, sim = os.path.join(tmp, f"{scheduler}-real.json"), os.path.join(tmp, f"{scheduler}-sim.json")
        p = subprocess.run([CHORUS, "launch", "-n", "4", "--", CHORUS, "run", "collective", "-t", net, "--size", "1MiB",
                            "--chunks", "4", "--scheduler", scheduler, "--emulate", "--iters", "1", "--warmup", "0",
                            "--dim-backends", "shm", "--json", "--trace", real, "--sim-trace", sim],
                           capture_output=True, text=True, timeout=120)
        if p.returncode != 0:
            failures.append(f"{scheduler}: exit {p.returncode}: {p.stderr[-2000:]}")
            continue
        report = json.loads(p.stdout)
        if report["check"] != "passed":
            failures.append(f"{scheduler}: check {report['check']}")
        if scheduler == "baseline" and abs(report["predicted_time_ns"] - 33854432) > 1:
            failures.append(f"baseline: predicted {report['predicted_time_ns']} ns, by hand 33854432")
        check(scheduler, sim, measured=False)  # the simulator: the same rules, n x B exactly
        check(scheduler, real, measured=True)
for f in failures:
    print("FAIL:", f)
if failures:
    sys.exit(1)
print("pacing: every stage on the model's clock (baseline, themis-scf; measured and predicted)")
