#!/usr/bin/python3
"""BENCHMARKS.md's current table: every headline number, measured by one script.

  bench/current.py run [--only ID,...] [--ci-log FILE]   measure, then rewrite those rows
  bench/current.py check                                  is the table whole and are its commands ours?
  bench/current.py list                                   the rows and their commands

`run` executes each row's command exactly as the table shows it (from the repository's root,
after the README's main command has built build/), parses what it printed, and writes the row:
what was measured, the command, the result, the baseline measured in the same run, the date and
load, and the machine. The `ci` row is not run here (it takes 20 minutes and must be a clean
clone): pass the log of `bash .ci/run 2>&1 | tee ci.log` with --ci-log. Rows not run keep their
text. `check` (the ctest `benchmarks_table`) fails if a row is missing, extra, out of order, has
an empty cell, or shows a command other than the one this script runs.
"""
import argparse
import csv
import os
import re
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOC = os.path.join(ROOT, "BENCHMARKS.md")
BEGIN = "<!-- current table: written by bench/current.py run, checked by bench/current.py check -->"
END = "<!-- end of the current table -->"
HEADER = ["id", "what", "command", "result", "baseline (same run)", "when", "machine"]


def sh(cmd):
    """Runs a row's command as the table shows it; returns its stdout (stderr passes through)."""
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    print(f"$ {cmd}", file=sys.stderr, flush=True)
    done = subprocess.run(cmd, shell=True, cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True)
    if done.returncode != 0:
        sys.exit(f"bench/current.py: '{cmd}' exited with status {done.returncode}")
    return done.stdout


def human_bytes(n):
    for unit, size in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size and n % size == 0:
            return f"{n // size} {unit}"
    return f"{n} B"


def span(values):
    lo, hi = min(values), max(values)
    return f"{lo:.2f}x" if f"{lo:.2f}" == f"{hi:.2f}" else f"{lo:.2f}-{hi:.2f}x"


def markdown_rows(text):
    """The data rows of every markdown table in `text`, as lists of cells."""
    rows = []
    for line in text.splitlines():
        if line.startswith("|") and not line.startswith("|---") and not line.startswith("| bytes"):
            rows.append([c.strip() for c in line.strip().strip("|").split("|")])
    return rows


def leading_float(cell):
    return float(cell.split()[0])


# --- the rows' parsers: each takes the command's stdout, returns (result, baseline) ---------------


def parse_simulator(out):
    table = {}
    for line in out.splitlines():
        f = line.split()
        if f and f[0] == "4D-Ring_FC_Ring_SW":
            table["scf"], table["baseline"] = float(f[3]), float(f[1])
        if len(f) == 6 and f[0] == "16^6" and f[3] == "4096":
            table["big"] = float(f[4])
    big = table["big"] / 1000
    return (f"themis-scf {table['scf']:.1f} us per simulation; 16^6 NPUs (16.8 M) in 4,096 chunks: {big:.1f} ms",
            f"the baseline scheduler on the same network, same run: {table['baseline']:.1f} us")


def parse_overhead(out):
    cells, base = [], []
    for line in out.splitlines():
        f = line.split()
        if len(f) == 7 and f[0].isdigit():
            size, direct, sync = int(f[0]), float(f[2]), float(f[3])
            cells.append(f"{human_bytes(size)} {sync - direct:+.2f} us ({100 * (sync - direct) / direct:+.0f} %)")
            base.append(f"{human_bytes(size)} {direct:.2f} us")
    return ("chorus's blocking call minus the direct call: " + ", ".join(cells) +
            ". A call of up to 16 KiB rides inside the agreement's exchange, its row in eager parts of 4032 bytes "
            "(up to 4 ranks; 3992 bytes, one part, up to 8), a larger one pays the exchange first; "
            "`CHORUS_RT_AGREE=0` removes it and the guarantee with it "
            "(docs/failures.md)",
            "`MPI_Allreduce` called directly, same job: " + ", ".join(base))


def vs_plain(rows, col, plain_col):
    ratios = [leading_float(r[col]) / leading_float(r[plain_col]) for r in rows if r[col] != "-"]
    return span(ratios)


