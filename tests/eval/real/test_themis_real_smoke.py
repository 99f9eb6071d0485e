#!/usr/bin/env python3
"""`chorus reproduce themis-real` end to end at a tiny size: exit 0, a table (a goal column and
a summary line), and a CSV with the columns the issue names and one row per network x scheduler
((3 fixed + 1 random) x 3), every row's result checked by the ranks ("passed") and a positive
measured and predicted time; the random network's YAML written beside the fixed ones. No timing
is asserted: the study's accuracy is a measurement (BENCHMARKS.md).

usage: test_themis_real_smoke.py CHORUS
"""
import csv
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

CHORUS = sys.argv[1]
with tempfile.TemporaryDirectory() as out:
    p = subprocess.run([CHORUS, "reproduce", "themis-real", "--size", "64KiB", "--chunks", "2", "--iters", "1",
                        "--random", "1", "--seed", "7", "-q", "-o", out], capture_output=True, text=True, timeout=280)
    print(p.stdout, p.stderr)
    assert p.returncode == 0, f"exit {p.returncode}"
    with open(os.path.join(out, "real_vs_sim.csv")) as f:
        rows = list(csv.DictReader(f))
    for col in ("topology", "scheduler", "size_bytes", "chunks", "measured_ns", "predicted_ns"):
        assert col in rows[0], f"column {col} missing"
    assert len(rows) == 12, f"{len(rows)} rows, expected 12"
    assert {r["scheduler"] for r in rows} == {"baseline", "themis-fifo", "themis-scf"}
    topologies = {r["topology"] for r in rows}
    assert len(topologies) == 4, topologies
    random_net = [t for t in topologies if t.startswith("rnd7-1_")]
    assert len(random_net) == 1, topologies
    assert os.path.exists(os.path.join(out, "networks", random_net[0] + ".yaml"))
    assert "goal" in p.stdout.splitlines()[0], p.stdout
    assert "of 12 rows within the goal" in p.stdout, p.stdout
    for r in rows:
        assert r["check"] == "passed", r
        assert float(r["measured_ns"]) > 0 and float(r["predicted_ns"]) > 0, r
        assert r["size_bytes"] == "65536" and r["chunks"] == "2", r
    for name in ("real_vs_sim.svg", "speedup.svg"):  # matplotlib's SVG (XML prolog, root <svg>)
        root = ET.parse(os.path.join(out, name)).getroot()
        assert root.tag == "{http://www.w3.org/2000/svg}svg", name
print("themis-real: 12 rows, all checked")
