#!/usr/bin/env python3
"""End-to-end tests of the chorus CLI: exit codes, JSON shape, bad input, outputs on disk."""
import json
import os
import re
import subprocess
import sys
import tempfile
import unittest

CHORUS = sys.argv.pop(1) if len(sys.argv) > 1 else "chorus"


def chorus(*args, timeout=120):
    return subprocess.run([CHORUS, *args], capture_output=True, text=True, timeout=timeout)


class Help(unittest.TestCase):
    def test_every_command_has_help(self):
        for cmd in ([], ["sim"], ["sim", "collective"], ["sim", "schedule"], ["sim", "topologies"], ["reproduce"], ["reproduce", "themis"]):
            r = chorus(*cmd, "--help")
            self.assertEqual(r.returncode, 0, (cmd, r.stderr))
            self.assertIn("Usage", r.stdout)

    def test_version(self):
        # The version is CMake's project(VERSION ...), read here from the source tree.
        root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        with open(os.path.join(root, "CMakeLists.txt")) as f:
            m = re.search(r"project\(chorus VERSION ([0-9.]+)", f.read())
        self.assertIsNotNone(m)
        r = chorus("--version")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout, f"chorus {m.group(1)}\n")

    def test_no_command_is_an_error(self):
        self.assertEqual(chorus().returncode, 2)


class SimCollective(unittest.TestCase):
    def run_json(self, *args):
        r = chorus("sim", "collective", "--json", *args)
        self.assertEqual(r.returncode, 0, r.stderr)
        return json.loads(r.stdout)

    def test_json_fields(self):
        j = self.run_json("--topology", "3D-SW_SW_SW_homo", "--op", "allreduce", "--size", "1GiB",
                          "--chunks", "64", "--scheduler", "themis-scf")
        for key in ("time_ns", "ideal_time_ns", "avg_bw_utilization", "dims"):
            self.assertIn(key, j)
        self.assertEqual(len(j["dims"]), 3)
        for d in j["dims"]:
            for key in ("bytes_per_npu", "busy_ns", "utilization"):
                self.assertIn(key, d)
            self.assertGreater(d["utilization"], 0)
            self.assertLessEqual(d["utilization"], 1.0 + 1e-9)
        self.assertGreater(j["time_ns"], j["ideal_time_ns"])
        self.assertGreater(j["avg_bw_utilization"], 0.9)
        self.assertNotIn("chunks", j)

    def test_schedules(self):
        j = self.run_json("--topology", "4D-Ring_SW_SW_SW", "--size", "100MB", "--chunks", "16", "--schedules")
        self.assertEqual(len(j["chunks"]), 16)
        for c in j["chunks"]:
            self.assertEqual(sorted(c["rs_order"]), [0, 1, 2, 3])
            self.assertEqual(c["ag_order"], list(reversed(c["rs_order"])))
        self.assertEqual(len(j["dim_order"]), 4)

    def test_baseline_slower_than_themis(self):
        b = self.run_json("--scheduler", "baseline")
        t = self.run_json("--scheduler", "themis-scf")
        self.assertGreater(b["time_ns"], t["time_ns"])

    def test_yaml_file_and_trace(self):
        with tempfile.TemporaryDirectory() as d:
            net = os.path.join(d, "net.yaml")
            with open(net, "w") as f:
                f.write("name: mine\ndims:\n"
                        "  - {kind: switch, size: 16, link_bandwidth_gbps: 200, links_per_npu: 4, latency_ns: 700}\n"
                        "  - {kind: ring, size: 8, link_bandwidth_gbps: 200, links_per_npu: 2, latency_ns: 700}\n")
            trace = os.path.join(d, "trace.json")
            j = self.run_json("--topology", net, "--size", "64MiB", "--chunks", "8", "--trace", trace)
            self.assertEqual(j["topology"], "mine")
            with open(trace) as f:
                t = json.load(f)
            xs = [e for e in t["traceEvents"] if e["ph"] == "X"]
            self.assertEqual(len(xs), 2 * 8 * 4)  # dim track + chunk track per stage

    def test_save_and_load_schedule(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "s.json")
            a = self.run_json("--topology", "3D-FC_Ring_SW", "--size", "200MB", "--chunks", "16",
                              "--save-schedule", path)
            with open(path) as f:
                sched = json.load(f)
            self.assertEqual(sched["format"], "chorus-schedule")
            r = chorus("sim", "schedule", path, "--topology", "3D-FC_Ring_SW", "--enforce-order", "--json")
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(json.loads(r.stdout)["time_ns"], a["time_ns"])
            # A schedule for 3 dimensions does not fit a 4-dimensional network.
            r = chorus("sim", "schedule", path, "--topology", "4D-Ring_FC_Ring_SW")
            self.assertEqual(r.returncode, 2)
            self.assertIn("rs_order", r.stderr)
            # A contradictory per-dimension order is reported as a deadlock, not a hang.
            order = sched["dim_order"][0]
            ag = next(i for i, op in enumerate(order) if op["phase"] == "AG")
            order.insert(0, order.pop(ag))
            with open(path, "w") as f:
                json.dump(sched, f)
            r = chorus("sim", "schedule", path, "--topology", "3D-FC_Ring_SW", "--enforce-order", timeout=30)
            self.assertEqual(r.returncode, 2)
            self.assertIn("deadlocks", r.stderr)

    def test_ideal_is_a_bound_not_a_saved_schedule(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "ideal.json")
            r = chorus("sim", "collective", "--topology", "3D-FC_Ring_SW", "--size", "200MB", "--chunks", "16",
                       "--scheduler", "ideal", "--save-schedule", path)
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertIn("--save-schedule", r.stderr)
            self.assertIn("bound", r.stderr)
            self.assertFalse(os.path.exists(path), "nothing may be written for the ideal")
            # A baseline schedule relabelled 'ideal' by hand is refused on loading too.
            self.run_json("--topology", "3D-FC_Ring_SW", "--size", "200MB", "--chunks", "16",
                          "--scheduler", "baseline", "--save-schedule", path)
            with open(path) as f:
                sched = json.load(f)
            sched["scheduler"] = "ideal"
            with open(path, "w") as f:
                json.dump(sched, f)
            r = chorus("sim", "schedule", path, "--topology", "3D-FC_Ring_SW")
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertIn("ideal.json", r.stderr)
            self.assertIn("'ideal' is a bound", r.stderr)

    def test_bad_input_exit_2(self):
        cases = [
            (["--topology", "nope"], "nope"),
            (["--op", "allshuffle"], "allshuffle"),
            (["--size", "12parsecs"], "--size"),
            (["--size", "0"], "--size"),
            (["--chunks", "0"], "--chunks"),
            (["--scheduler", "themis-lifo"], "themis-lifo"),
            (["--bogus"], "bogus"),
        ]
        for args, needle in cases:
            r = chorus("sim", "collective", *args)
            self.assertEqual(r.returncode, 2, (args, r.stdout, r.stderr))
            self.assertIn(needle, r.stderr, args)

    def test_bad_yaml_names_file_and_line(self):
        with tempfile.TemporaryDirectory() as d:
            net = os.path.join(d, "bad.yaml")
            with open(net, "w") as f:
                f.write("dims:\n  - {kind: switch, size: 16, link_bandwith_gbps: 200, links_per_npu: 4, latency_ns: 7}\n")
            r = chorus("sim", "collective", "--topology", net)
            self.assertEqual(r.returncode, 2)
            self.assertIn("bad.yaml:2", r.stderr)
            self.assertIn("link_bandwith_gbps", r.stderr)