def parse_small(out):
    rows = [r for r in markdown_rows(out.split("## 2 ranks")[1]) if r[1] != "-"]
    first, last = human_bytes(int(rows[0][0])), human_bytes(int(rows[-1][0]))
    upto4k = [r for r in rows if int(r[0]) <= 4096]
    plain = ", ".join(f"{human_bytes(int(r[0]))} {leading_float(r[3]):.2f} us" for r in rows)
    return (f"mean per call, {first}-{last}: chorus shm {vs_plain(rows, 1, 3)} of plain MPI; chorus mpi "
            f"{vs_plain(upto4k, 2, 3)} up to 4 KiB, {vs_plain(rows[len(upto4k):], 2, 3)} above (calls of up to 16 KiB "
            "ride inside the agreement's exchange, up to 4 ranks; `CHORUS_RT_AGREE=0` removes it)",
            f"plain MPI (`bench_mpi_plain`: `MPI_Allreduce`, no chorus code), same rounds: {plain}")


def parse_gloo(out):
    rows = [r for r in markdown_rows(out.split("## 2 ranks")[1]) if r[6] != "-"]
    ratios = [float(r[-1]) for r in rows]
    worst = max(rows, key=lambda r: float(r[-1]))
    return (f"chorus gloo / the better plain Gloo algorithm, mean per call, {human_bytes(int(rows[0][0]))}-"
            f"{human_bytes(int(rows[-1][0]))}: {span(ratios)} (worst at {human_bytes(int(worst[0]))})",
            "plain Gloo (`bench_gloo_plain`: Gloo's ring and halving-doubling, no chorus code), same rounds")


def parse_large(out):
    rows = markdown_rows(out.split("## 2 ranks")[1])
    biggest = rows[-1]
    gbps = lambda cell: int(biggest[0]) / leading_float(cell) / 1e3
    return (f"mean per call, 1-128 MiB: chorus shm {vs_plain(rows, 1, 3)} of plain MPI, chorus mpi "
            f"{vs_plain(rows, 2, 3)} of plain MPI, chorus gloo {span([float(r[-1]) for r in rows])} of plain Gloo; "
            f"128 MiB algorithm bandwidth: shm {gbps(biggest[1]):.1f}, mpi {gbps(biggest[2]):.1f}, gloo "
            f"{gbps(biggest[6]):.1f} GB/s",
            f"plain MPI and plain Gloo, same rounds; 128 MiB: MPI {gbps(biggest[3]):.1f} GB/s, Gloo "
            f"{int(biggest[0]) / min(leading_float(biggest[7]), leading_float(biggest[8])) / 1e3:.1f} GB/s")


def parse_fusion(out):
    rows = list(csv.DictReader(line for line in out.splitlines() if line and not line.startswith("#")))
    res, base = [], []
    for r in rows:
        res.append(f"{r['backend']} {float(r['fused_ms']):.1f} ms")
        base.append(f"{r['backend']} {float(r['blocking_ms']):.1f} / {float(r['async_ms']):.1f} ms")
    return ("1,000 all-reduces of 4 KiB, fused in 1 MiB buffers (T = 200 us), 2 ranks: " + ", ".join(res),
            "the same issued one by one, blocking / asynchronous, same run: " + ", ".join(base))


def parse_recorder(out):
    micro = {f[0]: float(f[1]) for f in (line.split() for line in out.splitlines()) if len(f) == 2 and f[0].endswith("_ns")}
    rows = {(r[0], int(r[1])): r for r in markdown_rows(out) if r[0] in ("shm", "gloo")}
    shm4k = rows[("shm", 4096)]
    share = 100 * (micro["recorder_on_ns"] - micro["recorder_off_ns"]) / 1000 / float(shm4k[3])
    cells = [f"{b} {human_bytes(n)} {r[2]} us ({100 * (float(r[5]) - 1):+.1f} %)" for (b, n), r in sorted(rows.items())]
    base = [f"{b} {human_bytes(n)} {r[3]} us" for (b, n), r in sorted(rows.items())]
    return (f"recording one operation: {micro['recorder_on_ns']:.1f} ns (ring of 256 and beacon), "
            f"{share:.1f} % of a 4 KiB shm all-reduce; memory 64 B an entry, 16 KiB a lane, 48 KiB a backend or "
            "group on shm and gloo. Blocking all-reduces, 2 ranks, recorder on: " + ", ".join(cells),
            f"the recorder off: a ring of capacity 0, {micro['recorder_off_ns']:.1f} ns; a second runtime of each "
            "rank with the recorder off, rounds alternated in the same job: " + ", ".join(base))


