#!/usr/bin/env python3
"""`chorus bench` as nccl-tests users read it, on 2 ranks under `chorus launch`: the -b/-e/-f
sweep gives exactly the sizes nccl-tests would (8 KiB -> 8, 32, 128, 512 with -e 1KiB -f 4, not
2048), count is the elements of each call, redop and root where they apply, in-place columns for
the operations with an in-place form and "-" for the others, #wrong 0 on correct runs, and the
closing lines: "Out of bounds values : 0 OK" and, per backend and operation, an average bus
bandwidth equal to the mean of that backend's and operation's printed busbw columns. The JSON rows
carry the same, with min / mean / max of both placements.

nccl-tests' own flags (issue 43): -n -w -c -d -o -r and a fractional -f mean what they mean there,
checking is on by default (-c 0 turns it off), bad values are errors naming the flag (exit 2).
Rows are printed as they are measured: an interrupt (SIGINT to chorus launch) after the first row
has been read keeps the rows printed, says the sweep was interrupted, and exits 130.

usage: test_bench_nccl.py CHORUS
"""
import json
import signal
import subprocess
import sys

CHORUS = sys.argv[1]
RANKS = 2
SWEEP = [8, 32, 128, 512]  # -b 8 -e 1KiB -f 4
WHOLE_BUFFER = {"allgather", "reducescatter"}  # size = all ranks' blocks; count = one rank's block
IN_PLACE = {"allreduce", "allgather", "reduce"}
REDUCING = {"allreduce", "reducescatter", "reduce"}
ROOTED = {"broadcast", "reduce"}
BUS_FACTOR = {"allreduce": 2 * (RANKS - 1) / RANKS, "allgather": (RANKS - 1) / RANKS,
              "reducescatter": (RANKS - 1) / RANKS, "broadcast": 1, "reduce": 1}
failures = []


def check(what, ok, detail=""):
    if not ok:
        failures.append(f"{what}: {detail}")


