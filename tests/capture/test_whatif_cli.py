#!/usr/bin/env python3
"""What-ifs from a capture on the command line (docs/capture.md, "What-ifs"), on the hand-made
captures of tests/data/capture (make_captures.py: per rank an aten::mm of 1000 us, then an
all-reduce of 4 MiB on the world; pairs4 adds one of 1 MiB on {0,1} / {2,3}, irregular4 on
{0,1,2} / {3}). Needs no torch: the captures are files.

- `sim workload --world 8` on one switch of 8 NPUs: the all-reduce's time is Table 1's
  halving-doubling formula for 8 NPUs (docs/themis-model.md), worked out here; `--compute-scale 2`
  halves the compute exactly and leaves the communication;
- `sim whatif --out`: one row per network and scheduler (a fabric's once), compute + exposed
  communication = the iteration in every row, the CSV, JSON and SVG written;
- `chorus export --chakra` takes `--world` and `--compute-scale`: the traces, read back, run as the
  capture does;
- `chorus sweep` varies `world` and `compute-scale`;
- `--grow-groups` on hybrid4 (a 4-rank tensor x data-parallel capture: pairs {0,1}, {2,3} as
  torch/1, torch/2; {0,2}, {1,3} as torch/3, torch/4): at 8 ranks on 2 x 4 the data-parallel
  all-reduce runs on 4 NPUs, Table 1's time for 4 worked out here, through `sim workload`,
  `sim whatif`, `export --chakra` and a sweep;
- bad input exits 2 naming the flag, the group and the rank.

usage: test_whatif_cli.py CHORUS REPO_ROOT
"""
import csv
import json
import math
import os
import subprocess
import sys
import tempfile
import unittest

CHORUS = os.path.abspath(sys.argv.pop(1)) if len(sys.argv) > 1 else "build/chorus"
ROOT = os.path.abspath(sys.argv.pop(1)) if len(sys.argv) > 1 else os.getcwd()
DATA = os.path.join(ROOT, "tests", "data", "capture")
MM_NS = 1000 * 1000
WORLD_BYTES = 4 * 1024 * 1024


def switch_yaml(directory, npus):
    path = os.path.join(directory, f"switch{npus}.yaml")
    with open(path, "w") as f:
        f.write(f"name: switch{npus}\ndims:\n  - {{kind: switch, size: {npus}, link_bandwidth_GBps: 10, "
                "links_per_npu: 1, latency_ns: 500}\n")
    return path


def all_reduce_ns(m, p):
    """Table 1, switch (halving-doubling), one chunk: reduce-scatter then all-gather, each log2 P steps
    of 500 ns and (P-1)/P m bytes at 10 GB/s = 10 bytes/ns."""
    return 2 * (math.log2(p) * 500 + (p - 1) / p * m / 10)


def two_by_yaml(directory, k):
    """2 x k: dimension 0 20 GB/s and 300 ns a step, dimension 1 10 GB/s and 500 ns."""
    path = os.path.join(directory, f"two_by_{k}.yaml")
    with open(path, "w") as f:
        f.write(f"name: two_by_{k}\ndims:\n  - {{kind: switch, size: 2, link_bandwidth_GBps: 20, links_per_npu: 1, "
                f"latency_ns: 300}}\n  - {{kind: switch, size: {k}, link_bandwidth_GBps: 10, links_per_npu: 1, "
                "latency_ns: 500}\n")
    return path


# hybrid4 at 8 ranks on 2 x 4, the data-parallel groups grown to {0,2,4,6} / {1,3,5,7} (dimension 1,
# 4 NPUs): after the mm (1 ms) the pair's all-reduce of 1 MiB on dimension 0, 2 (300 + 1/2 x 1048576
# / 20) = 53028.8 ns, and at the same time (both wait for the mm alone, on different dimensions) the
# grown group's of 4 MiB, 2 (2 x 500 + 3/4 x 4194304 / 10) = 631145.6 ns: the iteration is the mm
# and the longer one.
HYBRID_DP_NS = 2 * (2 * 500 + 3 / 4 * WORLD_BYTES / 10)
GROW = "torch/3,torch/4"