def parse_torch(out):
    rows = [line.split() for line in out.splitlines() if line.startswith("all_reduce ")]
    ratios = [float(f[4]) for f in rows]
    return (f"torch.distributed all_reduce on the \"chorus\" backend, {human_bytes(int(rows[0][1]))}-"
            f"{human_bytes(int(rows[-1][1]))}, 2 ranks: torch's gloo takes {span(ratios)} chorus's time",
            "torch's own gloo backend, same program, rounds alternated: " +
            ", ".join(f"{human_bytes(int(f[1]))} {float(f[3]):.0f} us against {float(f[2]):.0f} us" for f in rows))


def parse_themis_real(out):
    path = os.path.join(ROOT, "results/themis-real/real_vs_sim.csv")
    rows = list(csv.DictReader(open(path)))
    errors = [abs(float(r["measured_ns"]) / float(r["predicted_ns"]) - 1) for r in rows]
    within = sum(e <= 0.05 for e in errors)
    return (f"{within} of {len(rows)} rows within 5 % of the prediction; largest error {100 * max(errors):.1f} %. "
            "Emulated: real bytes over shm, each stage paced to the model's time for the network "
            "(docs/schedule-executor.md, \"Emulation\"): this checks the executor runs the simulated schedule, "
            "not that the model predicts this host's copies",
            "the simulator's prediction of each row (`predicted_ns`)")


def parse_ci(log):
    text = open(log).read()
    stage = lambda name: int(re.search(rf"=== {re.escape(name)}: (\d+) s ===", text).group(1))
    tests = [int(n) for n in re.findall(r"tests passed, 0 tests failed out of (\d+)", text)]
    fuzz = len(re.findall(r"^fuzz: \S+ \d+s: ", text, re.M))
    total = sum(int(s) for s in re.findall(r"=== [^=]*: (\d+) s ===", text))
    if "scripts/test.sh: all stages passed" not in text:
        sys.exit(f"bench/current.py: {log} is not the log of a passing .ci/run")
    parts = [f"stage 1 {stage('build: configure and build')} s build + {stage('build: tests')} s tests "
             f"({tests[0]})", f"ASan {stage('build-asan: configure and build')} + {stage('build-asan: tests')} s "
             f"({tests[1]})", f"TSan {stage('build-tsan: configure and build')} + {stage('build-tsan: tests')} s "
             f"({tests[2]})", f"fuzz {stage('build-fuzz: configure and build')} + {stage('build-fuzz: fuzzing')} s ({fuzz} targets)"]
    return (f"{total:,} s, passed: " + "; ".join(parts), "the 40-minute budget (2,400 s) the project keeps")


def parse_sweep(out):
    med = {}
    for line in out.splitlines():
        m = re.match(r"(.*): median ([0-9.]+) s over", line)
        if m:
            med[m.group(1)] = float(m.group(2))
    one, two, ranks = med["1 worker"], med["2 workers (-j 2)"], med["2 mpirun ranks (-j 1 each)"]
    same = "rows identical in every run" in out
    return (f"504 points of examples/sweep/collectives.yaml: 2 workers {two:.2f} s ({one / two:.2f}x faster), 2 "
            f"mpirun ranks {ranks:.2f} s ({one / ranks:.2f}x); " + ("rows identical in every run" if same else
                                                                   "ROWS DIFFER between runs"),
            f"1 worker, same rounds: {one:.2f} s")


def parse_dlrm(out):
    runs = {}  # servers -> [(flows, iteration_ms, wall_s, cpu_s, peak_mb)]
    for line in out.splitlines():
        f = line.split()
        if len(f) == 9 and f[0].isdigit():
            runs.setdefault(int(f[0]), []).append((int(f[2]), float(f[3]), float(f[4]), float(f[5]), float(f[7])))

    def summary(n):
        rs = runs[n]
        iterations = {r[1] for r in rs}
        cpu, wall, mb = [r[3] for r in rs], [r[2] for r in rs], [r[4] for r in rs]
        same = "" if len(iterations) == 1 else " (ITERATION TIMES DIFFER between runs)"
        return (f"{n:,} servers, {rs[0][0]:,} flows, iteration {rs[0][1]:.3f} ms{same}: CPU {min(cpu):.2f}-{max(cpu):.2f} s, "
                f"wall {min(wall):.2f}-{max(wall):.2f} s, peak RSS {max(mb):,.0f} MB ({len(rs)} runs)")
    met = "met" if max(r[3] for r in runs[1024]) < 5.0 else "NOT met"
    return (summary(1024) + f"; the goal, under 5 s CPU on one core: {met} in every run", "same runs: " + summary(512))


