#!/usr/bin/env python3
"""chorus plan: the Fig. 6 example and its baselines by hand, determinism, plan files, bad input (exit 2)."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

CHORUS = sys.argv.pop(1) if len(sys.argv) > 1 else "chorus"


def chorus(*args):
    return subprocess.run([CHORUS, "plan", *args], capture_output=True, text=True, timeout=120)


class HostLauncher(unittest.TestCase):
    def test_a_plan_for_chorus_launch_names_no_mpi_path(self):
        # Topology host's channels are the machine's backends; chorus launch starts no MPI job, so
        # by default (--launcher launch) the plan may use shm and gloo only; --launcher mpirun adds mpi.
        with tempfile.TemporaryDirectory() as d:
            paths = {}
            for launcher in ("launch", "mpirun"):
                out = os.path.join(d, f"{launcher}.json")
                r = chorus("--workload", "moe-tiny", "--topology", "host", "--ranks", "4", "--launcher", launcher,
                           "--evaluations", "2000", "--out", out)
                self.assertEqual(r.returncode, 0, r.stderr)
                plan = json.load(open(out))
                paths[launcher] = {op["option"]["path"] for op in plan["comm_ops"]} | \
                    {op["option"].get("alt_path") for op in plan["comm_ops"] if op["option"].get("alt_path")}
            self.assertNotIn("mpi", paths["launch"])
            self.assertTrue(paths["launch"] <= {"shm", "gloo"}, paths["launch"])
            self.assertTrue(paths["mpirun"] <= {"shm", "gloo", "mpi"}, paths["mpirun"])
        r = chorus("--topology", "host", "--launcher", "srun")
        self.assertEqual(r.returncode, 2)
        self.assertIn("--launcher", r.stderr)


class Fig6(unittest.TestCase):
    def test_greedy_eleven_syndicate_nine_and_a_half(self):
        r = chorus("--workload", "syndicate-fig6", "--topology", "syndicate-fig6", "--json")
        self.assertEqual(r.returncode, 0, r.stderr)
        j = json.loads(r.stdout)
        self.assertEqual(j["greedy_iteration_time_ns"], 11000000)
        self.assertEqual(j["iteration_time_ns"], 9500000)
        # Compute per iteration: X 1 + Y 1 + Z 2.5 = 4.5 ms of 9.5.
        self.assertAlmostEqual(j["compute_idle_fraction"], 1 - 4.5 / 9.5, places=9)
        self.assertGreater(j["evaluations"], 1)

    def test_baselines_by_hand(self):
        # FIFO on one stream: a 1-3.5, b 3.5-6, c 6-8.5, d 8.5-11. BS+ (LIFO): b 1-3.5, c 3.5-6,
        # a 6-8.5, Z 8.5-11, d 11-13.5. S-Sched: greedy plans, critical path: 11. S-Exec: FIFO
        # order but channel-disjoint overlap, a on PCIe+TCP beside b: 9.5.
        r = chorus("--all", "--json")
        self.assertEqual(r.returncode, 0, r.stderr)
        got = {m["method"]: m["iteration_time_ns"] for m in json.loads(r.stdout)["methods"]}
        self.assertEqual(got, {"greedy": 11e6, "syndicate": 9.5e6, "s-exec": 9.5e6, "s-sched": 11e6, "bs+": 13.5e6, "fifo": 11e6})
        for baseline, want in (("fifo", 11e6), ("bs+", 13.5e6)):
            j = json.loads(chorus("--baseline", baseline, "--json").stdout)
            self.assertEqual(j["baseline_iteration_time_ns"], want)

    def test_same_seed_same_plan_and_the_file_evaluates_to_its_prediction(self):
        with tempfile.TemporaryDirectory() as d:
            a, b = os.path.join(d, "a.json"), os.path.join(d, "b.json")
            for path in (a, b):
                r = chorus("--workload", "dlrm", "--topology", "syndicate-testbed", "--seed", "5", "--evaluations", "3000", "--out", path)
                self.assertEqual(r.returncode, 0, r.stderr)
            with open(a) as fa, open(b) as fb:
                self.assertEqual(fa.read(), fb.read())
            plan = json.load(open(a))
            self.assertEqual(plan["format"], "chorus-syndicate-plan")
            seqs = sorted(s["seq"] for op in plan["comm_ops"] for s in op["steps"])
            self.assertEqual(seqs, list(range(len(seqs))))
            r = chorus("--workload", "dlrm", "--topology", "syndicate-testbed", "--evaluate", a, "--json")
            self.assertEqual(r.returncode, 0, r.stderr)
            j = json.loads(r.stdout)
            self.assertEqual(j["iteration_time_ns"], plan["iteration_time_ns"])
            # A plan naming a path the topology does not have.
            plan["comm_ops"][0]["option"]["path"] = "warp-drive"
            bad = os.path.join(d, "bad.json")
            json.dump(plan, open(bad, "w"))
            r = chorus("--workload", "dlrm", "--topology", "syndicate-testbed", "--evaluate", bad)
            self.assertEqual(r.returncode, 2)
            self.assertIn("comm_ops[0].option", r.stderr)
            self.assertIn("warp-drive", r.stderr)
            # ... or as the path of its last segments.
            plan["comm_ops"][0]["option"].update({"path": "nvswitch+rdma", "alt_path": "hyperlane", "alt_segments": 1})
            json.dump(plan, open(bad, "w"))
            r = chorus("--workload", "dlrm", "--topology", "syndicate-testbed", "--evaluate", bad)
            self.assertEqual(r.returncode, 2)
            self.assertIn("alt_path", r.stderr)
            self.assertIn("hyperlane", r.stderr)


class SimulatorReadsThePlan(unittest.TestCase):
    def test_sim_workload_plan_and_trace(self):
        with tempfile.TemporaryDirectory() as d:
            plan, trace = os.path.join(d, "p.json"), os.path.join(d, "t.json")
            r = chorus("--out", plan, "--trace", trace)
            self.assertEqual(r.returncode, 0, r.stderr)
            r = subprocess.run([CHORUS, "sim", "workload", "--plan", plan, "--json"], capture_output=True, text=True, timeout=60)
            self.assertEqual(r.returncode, 0, r.stderr)
            j = json.loads(r.stdout)
            self.assertEqual(j["iteration_time_ns"], 9500000)
            self.assertEqual(j["compute_ns"], 4500000)
            # The timeline: per iteration X, Y, Z on the compute stream and a, b, c, d on channels:
            # a on pcie and tcp, b, c, d on nvlink and rdma (one slice per channel held).
            events = json.load(open(trace))["traceEvents"]
            slices = [e for e in events if e["ph"] == "X"]
            self.assertEqual(len([e for e in slices if e["pid"] == 1]), 6)
            self.assertEqual(len([e for e in slices if e["pid"] == 2]), 16)
            a_tracks = {e["tid"] for e in slices if e["pid"] == 2 and "a (all-to-all) it0" in e["name"]}
            self.assertEqual(len(a_tracks), 2)
            r = subprocess.run([CHORUS, "sim", "workload", "--plan", os.path.join(d, "missing.json")], capture_output=True, text=True)
            self.assertEqual(r.returncode, 2)
            self.assertIn("--plan", r.stderr)


class BadInput(unittest.TestCase):
    def check(self, args, *needles):
        r = chorus(*args)
        self.assertEqual(r.returncode, 2, (args, r.stdout, r.stderr))
        for n in needles:
            self.assertIn(n, r.stderr)

    def test_flags(self):
        self.check(["--baseline", "bss+"], "--baseline", "bs+")
        self.check(["--budget", "soon"], "--budget")
        self.check(["--evaluations", "0"], "--evaluations")
        self.check(["--beta", "-1"], "--beta")
        self.check(["--topology", "syndicate-testbd"], "--topology", "syndicate-testbed")
        self.check(["--workload", "no-such-model", "--topology", "syndicate-testbed"], "--workload")
        self.check(["--workload", "syndicate-fig6", "--topology", "syndicate-testbed"], "syndicate-fig6")
        self.check(["--topology", "host", "--ranks", "1", "--workload", "dlrm"], "--ranks")

    def test_topology_file_errors_name_file_and_line(self):
        with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
            f.write("dims: [{name: node, size: 4}]\nchannels:\n  - {name: a, dim: 0, bandwidth_gbps: -5}\npaths:\n  - {name: p, channels: [a]}\n")
        try:
            self.check(["--topology", f.name, "--workload", "dlrm"], f.name + ":3", "bandwidth_gbps")
        finally:
            os.unlink(f.name)


if __name__ == "__main__":
    unittest.main()
