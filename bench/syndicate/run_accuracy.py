#!/usr/bin/env python3
"""How close `chorus run workload` comes to the optimizer's prediction for the same plan.

For each workload and rank count, runs the command TRIALS times (each: calibration, plan,
--repeat runs, the median reported) and prints the measured / predicted ratio (min, median,
max) beside the last run's breakdown (`last_run` of the JSON report): compute time against the
plan's, motif-step time against the schedule's, and the ranks' spread in issuing the same step.

  python3 bench/syndicate/run_accuracy.py --chorus build/chorus --trials 5 \\
      --workloads moe-tiny,tests/data/workloads/moe_small.yaml --ranks 2,4 --bind none
"""
import argparse
import json
import os
import statistics
import subprocess
import sys


def run(chorus, workload, ranks, bind, repeat, costs):
    cmd = [chorus, "launch", "-n", str(ranks), "--bind", bind, "--", chorus, "run", "workload", "--workload", workload,
           "--repeat", str(repeat), "--costs", costs, "--json"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({r.returncode}):\n{r.stderr}")
    return json.loads(r.stdout)


def spread(values, fmt):
    return f"{fmt.format(min(values))} / {fmt.format(statistics.median(values))} / {fmt.format(max(values))}"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--chorus", default="build/chorus")
    ap.add_argument("--workloads", default="moe-tiny")
    ap.add_argument("--ranks", default="2,4")
    ap.add_argument("--bind", default="auto", choices=["auto", "core", "none"])
    ap.add_argument("--trials", type=int, default=5)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--costs", default="measured", choices=["measured", "in-run", "model"])
    a = ap.parse_args()
    print(f"costs {a.costs}, bind {a.bind}, {a.trials} trials of --repeat {a.repeat}; each cell min / median / max")
    print("| workload | ranks | measured / predicted | compute / planned | steps / scheduled | issue spread per step (us) |")
    print("| --- | ---: | --- | --- | --- | --- |")
    for w in a.workloads.split(","):
        for n in (int(x) for x in a.ranks.split(",")):
            rows = [run(a.chorus, w, n, a.bind, a.repeat, a.costs) for _ in range(a.trials)]
            last = [r["last_run"] for r in rows]
            print(f"| {os.path.basename(w)} | {n} | {spread([r['ratio'] for r in rows], '{:.2f}')} | "
                  f"{spread([l['compute_time_ratio'] for l in last], '{:.2f}')} | "
                  f"{spread([l['step_time_ratio'] for l in last], '{:.2f}')} | "
                  f"{spread([l['issue_spread_ns'] / l['steps'] / 1e3 for l in last], '{:.0f}')} |", flush=True)


if __name__ == "__main__":
    main()