def parse_capture_overhead(out):
    m = re.search(r"\(recorded\) ([0-9.]+) ms a step, the unrecorded steps .*? ([0-9.]+) ms: overhead ([-+0-9.]+) %", out)
    if not m:
        sys.exit("bench/current.py: no overhead line in chorus capture's output")
    inside, outside, pct = float(m.group(1)), float(m.group(2)), m.group(3)
    return (f"examples/torch/moe.py (defaults), 2 ranks: recorded steps 4..7 {inside:.1f} ms a step, overhead {pct} % "
            "(the profiler and the execution graph observer at every operator)",
            f"the same run's unrecorded steps (1..3 and 17..23): {outside:.1f} ms a step")


def parse_capture_validation(out):
    m = re.search(r"median ([0-9.]+) %, worst ([0-9.]+) %", out)
    rows = [line.split() for line in out.splitlines()
            if line.split()[:1] and line.split()[0] in ("ddp-mlp", "moe", "dlrm", "validation")]
    if not m or not rows:
        sys.exit("bench/current.py: no capture-validation table in the output")
    errors = ", ".join(f"{f[0]} {f[6]}" for f in rows)
    return (f"simulated step on --topology host against the program's own: absolute error median {m.group(1)} %, worst "
            f"{m.group(2)} % ({errors}; 2 ranks, shm, median of 3 runs)",
            "the programs' unrecorded steps, same runs: " + ", ".join(f"{f[0]} {float(f[4]):.1f} ms" for f in rows))


SMALL = "bench/rt/run_small_msgs.sh build 3 all 2"
ROWS = [
    ("simulator", "the simulator's speed: a 1 GB all-reduce in 64 chunks on 4D-Ring_FC_Ring_SW (Themis Table 2)",
     "build/bench/bench_sim", parse_simulator),
    ("api-overhead", "the C++ API's overhead over plain `MPI_Allreduce`, 2 ranks, float32 sum, blocking",
     "mpirun --oversubscribe -n 2 build/bench/rt/bench_rt_overhead --max-bytes 16384", parse_overhead),
    ("allreduce-small", "small all-reduces against a plain MPI program, 2 ranks, float32 sum", SMALL, parse_small),
    ("gloo-small", "chorus gloo against a plain Gloo program, 8 B-16 MiB, 2 ranks", SMALL, parse_gloo),
    ("allreduce-large", "large all-reduces against plain MPI and plain Gloo, 1-128 MiB, 2 ranks",
     "bench/rt/run_small_msgs.sh build 3 large 2", parse_large),
    ("sweep", "a design-space sweep on every core and every rank (`chorus sweep`), median of 3 alternated rounds",
     "bench/sweep/run_scaling.sh build 3", parse_sweep),
    ("recorder", "the flight recorder's cost (docs/flight-recorder.md) against the recorder off",
     "bench/rt/run_recorder.sh build 21 5000", parse_recorder),
    ("fusion", "tensor fusion (MCR-DL) against the same calls one by one",
     "build/chorus launch -n 2 -- build/bench/rt/bench_fusion --buffers 1MiB --reps 5", parse_fusion),
    ("torch-backend", "the torch.distributed backend against torch's own gloo",
     "PYTHONPATH=build/python build/chorus launch -n 2 --bind none -- /usr/bin/python3 bench/python/bench_torch_backends.py "
     "--ops all_reduce "
     "--sizes 4096,1048576,16777216 --rounds 3", parse_torch),
    ("themis-real", "Themis schedules executed on real ranks against the simulator's prediction, 4-8 ranks",
     "build/chorus reproduce themis-real -q", parse_themis_real),
    ("dlrm-1024", "the flow-level model's largest point: one DLRM iteration on 1,024 servers on TopoOpt's fabric (d = 8, "
     "batch tolerance 1e-3, as `reproduce topoopt`), one process per run on one core",
     "bench/topoopt/run_dlrm_scaling.sh build/bench/bench_flow_model build/bench/bench_flow_model 512 1024",
     parse_dlrm),
    ("capture-overhead", "`chorus capture`'s cost on the recorded steps (docs/capture.md)",
     "build/chorus capture -n 2 --out /tmp/chorus-bench-capture --steps 4:8 -- /usr/bin/python3 examples/torch/moe.py "
     "--steps 24 2>&1", parse_capture_overhead),
    ("capture-validation", "a captured program's simulated step against its own step time on this host",
     "build/chorus reproduce capture-validation -q", parse_capture_validation),
    ("ci", "CI: the README's test command on a clean clone", "bash .ci/run", None),
]