class Reproduce(unittest.TestCase):
    def test_reproduce_themis_writes_csv_and_plots(self):
        with tempfile.TemporaryDirectory() as d:
            r = chorus("reproduce", "themis", "--out", d)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("Headline", r.stdout)
            with open(os.path.join(d, "microbench.csv")) as f:
                header = f.readline().strip().split(",")
                rows = f.readlines()
            for col in ("topology", "size_bytes", "scheduler", "chunks", "time_ns", "avg_bw_utilization"):
                self.assertIn(col, header)
            self.assertEqual(len(rows), 6 * 4 * 4 + 2 * 8 * 4)
            for fig in ("fig8_time_1000MB.svg", "fig9_activity.svg", "fig10_chunks.svg", "fig11_utilization.svg"):
                with open(os.path.join(d, fig)) as f:
                    self.assertTrue(f.read().startswith("<svg"), fig)

    def test_reproduce_is_deterministic(self):
        with tempfile.TemporaryDirectory() as a, tempfile.TemporaryDirectory() as b:
            self.assertEqual(chorus("reproduce", "themis", "-q", "--out", a).returncode, 0)
            self.assertEqual(chorus("reproduce", "themis", "-q", "--out", b).returncode, 0)
            for name in ("microbench.csv", "fig10_chunks.svg"):
                with open(os.path.join(a, name)) as fa, open(os.path.join(b, name)) as fb:
                    self.assertEqual(fa.read(), fb.read(), name)


if __name__ == "__main__":
    unittest.main(verbosity=2)
