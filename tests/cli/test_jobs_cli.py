#!/usr/bin/env python3
"""chorus sim jobs: jobs sharing a fabric, the output files, bad input (exit 2 naming the job and field)."""
import csv
import json
import os
import subprocess
import sys
import tempfile
import unittest

CHORUS = sys.argv.pop(1) if len(sys.argv) > 1 else "chorus"

# Servers 0, 1 under switch 4, servers 2, 3 under switch 5; 4 <-> 5 is the only way between the halves.
DUMBBELL = """fabric:
  name: dumbbell
  servers: 4
  switches: 2
  link_gbps: 100
  links: [[0, 4], [4, 0], [1, 4], [4, 1], [2, 5], [5, 2], [3, 5], [5, 3], [4, 5], [5, 4]]
"""


def read(path):
    with open(path) as f:
        return f.read()


def chorus(*args):
    return subprocess.run([CHORUS, "sim", "jobs", *args], capture_output=True, text=True, timeout=300)


class SimJobs(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name
        with open(os.path.join(self.dir, "dumbbell.yaml"), "w") as f:
            f.write(DUMBBELL)

    def tearDown(self):
        self.tmp.cleanup()

    def jobs_file(self, text, name="jobs.yaml"):
        path = os.path.join(self.dir, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def test_disjoint_jobs_run_as_alone_and_files_are_written(self):
        # a's ring stays under switch 4, b's under switch 5: no link in common.
        path = self.jobs_file("fabric: dumbbell.yaml\njobs:\n"
                              "  - {name: a, workload: resnet152, placement: [0, 1], iterations: 1}\n"
                              "  - {name: b, workload: gnmt, placement: [2, 3], iterations: 1, start_ms: 3}\n")
        out = os.path.join(self.dir, "out")
        r = chorus(path, "--out", out, "--plot")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(os.path.isfile(os.path.join(out, "jobs.svg")))
        self.assertIn("2 jobs on fabric dumbbell", r.stdout)
        j = json.loads(read(os.path.join(out, "jobs.json")))
        self.assertEqual([job["name"] for job in j["jobs"]], ["a", "b"])
        for job in j["jobs"]:
            self.assertEqual(job["slowdown"], 1.0)
            self.assertEqual(job["iteration_time_ns"], job["alone_iteration_time_ns"])
        self.assertEqual(j["jobs"][1]["start_ns"], 3e6)
        self.assertEqual(j["jobs"][0]["servers"], [0, 1])
        rows = list(csv.DictReader(read(os.path.join(out, "jobs.csv")).splitlines()))
        self.assertEqual([row["job.name"] for row in rows], ["a", "b"])
        links = list(csv.DictReader(read(os.path.join(out, "links.csv")).splitlines()))
        # Only server <-> switch links carried traffic, never 4 <-> 5 (links 8 and 9).
        self.assertEqual(sorted(int(row["link.link"]) for row in links), list(range(8)))
        # Utilization over time (1 ms windows by default): the same links, windows that add up to each link's bytes,
        # each at most the link's capacity.
        series = list(csv.DictReader(read(os.path.join(out, "links_over_time.csv")).splitlines()))
        self.assertEqual(sorted({int(row["link"]) for row in series}), list(range(8)))
        for row in links:
            mine = [w for w in series if int(w["link"]) == int(row["link.link"])]
            self.assertAlmostEqual(sum(float(w["bytes"]) for w in mine), float(row["link.bytes"]), delta=1e-6 * float(row["link.bytes"]))
            for w in mine:
                self.assertAlmostEqual(float(w["window_end_ns"]) - float(w["window_start_ns"]), 1e6)
                self.assertLessEqual(float(w["utilization"]), 1 + 1e-9)
        r = chorus(path, "--out", out, "--link-window-ms", "0")
        self.assertEqual(r.returncode, 2)
        self.assertIn("--link-window-ms", r.stderr)

    def test_a_shared_bottleneck_slows_both_jobs(self):
        # a on 0 and 2, b on 1 and 3: both rings cross 4 <-> 5, and start together.
        path = self.jobs_file("fabric: dumbbell.yaml\njobs:\n"
                              "  - {name: a, workload: resnet152, placement: [0, 2], iterations: 1}\n"
                              "  - {name: b, workload: resnet152, placement: [1, 3], iterations: 1}\n")
        r = chorus(path, "--json")
        self.assertEqual(r.returncode, 0, r.stderr)
        j = json.loads(r.stdout)
        for job in j["jobs"]:
            # Two jobs on a link leave each at least half of it: the job is slower, by at most 2x.
            self.assertGreater(job["slowdown"], 1.0)
            self.assertLessEqual(job["slowdown"], 2.0)
        self.assertEqual(r.stdout, chorus(path, "--json").stdout)  # deterministic

    def test_a_degraded_link_slows_the_job_that_crosses_it(self):
        # a crosses 4 <-> 5, b stays under switch 5: the switches' link at 10 % slows a, not b.
        jobs = ("jobs:\n  - {name: a, workload: resnet152, placement: [0, 2], iterations: 1}\n"
                "  - {name: b, workload: resnet152, placement: [3], iterations: 1}\n")
        healthy = json.loads(chorus(self.jobs_file("fabric: dumbbell.yaml\n" + jobs), "--json").stdout)
        r = chorus(self.jobs_file("fabric: dumbbell.yaml\nlinks:\n  - {from: 4, to: 5, bandwidth_fraction: 0.1}\n"
                                  "  - {from: 5, to: 4, bandwidth_fraction: 0.1}\n" + jobs), "--json")
        self.assertEqual(r.returncode, 0, r.stderr)
        slow = json.loads(r.stdout)
        self.assertGreater(slow["jobs"][0]["iteration_time_ns"], healthy["jobs"][0]["iteration_time_ns"])
        self.assertEqual(slow["jobs"][1]["iteration_time_ns"], healthy["jobs"][1]["iteration_time_ns"])
        self.assertEqual(slow["jobs"][0]["slowdown"], 1.0)  # alone on the same (degraded) fabric

    def test_a_themis_preset_runs_on_its_graph(self):
        # 4D-Ring_SW_SW_SW (4 x 4 x 8 x 8) as a graph: 1,024 servers; switches 1024/4 + 1024/8 + 1024/8 = 512; links: the
        # rings of 4, 2 per NPU (to the next, from the next) = 2,048, and 2 per NPU per switch dimension = 6,144.
        # Jobs on NPUs 0-3 and 4-7 each fill one ring of dimension 0: they share no link and run as alone.
        path = self.jobs_file("fabric: 4D-Ring_SW_SW_SW\njobs:\n"
                              "  - {name: a, workload: resnet152, placement: [0, 1, 2, 3], iterations: 1}\n"
                              "  - {name: b, workload: resnet152, placement: [4, 5, 6, 7], iterations: 1}\n")
        r = chorus(path, "--json")
        self.assertEqual(r.returncode, 0, r.stderr)
        j = json.loads(r.stdout)
        self.assertEqual((j["fabric"]["servers"], j["fabric"]["switches"], j["fabric"]["links"]), (1024, 512, 8192))
        for job in j["jobs"]:
            self.assertEqual(job["slowdown"], 1.0)
        # Only ring links (between NPUs, both ends below 8) carried traffic.
        self.assertTrue(all(link["from"] < 8 and link["to"] < 8 for link in j["links"]), j["links"])

    def test_shift_search_never_loses_to_no_shift(self):
        path = self.jobs_file("fabric: dumbbell.yaml\njobs:\n"
                              "  - {name: a, workload: resnet152, placement: [0, 2], iterations: 2}\n"
                              "  - {name: b, workload: resnet152, placement: [1, 3], iterations: 2}\n")
        r = chorus(path, "--json", "--search-shifts", "--shift-steps", "4", "--shift-rounds", "1")
        self.assertEqual(r.returncode, 0, r.stderr)
        s = json.loads(r.stdout)["shift_search"]
        self.assertEqual(s["shifts_ns"][0], 0)
        self.assertEqual(s["evaluations"], 4)  # unshifted, then 3 more shifts of b
        self.assertLessEqual(s["total_slowdown"], s["unshifted_total_slowdown"])
        self.assertAlmostEqual(s["total_slowdown"], sum(s["slowdowns"]))
        r = chorus(path, "--search-shifts", "--shift-steps", "0")
        self.assertEqual(r.returncode, 2)
        self.assertIn("--shift-steps", r.stderr)

    def test_policies(self):
        path = self.jobs_file("fabric: dumbbell.yaml\njobs:\n"
                              "  - {name: a, workload: resnet152, npus: 2, iterations: 1}\n"
                              "  - {name: b, workload: resnet152, npus: 2, placement: random, seed: 5, iterations: 1}\n")
        r = chorus(path, "--json")
        self.assertEqual(r.returncode, 0, r.stderr)
        j = json.loads(r.stdout)
        self.assertEqual(j["jobs"][0]["servers"], [0, 1])
        self.assertEqual(j["jobs"][1]["servers"], [2, 3])
        self.assertEqual(j["jobs"][1]["placement"], "random")

    def test_bad_input_names_job_and_field(self):
        cases = [
            ("  - {name: a, workload: gnmt, placement: [0, 1]}\n  - {name: b, workload: gnmt, placement: [1, 2]}\n",
             "job 'b': placement[0]: server 1 is also job 'a''s"),
            ("  - {name: a, workload: gnmt, placement: [0, 7]}\n", "job 'a': placement[1]: 7 is not a server"),
            ("  - {name: a, workload: gnmt, npus: 8}\n", "job 'a': 8 NPUs but fabric 'dumbbell' has 4 servers"),
            ("  - {name: a, workload: gnmt, npus: 2, strat_ms: 1}\n", "unknown key 'strat_ms' (did you mean 'start_ms'?)"),
            ("  - {name: a, workload: gnmt, npus: 2, start_ms: -3}\n", "job 'a': field 'jobs[0].start_ms' must be a finite number >= 0"),
            ("  - {name: a, workload: gnmt, npus: x}\n", "job 'a': field 'jobs[0].npus' must be an integer"),
            ("  - {name: a, workload: gnmt, npus: 2, iterations: 0}\n", "field 'jobs[0].iterations' must be in 1..1000"),
            ("  - {name: a, workload: resnet153, npus: 2}\n", "job 'a': workload: 'resnet153' is neither"),
            ("  - {name: a, workload: gnmt, npus: 2, placement: nearest}\n", "unknown policy 'nearest'"),
        ]
        for jobs, message in cases:
            path = self.jobs_file("fabric: dumbbell.yaml\njobs:\n" + jobs)
            r = chorus(path)
            self.assertEqual(r.returncode, 2, (jobs, r.stderr))
            self.assertIn(message, r.stderr, jobs)
            self.assertIn("jobs.yaml:", r.stderr, jobs)
            self.assertNotIn("internal", r.stderr, jobs)
        # Both directions between the switches down: the halves cannot reach each other.
        r = chorus(self.jobs_file("fabric: dumbbell.yaml\nlinks:\n  - {from: 4, to: 5, down: true}\n  - {from: 5, to: 4, down: true}\n"
                                  "jobs:\n  - {name: a, workload: gnmt, npus: 2}\n"))
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("jobs.yaml:3: links[0]: with the links down (4 -> 5, 5 -> 4) server 0 cannot reach server 2", r.stderr)
        r = chorus(self.jobs_file("jobs:\n  - {name: a, workload: gnmt, npus: 2}\n"))
        self.assertEqual(r.returncode, 2)
        self.assertIn("no fabric", r.stderr)
        r = chorus(self.jobs_file("fabric: dumbbell.yaml\njobs:\n  - {name: a, workload: gnmt, npus: 2}\n"), "--plot")
        self.assertEqual(r.returncode, 2)
        self.assertIn("--plot: needs --out", r.stderr)
        r = chorus(os.path.join(self.dir, "missing.yaml"))
        self.assertEqual(r.returncode, 2)


class ReproduceSharedFabric(unittest.TestCase):
    def test_study(self):
        with tempfile.TemporaryDirectory() as d:
            r = subprocess.run([CHORUS, "reproduce", "shared-fabric", "--out", d, "-i", "1", "--shift-steps", "2", "-q"],
                               capture_output=True, text=True, timeout=600)
            self.assertEqual(r.returncode, 0, r.stderr)
            j = json.loads(read(os.path.join(d, "shared_fabric.json")))
            self.assertEqual(len(read(os.path.join(d, "shared_fabric.csv")).splitlines()), 1 + len(j["rows"]))
            self.assertEqual(len(j["rows"]), 12)  # 3 pairs x 4 placements
            self.assertTrue(os.path.isfile(os.path.join(d, "shared_fabric.svg")))
            for row in j["rows"]:
                if row["placement"] == "contiguous":  # a rack each: nothing shared
                    self.assertEqual((row["slowdown_a"], row["slowdown_b"]), (1.0, 1.0))
                    self.assertEqual(row["shift_b_ns"], 0)  # no shift helps, none is kept
                if row["placement"] == "interleaved":  # both rings cross the racks' link
                    self.assertGreater(row["slowdown_a"], 1.0)
                self.assertLessEqual(row["shifted_slowdown_a"] + row["shifted_slowdown_b"],
                                     row["slowdown_a"] + row["slowdown_b"])


class SimCollectiveDegraded(unittest.TestCase):
    """chorus sim collective --degrade DIM:FRACTION [--plan-on nominal|actual]; reproduce themis-degraded."""

    NET = ("name: two-by-two\ndims:\n"
           "  - {kind: switch, size: 2, link_bandwidth_gbps: 8, links_per_npu: 1, latency_ns: 100}\n"
           "  - {kind: switch, size: 2, link_bandwidth_gbps: 8, links_per_npu: 1, latency_ns: 100}\n")

    def run_json(self, net, *args):
        r = subprocess.run([CHORUS, "sim", "collective", "--topology", net, "--op", "allreduce", "--json", *args],
                           capture_output=True, text=True, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        return json.loads(r.stdout)

    def test_half_bandwidth_doubles_the_dimensions_transfer(self):
        with tempfile.TemporaryDirectory() as d:
            net = os.path.join(d, "net.yaml")
            with open(net, "w") as f:
                f.write(self.NET)
            # 1 byte/ns, one chunk of 1000 bytes: RS 100 + 500, 100 + 250, AG 100 + 250, 100 + 500 = 1900 ns; dimension 1 at
            # half bandwidth doubles its two 250 ns transfers: 2400 ns.
            one = ("--size", "1000", "--chunks", "1", "--scheduler", "baseline")
            self.assertAlmostEqual(self.run_json(net, *one)["time_ns"], 1900)
            j = self.run_json(net, *one, "--degrade", "1:0.5")
            self.assertAlmostEqual(j["time_ns"], 2400)
            self.assertEqual(j["planned_on"], "actual")
            self.assertAlmostEqual(self.run_json(net, *one, "--degrade", "1:0.5", "--plan-on", "nominal")["time_ns"], 2400)

    def test_bad_degradations_exit_2_naming_the_field(self):
        for args, field in ((("--degrade", "7:0.5"), "--degrade"), (("--degrade", "1:2"), "--degrade"),
                            (("--degrade", "one"), "--degrade"), (("--plan-on", "nominal"), "--plan-on"),
                            (("--degrade", "1:0.5", "--plan-on", "stale"), "--plan-on")):
            r = subprocess.run([CHORUS, "sim", "collective", "--topology", "2D-SW_SW", *args], capture_output=True, text=True,
                               timeout=60)
            self.assertEqual(r.returncode, 2, (args, r.stderr))
            self.assertIn(field, r.stderr, args)

    def test_reproduce_themis_degraded(self):
        with tempfile.TemporaryDirectory() as d:
            r = subprocess.run([CHORUS, "reproduce", "themis-degraded", "--out", d, "--size", "100MB", "--fractions", "0.5", "-q"],
                               capture_output=True, text=True, timeout=300)
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(os.path.join(d, "themis_degraded.csv")) as f:
                rows = list(csv.DictReader(f))
            # One row per dimension of the six Table 2 topologies: 2 + 3 + 3 + 3 + 4 + 4.
            self.assertEqual(len(rows), 19)
            for row in rows:
                ideal = float(row["rows.ideal_ns"] if "rows.ideal_ns" in row else row["ideal_ns"])
                for key in ("baseline_ns", "stale_themis_ns", "replanned_themis_ns"):
                    value = float(row["rows." + key] if "rows." + key in row else row[key])
                    self.assertGreaterEqual(value, ideal * (1 - 1e-9), (row, key))


class SimWorkloadSpeeds(unittest.TestCase):
    """chorus sim workload --speeds: stragglers on a dimension network."""

    def run_json(self, net, *args):
        r = subprocess.run([CHORUS, "sim", "workload", "--workload", "resnet152", "--topology", net, "--iterations", "1",
                            "--json", *args], capture_output=True, text=True, timeout=300)
        self.assertEqual(r.returncode, 0, r.stderr)
        return json.loads(r.stdout)

    def test_one_slow_npu_slows_every_compute(self):
        with tempfile.TemporaryDirectory() as d:
            net = os.path.join(d, "sw8.yaml")
            with open(net, "w") as f:
                f.write("name: sw8\ndims:\n  - {kind: switch, size: 8, link_bandwidth_gbps: 200, links_per_npu: 1, latency_ns: 700}\n")
            nominal = self.run_json(net)
            slow = self.run_json(net, "--speeds", "1,1,1,0.25,1,1,1,1")
            # A data-parallel job waits for its slowest NPU at every all-reduce: 4x the compute.
            compute = nominal["forward_compute_ns"] + nominal["backward_compute_ns"]
            self.assertAlmostEqual(slow["forward_compute_ns"] + slow["backward_compute_ns"], 4 * compute, delta=1e-6 * compute)
            self.assertGreaterEqual(slow["iteration_time_ns"], 4 * compute)
            half = self.run_json(net, "--speeds", "uniform:0.5:0.5:3")
            self.assertAlmostEqual(half["forward_compute_ns"] + half["backward_compute_ns"], 2 * compute, delta=1e-6 * compute)
            for bad in ["1,1", "1,1,1,0,1,1,1,1", "uniform:1:0.5:3", "fast"]:
                r = subprocess.run([CHORUS, "sim", "workload", "--topology", net, "--speeds", bad], capture_output=True, text=True)
                self.assertEqual(r.returncode, 2, (bad, r.stderr))
                self.assertIn("--speeds", r.stderr, bad)


if __name__ == "__main__":
    unittest.main()