def machine():
    cpus = os.cpu_count()
    model = "unknown CPU"
    for line in subprocess.run(["lscpu"], stdout=subprocess.PIPE, text=True).stdout.splitlines():
        if line.startswith("Model name:"):
            model = line.split(":", 1)[1].strip()
    mem = int(open("/proc/meminfo").readline().split()[1]) / (1 << 20)
    return f"{cpus} cores ({model}), {mem:.0f} GiB"


def now():
    return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()) + f", load {os.getloadavg()[0]:.1f}"


def read_table(doc=DOC):
    text = open(doc).read()
    if BEGIN not in text or END not in text:
        print(f"{doc}: the current table's markers are missing", file=sys.stderr)
        sys.exit(2)
    head, rest = text.split(BEGIN, 1)
    body, tail = rest.split(END, 1)
    rows = {}
    order = []
    for line in body.strip().splitlines()[2:]:
        cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
        rows[cells[0]] = cells
        order.append(cells[0])
    return head, rows, order, tail


def write_table(head, rows, tail):
    lines = ["| " + " | ".join(HEADER) + " |", "|" + " --- |" * len(HEADER)]
    lines += ["| " + " | ".join(rows[rid]) + " |" for rid, *_ in ROWS if rid in rows]
    open(DOC, "w").write(head + BEGIN + "\n" + "\n".join(lines) + "\n" + END + tail)


def check(doc=DOC):
    _, rows, order, _ = read_table(doc)
    problems = []
    want = [rid for rid, *_ in ROWS]
    if order != want:
        problems.append(f"rows are {order}, expected {want} (in this order)")
    for rid, _, command, _ in ROWS:
        cells = rows.get(rid)
        if cells is None:
            continue
        if len(cells) != len(HEADER):
            problems.append(f"row '{rid}': {len(cells)} cells, expected {len(HEADER)}")
            continue
        if cells[2] != f"`{command}`":
            problems.append(f"row '{rid}': command {cells[2]}, but the script runs `{command}`")
        for name, cell in zip(HEADER, cells):
            if not cell or cell == "-":
                problems.append(f"row '{rid}': the '{name}' cell is empty")
    for p in problems:
        print(f"{doc}: {p}", file=sys.stderr)
    return 2 if problems else 0


def run(only, ci_log):
    head, rows, _, tail = read_table()
    outputs = {}
    for rid, what, command, parse in ROWS:
        if only and rid not in only:
            continue
        if rid == "ci":
            if not ci_log:
                continue
            result, baseline = parse_ci(ci_log)
        else:
            if command not in outputs:
                outputs[command] = sh(command)
            result, baseline = parse(outputs[command])
        rows[rid] = [rid, what, f"`{command}`", result, baseline, now(), machine()]
        write_table(head, rows, tail)
        print(f"{rid}: {result}", file=sys.stderr, flush=True)
    return check()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="verb", required=True)
    r = sub.add_parser("run", help="measure and rewrite rows")
    r.add_argument("--only", default="", help="comma-separated row ids (default: all but ci)")
    r.add_argument("--ci-log", help="the log of a passing `bash .ci/run` on a clean clone, for the ci row")
    c = sub.add_parser("check", help="check the table")
    c.add_argument("--doc", default=DOC, help="the file to check (default: BENCHMARKS.md)")
    sub.add_parser("list", help="list the rows")
    args = ap.parse_args()
    if args.verb == "list":
        for rid, what, command, _ in ROWS:
            print(f"{rid:16} {command}")
        return 0
    if args.verb == "check":
        return check(args.doc)
    only = {x for x in args.only.split(",") if x}
    unknown = only - {rid for rid, *_ in ROWS}
    if unknown:
        sys.exit(f"bench/current.py: unknown row(s) {sorted(unknown)}; see bench/current.py list")
    return run(only, args.ci_log)


if __name__ == "__main__":
    sys.exit(main())
