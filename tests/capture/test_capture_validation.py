"""`chorus reproduce capture-validation` in its smallest configuration: one program (moe.py, small
sizes), 2 ranks, shm, one run. Checked: the files it writes (CSV, JSON, the figure, the capture
with its host window's traces); every error cell equals (predicted - measured) / measured
recomputed here from the row's other cells, and measured compute = measured - measured exposed
communication; the JSON's rows are the CSV's; bad flags exit with status 2 naming the flag. No
accuracy is asserted (the machine running the tests is shared and noisy).

usage: test_capture_validation.py CHORUS PYTHON
"""
import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile

CHORUS, PYTHON = sys.argv[1:3]


def check_row(row, errors):
    measured, predicted, error = float(row["measured_ms"]), float(row["predicted_ms"]), float(row["error_pct"])
    if not measured > 0 or not predicted > 0:
        errors.append(f"measured {measured} and predicted {predicted} must be > 0")
        return
    # The CSV's cells have 4 decimals: the recomputed error may differ by the rounding of its inputs.
    recomputed = 100 * (predicted - measured) / measured
    slack = 100 * 0.5e-4 * (1 / measured + predicted / measured ** 2) + 0.5e-4
    if abs(recomputed - error) > slack:
        errors.append(f"error_pct {error}, but (predicted - measured) / measured = {recomputed}")
    compute = float(row["measured_compute_ms"])
    exposed = float(row["measured_exposed_comm_ms"])
    if abs(compute - (measured - exposed)) > 1.5e-4:
        errors.append(f"measured compute {compute} != measured {measured} - exposed {exposed}")
    if exposed < 0 or float(row["predicted_exposed_comm_ms"]) < 0:
        errors.append("an exposed communication < 0")


def main():
    out = tempfile.mkdtemp(prefix="chorus_capture_validation_")
    errors = []
    cmd = [CHORUS, "reproduce", "capture-validation", "--programs", "moe", "--small", "--runs", "1", "--ranks", "2",
           "--backends", "shm", "--python", PYTHON, "--out", out, "-q"]
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if run.returncode != 0:
        sys.exit(f"FAIL: {' '.join(cmd)}: status {run.returncode}\n{run.stdout}\n{run.stderr}")
    for name in ("capture_validation.csv", "capture_validation.json", "capture_validation.svg"):
        if not os.path.isfile(os.path.join(out, name)):
            errors.append(f"{name} was not written")
    with open(os.path.join(out, "capture_validation.csv")) as f:
        rows = list(csv.DictReader(f))
    if len(rows) != 1 or rows[0]["program"] != "moe" or rows[0]["ranks"] != "2" or rows[0]["backend"] != "shm":
        errors.append(f"expected one row moe, 2, shm: {rows}")
    for row in rows:
        check_row(row, errors)
    with open(os.path.join(out, "capture_validation.json")) as f:
        study = json.load(f)
    if len(study["rows"]) != len(rows):
        errors.append(f"the JSON has {len(study['rows'])} rows, the CSV {len(rows)}")
    for j, c in zip(study["rows"], rows):
        for key in ("measured_ms", "predicted_ms", "error_pct"):
            if abs(j[key] - float(c[key])) > 1e-4:
                errors.append(f"{key}: JSON {j[key]}, CSV {c[key]}")
        if len(j["runs"]) != 1:
            errors.append(f"{len(j['runs'])} runs in the JSON, --runs 1")
        for r in j["runs"]:
            for rank in (0, 1):
                for name in (f"trace_host.{rank}.json", f"graph.{rank}.json", "manifest.json"):
                    if not os.path.isfile(os.path.join(r["capture"], name)):
                        errors.append(f"{r['capture']}: {name} is missing")
    if abs(study["worst_abs_error_pct"] - abs(float(rows[0]["error_pct"]))) > 1e-3:
        errors.append(f"worst error {study['worst_abs_error_pct']} is not the one row's |error|")
    if "median" not in run.stdout or "worst" not in run.stdout:
        errors.append(f"the table does not give the median and worst error:\n{run.stdout}")

    for flags, field in ((["--runs", "0"], "runs"), (["--ranks", "1"], "ranks"), (["--backends", "mpi"], "backends"),
                         (["--programs", "nope"], "programs"), (["--full", "--ranks", "2"], "--full")):
        bad = subprocess.run([CHORUS, "reproduce", "capture-validation", "--out", out, "-q", *flags],
                             capture_output=True, text=True, timeout=60)
        if bad.returncode != 2 or field not in bad.stderr:
            errors.append(f"{flags}: status {bad.returncode} (expected 2, naming {field}): {bad.stderr.strip()}")
    shutil.rmtree(out, ignore_errors=True)
    if errors:
        sys.exit("FAIL:\n" + "\n".join(errors))
    print("capture-validation: files, error cells and bad flags OK")


if __name__ == "__main__":
    main()