def run(*args, cwd=None):
    return subprocess.run([CHORUS, *args], capture_output=True, text=True, timeout=300, cwd=cwd)


class WhatIf(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.sw8 = switch_yaml(cls.tmp.name, 8)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def sim(self, *extra):
        p = run("sim", "workload", "-w", os.path.join(DATA, "dp4"), "--topology", self.sw8, "--world", "8", "-i", "1",
                "--chunks", "1", "--scheduler", "baseline", "--json", *extra)
        self.assertEqual(p.returncode, 0, p.stderr)
        return json.loads(p.stdout)

    def test_world_8_runs_the_all_reduce_on_8_npus(self):
        j = self.sim()
        self.assertEqual(j["npus"], 8)
        self.assertEqual(j["compute_ns"], MM_NS)
        expected = all_reduce_ns(WORLD_BYTES, 8)  # 737003.2 ns
        self.assertAlmostEqual(j["exposed_comm_ns"], expected, delta=1e-6 * expected)
        self.assertAlmostEqual(j["iteration_time_ns"], MM_NS + expected, delta=1e-6 * expected)

    def test_compute_scale_2_halves_compute_exactly(self):
        one, two = self.sim(), self.sim("--compute-scale", "2")
        self.assertEqual(two["compute_ns"], MM_NS / 2)
        self.assertAlmostEqual(two["exposed_comm_ns"], one["exposed_comm_ns"], delta=1e-9 * one["exposed_comm_ns"])

    def test_export_chakra_takes_world_and_compute_scale(self):
        # The exported traces, read back by chorus, give the same run as `sim workload` on the
        # capture itself: 8 traces for --world 8, the compute halved by --compute-scale 2.
        out = os.path.join(self.tmp.name, "et")
        p = run("export", "--chakra", "-w", os.path.join(DATA, "dp4"), "--topology", self.sw8, "--world", "8",
                "--compute-scale", "2", "--out", out, "--name", "dp8")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(sorted(f for f in os.listdir(out) if f.endswith(".et")), [f"dp8.{r}.et" for r in range(8)])
        q = run("sim", "workload", "-w", os.path.join(out, "dp8.0.et"), "--topology", self.sw8, "-i", "1",
                "--chunks", "1", "--scheduler", "baseline", "--json")
        self.assertEqual(q.returncode, 0, q.stderr)
        j = json.loads(q.stdout)
        self.assertEqual(j["compute_ns"], MM_NS / 2)
        expected = all_reduce_ns(WORLD_BYTES, 8)
        self.assertAlmostEqual(j["exposed_comm_ns"], expected, delta=1e-6 * expected)

    def test_whatif_table_csv_json_and_figure(self):
        out = os.path.join(self.tmp.name, "whatif")
        fabric = os.path.join(self.tmp.name, "expander16.yaml")
        p = run("topo", "fabric", "--fabric", "expander", "--servers", "16", "--degree", "4", "--save", fabric)
        self.assertEqual(p.returncode, 0, p.stderr)
        p = run("sim", "whatif", "-w", os.path.join(DATA, "dp4"), "--topology",
                f"host,3D-SW_SW_SW_homo,{self.sw8},{fabric}", "--scheduler", "baseline,themis-scf",
                "--compute-scale", "2", "--out", out)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(os.path.join(out, "whatif.csv")) as f:
            rows = list(csv.DictReader(f))
        # 3 dimension networks x 2 schedulers, the fabric once
        self.assertEqual([(r["network"], r["scheduler"]) for r in rows][-1], (fabric, "flow"))
        self.assertEqual(len(rows), 3 * 2 + 1)
        self.assertEqual([int(r["world"]) for r in rows], [4, 4, 1024, 1024, 8, 8, 16])  # each network filled
        for r in rows:
            it, c, e = (float(r[k]) for k in ("iteration_time_ns", "compute_ns", "exposed_comm_ns"))
            self.assertAlmostEqual(c + e, it, delta=0.002)  # 3 decimals per column
            self.assertEqual(c, MM_NS / 2)
        sw8 = [r for r in rows if r["network"] == self.sw8 and r["scheduler"] == "baseline"][0]
        # 64 chunks: the same bytes as one chunk, their steps' latency partly hidden behind the other
        # chunks' transfers: between the bandwidth term alone and the one-chunk time.
        bandwidth_only = 2 * 7 / 8 * WORLD_BYTES / 10
        self.assertGreaterEqual(float(sw8["exposed_comm_ns"]), bandwidth_only)
        self.assertLessEqual(float(sw8["exposed_comm_ns"]), all_reduce_ns(WORLD_BYTES, 8))
        with open(os.path.join(out, "whatif.json")) as f:
            j = json.load(f)
        self.assertEqual(j["compute_scale"], 2)
        self.assertEqual(len(j["rows"]), 7)
        self.assertTrue(os.path.getsize(os.path.join(out, "whatif.svg")) > 1000)
        self.assertIn("exposed comm", p.stdout)

    def test_sweep_varies_world_and_compute_scale(self):
        d = os.path.join(self.tmp.name, "sweep")
        os.makedirs(d)
        with open(os.path.join(d, "spec.yaml"), "w") as f:
            f.write(f"command: sim workload\nfixed:\n  workload: {os.path.join(DATA, 'dp4')}\n  iterations: 1\n"
                    f"  chunks: 1\n  scheduler: baseline\npoints:\n"
                    f"  - {{topology: {self.sw8}, world: 8, compute-scale: 1}}\n"
                    f"  - {{topology: {switch_yaml(d, 16)}, world: 16, compute-scale: 4}}\n")
        p = run("sweep", "spec.yaml", "-j", "1", cwd=d)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(os.path.join(d, "spec.csv")) as f:
            rows = list(csv.DictReader(f))
        self.assertEqual([(r["npus"], float(r["compute_ns"])) for r in rows], [("8", MM_NS), ("16", MM_NS / 4)])
        for r, p in zip(rows, (8, 16)):
            expected = all_reduce_ns(WORLD_BYTES, p)
            self.assertAlmostEqual(float(r["exposed_comm_ns"]), expected, delta=1e-6 * expected)

    def test_grow_groups_runs_the_grown_all_reduce_on_its_new_size(self):
        net = two_by_yaml(self.tmp.name, 4)
        hybrid = os.path.join(DATA, "hybrid4")
        p = run("sim", "workload", "-w", hybrid, "--topology", net, "--world", "8", "--grow-groups", GROW, "-i", "1",
                "--chunks", "1", "--scheduler", "baseline", "--json")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("growing torch/3, torch/4", p.stderr)
        j = json.loads(p.stdout)
        self.assertEqual(j["compute_ns"], MM_NS)
        self.assertAlmostEqual(j["exposed_comm_ns"], HYBRID_DP_NS, delta=1e-6 * HYBRID_DP_NS)
        # export --chakra takes it too: the traces, read back, run the same.
        out = os.path.join(self.tmp.name, "et_hybrid")
        p = run("export", "--chakra", "-w", hybrid, "--topology", net, "--world", "8", "--grow-groups", GROW,
                "--out", out, "--name", "hy8")
        self.assertEqual(p.returncode, 0, p.stderr)
        q = run("sim", "workload", "-w", os.path.join(out, "hy8.0.et"), "--topology", net, "-i", "1", "--chunks", "1",
                "--scheduler", "baseline", "--json")
        self.assertEqual(q.returncode, 0, q.stderr)
        self.assertAlmostEqual(json.loads(q.stdout)["exposed_comm_ns"], HYBRID_DP_NS, delta=1e-6 * HYBRID_DP_NS)
        # sim whatif: one row, the same split (64 chunks: at most the one-chunk time, at least the
        # bandwidth term alone).
        p = run("sim", "whatif", "-w", hybrid, "--topology", net, "--world", "8", "--grow-groups", GROW, "--scheduler",
                "baseline", "--out", os.path.join(self.tmp.name, "whatif_hybrid"))
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("growing torch/3,torch/4", p.stdout)
        with open(os.path.join(self.tmp.name, "whatif_hybrid", "whatif.csv")) as f:
            rows = list(csv.DictReader(f))
        self.assertEqual(len(rows), 1)
        self.assertLessEqual(float(rows[0]["exposed_comm_ns"]), HYBRID_DP_NS * (1 + 1e-6))
        self.assertGreaterEqual(float(rows[0]["exposed_comm_ns"]), 2 * 3 / 4 * WORLD_BYTES / 10)
        # a sweep: grow-groups is a parameter (the data-parallel groups of 8 at 16 ranks on 2 x 8:
        # 2 (3 x 500 + 7/8 x 4194304 / 10) ns)
        d = os.path.join(self.tmp.name, "sweep_grow")
        os.makedirs(d)
        with open(os.path.join(d, "spec.yaml"), "w") as f:
            f.write(f"command: sim workload\nfixed:\n  workload: {hybrid}\n  iterations: 1\n  chunks: 1\n"
                    f"  scheduler: baseline\n  grow-groups: '{GROW}'\npoints:\n"
                    f"  - {{topology: {net}, world: 8}}\n  - {{topology: {two_by_yaml(d, 8)}, world: 16}}\n")
        p = run("sweep", "spec.yaml", "-j", "1", cwd=d)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(os.path.join(d, "spec.csv")) as f:
            rows = list(csv.DictReader(f))
        for r, expected in zip(rows, (HYBRID_DP_NS, 2 * (3 * 500 + 7 / 8 * WORLD_BYTES / 10))):
            self.assertAlmostEqual(float(r["exposed_comm_ns"]), expected, delta=1e-6 * expected)

    def test_bad_grow_groups_exit_2_naming_the_flag_and_the_group(self):
        net, hybrid = two_by_yaml(self.tmp.name, 4), os.path.join(DATA, "hybrid4")
        base = ["sim", "workload", "-w", hybrid, "--topology", net]
        self.refused(base + ["--world", "8", "--grow-groups", "torch/9"], "--grow-groups: group 'torch/9' is not among",
                     "torch/3 [0,2]")
        self.refused(base + ["--grow-groups", GROW], "--grow-groups: applies with --world")
        self.refused(base + ["--world", "8", "--grow-groups", "torch/3"], "comm.1.jsonl: rank 1: collective 2",
                     "group [1,3] cannot be scaled", "torch/4, does not grow (--grow-groups)")
        self.refused(["sim", "whatif", "-w", hybrid, "--topology", net, "--world", "8", "--grow-groups", "shm"],
                     "--grow-groups: group 'shm' is not among")
        self.refused(["export", "--chakra", "-w", hybrid, "--topology", net, "--world", "8", "--grow-groups", "x",
                      "--out", os.path.join(self.tmp.name, "et_bad")], "--grow-groups: group 'x'")

    def test_point_to_point_pipeline_and_its_copies(self):
        # p2p2: rank 0's mm (1 ms), 1 MiB to rank 1, rank 1's mm, 256 KiB back; on a switch of 10 GB/s
        # and 500 ns a step, a transfer is 500 ns + its bytes / 10: the step is
        # 1e6 + (500 + 104857.6) + 1e6 + (500 + 26214.4) ns from either rank. At 4 ranks on 2 x 2 both
        # copies' pairs are dimension 0, of 20 GB/s and 300 ns: 2e6 + (300 + 52428.8) + (300 + 13107.2).
        sw2 = switch_yaml(self.tmp.name, 2)
        on_sw2 = 2e6 + 500 + WORLD_BYTES / 4 / 10 + 500 + WORLD_BYTES / 16 / 10
        on_2x2 = 2e6 + 300 + WORLD_BYTES / 4 / 20 + 300 + WORLD_BYTES / 16 / 20
        for args, step in (([sw2], on_sw2), ([sw2, "--rank", "1"], on_sw2),
                           ([two_by_yaml(self.tmp.name, 2), "--world", "4"], on_2x2)):
            p = run("sim", "workload", "-w", os.path.join(DATA, "p2p2"), "--topology", *args, "-i", "1", "--chunks",
                    "1", "--scheduler", "baseline", "--json")
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertIn("2 send(s) / recv(s), each matched", p.stderr)
            self.assertAlmostEqual(json.loads(p.stdout)["iteration_time_ns"], step, delta=1e-6 * step)
        self.refused(["sim", "workload", "-w", os.path.join(DATA, "p2p2_unmatched"), "--topology", sw2],
                     "comm.0.jsonl: rank 0: recv 2 (line 3): its message 1 from rank 1 (262144 bytes) is never sent")
        self.refused(["sim", "workload", "-w", os.path.join(DATA, "p2p2_sizes"), "--topology", sw2],
                     "rank 0: send 1 (line 2): its message 1 to rank 1 is 1048576 bytes, but rank 1's recv 1")
        # export --chakra at 4 ranks: every rank's own trace (COMM_SEND / COMM_RECV naming its peer in its
        # copy, which chorus's reader checks against the file's rank), each read back running the step.
        out, net = os.path.join(self.tmp.name, "et_p2p"), two_by_yaml(self.tmp.name, 2)
        p = run("export", "--chakra", "-w", os.path.join(DATA, "p2p2"), "--topology", net, "--world", "4", "--out", out)
        self.assertEqual(p.returncode, 0, p.stderr)
        for r in range(4):
            p = run("sim", "workload", "-w", os.path.join(out, f"p2p2.{r}.et"), "--topology", net, "-i", "1",
                    "--chunks", "1", "--scheduler", "baseline", "--json")
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertAlmostEqual(json.loads(p.stdout)["iteration_time_ns"], on_2x2, delta=1e-6 * on_2x2)

    def refused(self, args, *needles):
        p = run(*args)
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        for n in needles:
            self.assertIn(n, p.stderr)

    def test_bad_input_exits_2_naming_the_field(self):
        dp4, ring6 = os.path.join(DATA, "dp4"), os.path.join(self.tmp.name, "ring6.yaml")
        with open(ring6, "w") as f:
            f.write("name: ring6\ndims:\n  - {kind: ring, size: 6, link_bandwidth_GBps: 10, links_per_npu: 2, "
                    "latency_ns: 500}\n")
        self.refused(["sim", "workload", "-w", dp4, "--topology", ring6, "--world", "6"],
                     "--world: must be a multiple of the capture's 4 ranks")
        self.refused(["sim", "workload", "-w", dp4, "--topology", "3D-SW_SW_SW_homo", "--world", "512"],
                     "--world: the capture scaled to 512 ranks needs a network of 512 NPUs")
        self.refused(["sim", "workload", "-w", dp4, "--topology", self.sw8, "--world", "0"], "--world")
        self.refused(["sim", "workload", "-w", "resnet152", "--world", "1024"], "--world: applies to chorus captures")
        for bad in ("0", "-2"):
            self.refused(["sim", "workload", "-w", dp4, "--topology", self.sw8, "--compute-scale", bad],
                         "--compute-scale: must be a positive number")
            self.refused(["sim", "whatif", "-w", dp4, "--topology", self.sw8, "--compute-scale", bad],
                         "--compute-scale: must be a positive number")
        self.refused(["sim", "workload", "-w", os.path.join(DATA, "irregular4"), "--topology", self.sw8, "--world",
                      "8"], "comm.3.jsonl: rank 3: collective 2", "group [3] cannot be scaled to a world of 8")
        # A regular partition tiles, but a pair is no whole dimension of one switch of 8: named.
        self.refused(["sim", "workload", "-w", os.path.join(DATA, "pairs4"), "--topology", self.sw8, "--world",
                      "8"], "collective 2", "group [0,1] is not the NPUs of some dimensions")
        self.refused(["sim", "whatif", "-w", dp4, "--topology", "3D-SW_SW_SW_homo", "--world", "8"],
                     "--world: the capture scaled to 8 ranks needs a network of 8 NPUs")
        self.refused(["sim", "whatif", "-w", dp4, "--topology", os.path.join(self.tmp.name, "ring6.yaml")],
                     "6 NPUs, not a multiple of the capture's 4 ranks")
        self.refused(["sim", "whatif", "-w", "resnet152"], "--workload: 'resnet152' is no chorus capture")


if __name__ == "__main__":
    unittest.main()