def bench(*args):
    p = subprocess.run([CHORUS, "launch", "-n", str(RANKS), "--", CHORUS, "bench", "--backends", "shm",
                        "--iters", "3", "--warmup", "1", "--check", *args],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, (args, p.stdout, p.stderr)
    return p.stdout


def count_of(op, size, element):
    return size // element // (RANKS if op in WHOLE_BUFFER else 1)


# ---- the table ---------------------------------------------------------------------------------
ops = ["allreduce", "allgather", "broadcast", "reducescatter", "reduce"]
out = bench("--ops", ",".join(ops), "-b", "8", "-e", "1KiB", "-f", "4")
rows = [line.split() for line in out.splitlines() if line and not line.startswith("#")]
check("table: 15 cells a row with --check", all(len(r) == 15 for r in rows), out)
busbw = []
for op in ops:
    mine = [r for r in rows if r[1] == op]
    check(f"{op}: sizes of the sweep", [int(r[2]) for r in mine] == SWEEP, [r[2] for r in mine])
    for r in mine:
        size = int(r[2])
        check(f"{op} {size}: count", int(r[3]) == count_of(op, size, 4), r)
        check(f"{op} {size}: type", r[4] == "f32", r)
        check(f"{op} {size}: redop", r[5] == ("sum" if op in REDUCING else "-"), r)
        check(f"{op} {size}: root", r[6] == ("0" if op in ROOTED else "-"), r)
        check(f"{op} {size}: out-of-place #wrong", r[10] == "0", r)
        busbw.append(float(r[9]))
        if op in IN_PLACE:
            check(f"{op} {size}: in-place #wrong", r[14] == "0", r)
            busbw.append(float(r[13]))
        else:
            check(f"{op} {size}: no in-place run", r[11:] == ["-"] * 4, r)
check("closing line: out of bounds", "\n# Out of bounds values : 0 OK\n" in out, out)


def check_averages(what, out, rows):
    """One "Avg bus bandwidth" line per backend and operation, in the order of the rows, each the
    mean of that backend's and operation's busbw columns (out of place and, where run, in place)."""
    groups = {}
    for r in rows:
        cols = [r[9]] + ([r[13]] if r[13] != "-" else [])
        groups.setdefault((r[0], r[1]), []).extend(float(c) for c in cols)
    avg = [line for line in out.splitlines() if line.startswith("# Avg bus bandwidth    : ")]
    check(f"{what}: one avg bus bandwidth line per backend and operation",
          [tuple(line.split("(")[1].rstrip(")").split()) for line in avg] == list(groups), out)
    for line, values in zip(avg, groups.values()):
        # Each printed busbw is rounded to 0.0005, and so is the average; the number is the 6th word.
        mean = sum(values) / len(values)
        printed = float(line.split()[5])
        check(f"{what}: {line}: mean of its busbw columns", abs(printed - mean) <= 0.0011, f"{printed} vs {mean}")


check_averages("table", out, rows)

# ---- JSON, another element size ----------------------------------------------------------------
j = json.loads(bench("--ops", "allreduce,broadcast", "--dtype", "f64", "-b", "8", "-e", "1KiB", "-f", "4", "--json"))
for op in ("allreduce", "broadcast"):
    mine = [r for r in j if r["op"] == op]
    check(f"json {op}: sizes", [r["bytes"] for r in mine] == SWEEP, mine)
    for r in mine:
        what = f"json {op} {r['bytes']}"
        check(f"{what}: count", r["count"] == r["bytes"] // 8, r)
        check(f"{what}: dtype, iters, warmup, world",
              (r["dtype"], r["iters"], r["warmup"], r["world_size"]) == ("f64", 3, 1, RANKS), r)
        check(f"{what}: redop, root", (r["redop"], r["root"]) == (("sum", None) if op == "allreduce" else (None, 0)), r)
        runs = [r] + ([r["in_place"]] if op in IN_PLACE else [])
        check(f"{what}: in_place", (r["in_place"] is None) == (op not in IN_PLACE), r)
        for t in runs:
            check(f"{what}: min <= mean <= max", 0 < t["min_us"] <= t["mean_us"] <= t["max_us"], t)
            algbw = r["bytes"] / (t["mean_us"] * 1e3)
            check(f"{what}: algbw", abs(t["algbw_GBps"] - algbw) <= 1e-9 * algbw, t)
            check(f"{what}: busbw", abs(t["busbw_GBps"] - algbw * BUS_FACTOR[op]) <= 1e-9 * algbw, t)
            check(f"{what}: checked", (t["wrong"], t["check"]) == (0, "ok"), t)

# ---- nccl-tests' flags, checking on by default ------------------------------------------------
def launch(*args, timeout=120):
    return subprocess.run([CHORUS, "launch", "-n", str(RANKS), "--", CHORUS, "bench", *args],
                          capture_output=True, text=True, timeout=timeout)


def data_rows(out):
    return [line.split() for line in out.splitlines() if line and not line.startswith("#")]


p = launch("--backends", "shm,gloo", "--ops", "allreduce,broadcast,reduce", "-b", "64", "-e", "256", "-f", "2",
           "-n", "3", "-w", "1", "-d", "double", "-o", "max", "-r", "1")
check("nccl flags: exit 0", p.returncode == 0, p.stderr)
check("nccl flags: -n 3 -w 1 in the header", "# 2 ranks; 3 iterations after 1 warm-ups;" in p.stdout, p.stdout)
rows = data_rows(p.stdout)
check("nccl flags: every backend x op x size", len(rows) == 2 * 3 * 3, p.stdout)
for r in rows:
    check(f"nccl flags {r[:3]}: -d double is f64, 8-byte elements", r[4] == "f64" and int(r[3]) == int(r[2]) // 8, r)
    check(f"nccl flags {r[:3]}: -o max", r[5] == ("max" if r[1] in REDUCING else "-"), r)
    check(f"nccl flags {r[:3]}: -r 1", r[6] == ("1" if r[1] in ROOTED else "-"), r)
    check(f"nccl flags {r[:3]}: checked by default, none wrong", len(r) == 15 and r[10] == "0", r)
check("nccl flags: checked by default", "\n# Out of bounds values : 0 OK\n" in p.stdout, p.stdout)
check_averages("nccl flags", p.stdout, rows)
check("nccl flags: shm's and gloo's averages apart",
      sum(line.startswith("# Avg bus bandwidth") for line in p.stdout.splitlines()) == 6, p.stdout)

p = launch("--backends", "shm", "-b", "64", "-e", "128", "-n", "2", "-w", "0", "-c", "0")
rows = data_rows(p.stdout)
check("-c 0: exit 0", p.returncode == 0, p.stderr)
check("-c 0: no #wrong columns, no out-of-bounds line",
      rows and all(len(r) == 13 for r in rows) and "Out of bounds" not in p.stdout, p.stdout)

# A fractional factor: begin x 1.5^k, each rounded down to a byte, then to whole f32 elements.
sweep, size = [], 1000.0
while size <= 5000:
    sweep.append(int(size) // 4 * 4)
    size *= 1.5
p = launch("--backends", "shm", "-b", "1000", "-e", "5000", "-f", "1.5", "-n", "2", "-w", "0")
check("-f 1.5: exit 0", p.returncode == 0, p.stderr)
check("-f 1.5: sizes", [int(r[2]) for r in data_rows(p.stdout)] == sweep == [1000, 1500, 2248, 3372],
      f"{[r[2] for r in data_rows(p.stdout)]} vs {sweep}")

# Bad values: exit 2, the flag named (no rank started for those CLI11 or the sweep refuses).
for args, flag in ((["-f", "abc", "-b", "8", "-e", "64"], "-f"), (["-f", "1", "-b", "8", "-e", "64"], "-f"),
                   (["-d", "uint32"], "-d"), (["-d", "floot"], "-d"), (["-o", "sumx"], "-o"), (["-c", "2"], "-c"),
                   (["-r", "2", "--ops", "broadcast"], "-r"), (["-n", "0"], "--iters")):
    p = subprocess.run([CHORUS, "bench", "--backends", "shm", *args], capture_output=True, text=True, timeout=60)
    check(f"bad {args}: exit 2 naming {flag}", p.returncode == 2 and f"{flag}" in p.stderr, f"{p.returncode} {p.stderr}")
p = subprocess.run([CHORUS, "bench", "-x", "1"], capture_output=True, text=True, timeout=60)
check("unknown -x: exit 2, named, did you mean", p.returncode == 2 and "unknown option '-x'" in p.stderr, p.stderr)

# ---- rows as they are measured; an interrupt keeps them ----------------------------------------
# 1 KiB .. 16 MiB, 2000 iterations each: the sweep is far from over when the first row arrives
# (the last size alone is 2000 all-reduces of 16 MiB). The launcher is interrupted as soon as
# the first row has been read through the pipe.
def interrupted_sweep(*extra):
    """A sweep of 1 KiB .. 16 MiB under chorus launch, interrupted (SIGINT to the launcher) once its
    first data line has come through the pipe: (the lines read before, the rest of stdout, stderr,
    the launcher's exit status)."""
    p = subprocess.Popen([CHORUS, "launch", "-n", str(RANKS), "--", CHORUS, "bench", "--backends", "shm", "-b", "1K",
                          "-e", "16M", "-f", "4", "-n", "2000", "-w", "1", *extra],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    head = []
    for line in p.stdout:
        head.append(line)
        if not line.startswith("#"):
            break
    p.send_signal(signal.SIGINT)
    try:
        rest, err = p.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        p.kill()
        rest, err = p.communicate()
    return head, rest, err, p.returncode


head, rest, err, status = interrupted_sweep()
out = "".join(head) + rest
rows = data_rows(out)
lines = out.splitlines()
check("interrupt: the first row came through the pipe before the sweep ended", head and not head[-1].startswith("#"),
      out)
check("interrupt: exit 130 (SIGINT)", status == 130, f"{status} {err}")
check("interrupt: the rows printed are whole, the sweep's first sizes",
      1 <= len(rows) < 8 and all(len(r) == 15 for r in rows) and
      [int(r[2]) for r in rows] == [1024 * 4 ** k for k in range(len(rows))], out)
check("interrupt: the last line says the sweep was interrupted",
      lines and lines[-1].startswith("# Interrupted") and "did not finish" in lines[-1], out)
check("interrupt: no closing average (the sweep did not end)", "Avg bus bandwidth" not in out, out)

# ---- --jsonl: one JSON object per row, each as it is measured -----------------------------------
head, rest, err, status = interrupted_sweep("--jsonl")
first = "".join(head)
try:
    objs = [json.loads(line) for line in (first + rest).splitlines()]
except ValueError as e:
    objs = None
    check("--jsonl: every line is one JSON object", False, f"{e}: {first + rest}")
if objs is not None:
    check("--jsonl: the first row arrived before the sweep ended, the first size", objs and objs[0]["bytes"] == 1024 and
          objs[0]["op"] == "allreduce" and objs[0]["wrong"] == 0, first)
    check("--jsonl: rows in sweep order, fewer than the whole sweep",
          [o["bytes"] for o in objs] == [1024 * 4 ** k for k in range(len(objs))] and len(objs) < 8, first + rest)
check("--jsonl: exit 130 (SIGINT)", status == 130, f"{status} {err}")
p = subprocess.run([CHORUS, "bench", "--backends", "shm", "--json", "--jsonl"], capture_output=True, text=True,
                   timeout=60)
check("--json with --jsonl: exit 2, both named", p.returncode == 2 and "--jsonl" in p.stderr and "--json" in p.stderr,
      p.stderr)

for f in failures:
    print("FAIL", f)
print(f"bench nccl-tests layout: {len(failures)} failures")
sys.exit(1 if failures else 0)
