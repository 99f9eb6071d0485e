#!/usr/bin/env python3
"""Runs the MoE and DLRM examples with one chorus backend at a time, with a mix, and with torch's own
gloo backend, and compares loss curves and step times (MCR-DL Figs. 8-9 in miniature).

Every configuration runs under mpirun (so mpi, gloo and shm are all available), N ranks, the same
seeds. Loss curves must agree with torch's gloo to the stated tolerance (they differ only in the
order floating-point sums are taken, which differs between backends' all-reduce algorithms); the
table gives the mean step time after the first --warmup steps.

usage: python3 examples/torch/compare.py [--ranks 4] [--steps 20] [--models moe,dlrm]
       [--mixed "all_to_all_single:mpi,all_reduce:shm"] [--rtol 1e-4] [--out DIR]
Needs PYTHONPATH to hold the chorus package (<build>/python) and mpirun on PATH.
"""
import argparse
import csv
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def run(model, config, args, out):
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMP_NUM_THREADS="1")
    backend = "gloo" if config == "torch-gloo" else "chorus"
    if config.startswith("chorus-"):
        env["CHORUS_BACKEND_MAP"] = {"chorus-auto": "", "chorus-mixed": args.mixed}.get(config, f"*:{config[7:]}")
    env.setdefault("CHORUS_BACKEND_MAP", "")
    exports = [a for k in ("CHORUS_BACKEND_MAP", "OMP_NUM_THREADS", "PYTHONPATH", "CHORUS_RT_TUNING") if k in env
               for a in ("-x", k)]
    cmd = ["mpirun", "--oversubscribe", "-n", str(args.ranks), *exports, sys.executable, os.path.join(HERE, f"{model}.py"),
           "--steps", str(args.steps), "--backend", backend, "--json", out]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=900)
    if proc.returncode != 0:
        raise SystemExit(f"compare.py: {model} with {config} failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}")
    with open(out) as f:
        return json.load(f)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ranks", type=int, default=4)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--models", default="moe,dlrm")
    ap.add_argument("--configs", default="torch-gloo,chorus-mpi,chorus-gloo,chorus-shm,chorus-mixed,chorus-auto")
    ap.add_argument("--mixed", default="all_to_all_single:mpi,all_reduce:shm")
    ap.add_argument("--rtol", type=float, default=1e-4)
    ap.add_argument("--out", help="directory for compare.csv and the runs' JSON (default: a temporary one)")
    args = ap.parse_args()
    out_dir = args.out or tempfile.mkdtemp(prefix="chorus-compare-")
    os.makedirs(out_dir, exist_ok=True)
    rows, failures = [], []
    for model in args.models.split(","):
        results = {c: run(model, c, args, os.path.join(out_dir, f"{model}-{c}.json")) for c in args.configs.split(",")}
        ref = results[args.configs.split(",")[0]]["losses"]
        for config, r in results.items():
            worst = max(abs(a - b) / max(abs(b), 1e-12) for a, b in zip(r["losses"], ref))
            ms = statistics.mean(r["step_ms"][args.warmup:])
            rows.append({"model": model, "config": config, "ranks": args.ranks, "mean_step_ms": round(ms, 3),
                         "final_loss": r["losses"][-1], "max_rel_loss_diff": worst})
            if worst > args.rtol:
                failures.append(f"{model} {config}: loss differs from {args.configs.split(',')[0]} by {worst:.2e} relative")
    with open(os.path.join(out_dir, "compare.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    print(f"{'model':<6} {'config':<14} {'step ms':>9} {'final loss':>12} {'max rel diff':>13}")
    for r in rows:
        print(f"{r['model']:<6} {r['config']:<14} {r['mean_step_ms']:>9.2f} {r['final_loss']:>12.6f} {r['max_rel_loss_diff']:>13.2e}")
    print(f"compare.py: results in {out_dir}/compare.csv")
    for f in failures:
        print(f"compare.py: FAILED: {f}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
