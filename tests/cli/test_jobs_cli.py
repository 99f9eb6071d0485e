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


# The dumbbell at 8 Gb/s (1 byte/ns) with no latency: a flow of b bytes alone takes b ns.
SLOW_DUMBBELL = DUMBBELL.replace("name: dumbbell", "name: slow-dumbbell").replace(
    "link_gbps: 100", "link_gbps: 8\n  link_latency_us: 0")

# ASTRA-sim's DATA format, one layer: forward 2 ms, weight gradient 3 ms (1 ns per cycle), then an
# all-reduce of 10 MB; on two NPUs a ring of two, one 10 MB flow each way: 10 ms alone.
ASTRA_ONE_ALLREDUCE = "DATA\n1\nl0 -1 2000000 NONE 0 0 NONE 0 3000000 ALLREDUCE 10000000 0\n"

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data")


class SimJobsWorkloadsFabricsFaults(unittest.TestCase):
    """Any workload spec as a job, a network YAML as the fabric, link faults during the run (all by hand)."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name
        for name, text in (("fabric.yaml", SLOW_DUMBBELL), ("one_allreduce.txt", ASTRA_ONE_ALLREDUCE)):
            with open(os.path.join(self.dir, name), "w") as f:
                f.write(text)

    def tearDown(self):
        self.tmp.cleanup()

    def run_jobs(self, text, *args, code=0):
        path = os.path.join(self.dir, "jobs.yaml")
        with open(path, "w") as f:
            f.write(text)
        r = chorus(path, *args)
        self.assertEqual(r.returncode, code, r.stderr)
        return json.loads(r.stdout) if code == 0 and "--json" in args else r

    def test_astra_text_jobs_share_the_switches_link(self):
        # x on 0, 2 and y on 1, 3: both rings cross 4 -> 5 and 5 -> 4 from 5 ms on, half the rate
        # each: the all-reduces take 20 ms, the iteration 25 ms against 15 ms alone (slowdown 5/3).
        j = self.run_jobs("fabric: fabric.yaml\njobs:\n"
                          "  - {name: x, workload: one_allreduce.txt, placement: [0, 2], iterations: 1}\n"
                          "  - {name: y, workload: one_allreduce.txt, placement: [1, 3], iterations: 1}\n", "--json")
        for job in j["jobs"]:
            self.assertAlmostEqual(job["iteration_time_ns"], 25e6, places=3)
            self.assertAlmostEqual(job["alone_iteration_time_ns"], 15e6, places=3)
            self.assertAlmostEqual(job["slowdown"], 5 / 3, places=9)
            self.assertAlmostEqual(job["compute_ns"], 5e6, places=3)

    def test_chakra_trace_and_execution_graph_jobs(self):
        # dp_step (tests/chakra/make_chakra_samples.cpp) computes 1 + 2 us forward, 2 + 2 + 1 us
        # back-propagation and 1 us optimizer: 9 us per iteration, whatever the network.
        j = self.run_jobs("fabric: fabric.yaml\njobs:\n"
                          f"  - {{name: c, workload: {DATA}/chakra/dp_step, placement: [0, 2], iterations: 2}}\n"
                          f"  - {{name: g, workload: {DATA}/pytorch_eg/ddp.0.json, placement: [1, 3], iterations: 1}}\n",
                          "--json")
        c, g = j["jobs"]
        self.assertEqual(c["workload"], "dp_step")
        self.assertAlmostEqual(c["compute_ns"], 9000, places=6)
        self.assertGreaterEqual(c["iteration_time_ns"], 9000)
        self.assertGreater(g["compute_ns"], 0)
        # The Chakra samples' directory holds two traces: name one.
        r = self.run_jobs("fabric: fabric.yaml\njobs:\n"
                          f"  - {{name: c, workload: {DATA}/chakra, placement: [0, 2]}}\n", code=2)
        self.assertIn("holds the per-rank .et files of 2 traces (dp_step, p2p_step)", r.stderr)

    def test_a_jobs_own_network(self):
        # Two dimensions of 2 over the job's 4 servers: the all-reduce spans both, a ring 0 -> 1 ->
        # 2 -> 3 -> 0 whose every edge carries 2(4-1)/4 x 10 MB = 15 MB, no link shared: 15 ms.
        with open(os.path.join(self.dir, "two_by_two.yaml"), "w") as f:
            f.write("dims:\n  - {kind: ring, size: 2, link_bandwidth_gbps: 8, links_per_npu: 1, latency_ns: 0}\n"
                    "  - {kind: ring, size: 2, link_bandwidth_gbps: 8, links_per_npu: 1, latency_ns: 0}\n")
        j = self.run_jobs("fabric: fabric.yaml\njobs:\n"
                          "  - {name: x, workload: one_allreduce.txt, network: two_by_two.yaml, npus: 4, iterations: 1}\n",
                          "--json")
        self.assertAlmostEqual(j["jobs"][0]["iteration_time_ns"], 20e6, places=3)

    def test_network_yaml_as_fabric(self):
        # One ring of 4 NPUs, 2 links per NPU at 4 Gb/s: to the next and the previous NPU at 0.5
        # byte/ns each. NPUs 0 and 1 all-reduce 10 MB on 0 -> 1 and 1 -> 0, 20 ms: 5 + 20 ms.
        with open(os.path.join(self.dir, "ring4.yaml"), "w") as f:
            f.write("dims:\n  - {kind: ring, size: 4, link_bandwidth_gbps: 4, links_per_npu: 2, latency_ns: 0}\n")
        j = self.run_jobs("fabric: ring4.yaml\njobs:\n"
                          "  - {name: x, workload: one_allreduce.txt, placement: [0, 1], iterations: 1}\n", "--json")
        self.assertEqual(j["fabric"]["servers"], 4)
        self.assertAlmostEqual(j["jobs"][0]["iteration_time_ns"], 25e6, places=3)

    def test_link_faults_during_the_run(self):
        # Job x on 0 and 2; its flow 0 -> 2 crosses 4 -> 5 from 5 ms. Half bandwidth in [7, 11] ms:
        # 2 MB by 7, 2 MB by 11, the last 6 MB by 17 ms. Down in [7, 11]: 2 MB, a wait, 8 MB: 19 ms.
        job = "jobs:\n  - {name: x, workload: one_allreduce.txt, placement: [0, 2], iterations: 1}\n"
        for fault, expect in (("bandwidth_fraction: 0.5", 17e6), ("down: true", 19e6)):
            j = self.run_jobs(f"fabric: fabric.yaml\nlinks:\n  - {{from: 4, to: 5, {fault}, at_ms: 7, until_ms: 11}}\n" + job,
                              "--json")
            self.assertAlmostEqual(j["jobs"][0]["iteration_time_ns"], expect, places=3)
            self.assertAlmostEqual(j["jobs"][0]["slowdown"], 1.0, places=12)  # alone: the same faults
        for fault, message in (("down: true, at_ms: 7, until_ms: 3", "jobs.yaml:3: field 'links[0].until_ms' (3) must be after"),
                               ("down: true, at_ms: -2, until_ms: 3", "jobs.yaml:3: field 'links[0].at_ms' must be a finite number >= 0"),
                               ("down: true, at_ms: 2", "jobs.yaml:3: field 'links[0]': a link down from 'at_ms' needs 'until_ms'"),
                               ("down: true, at_ms: x, until_ms: 3", "jobs.yaml:3: field 'links[0].at_ms'")):
            r = self.run_jobs(f"fabric: fabric.yaml\nlinks:\n  - {{from: 4, to: 5, {fault}}}\n" + job, code=2)
            self.assertIn(message, r.stderr)
            self.assertNotIn("internal", r.stderr)
        # On a triangle of servers the flow 0 -> 1 leaves the link 0 -> 1 when it goes down at 7 ms
        # (2 MB sent) and sends its other 8 MB on 0 -> 2 -> 1, alone there: done at 15 ms, as healthy.
        with open(os.path.join(self.dir, "triangle.yaml"), "w") as f:
            f.write("fabric:\n  name: triangle\n  servers: 3\n  link_gbps: 8\n  link_latency_us: 0\n"
                    "  links: [[0, 1], [1, 0], [0, 2], [2, 0], [1, 2], [2, 1]]\n")
        j = self.run_jobs("fabric: triangle.yaml\nlinks:\n  - {from: 0, to: 1, down: true, at_ms: 7, until_ms: 11}\n"
                          "jobs:\n  - {name: x, workload: one_allreduce.txt, placement: [0, 1], iterations: 1}\n", "--json")
        self.assertAlmostEqual(j["jobs"][0]["iteration_time_ns"], 15e6, places=3)
        r = self.run_jobs("fabric: fabric.yaml\nlinks:\n  - {from: 4, to: 17, bandwidth_fraction: 0.5, at_ms: 1}\n" + job, code=2)
        self.assertIn("jobs.yaml:3: links[0]: fabric 'slow-dumbbell' has no link 4 -> 17 (nodes 0..5)", r.stderr)


class SimWorkloadChakraDirectory(unittest.TestCase):
    def test_a_directory_of_one_trace_is_that_trace(self):
        # workload::load: a directory holding one trace's per-rank files reads as the trace itself.
        with tempfile.TemporaryDirectory() as d:
            for rank in (0, 1):
                with open(os.path.join(DATA, "chakra", f"dp_step.{rank}.et"), "rb") as f, \
                        open(os.path.join(d, f"dp_step.{rank}.et"), "wb") as g:
                    g.write(f.read())
            runs = [subprocess.run([CHORUS, "sim", "workload", "--workload", w, "-i", "1", "--json"], capture_output=True,
                                   text=True, timeout=300) for w in (d, os.path.join(d, "dp_step.0.et"))]
            for r in runs:
                self.assertEqual(r.returncode, 0, r.stderr)
            a, b = (json.loads(r.stdout) for r in runs)
            self.assertEqual(a["forward_compute_ns"], 3000)  # 1 + 2 us, as the file itself
            self.assertEqual(a["iteration_time_ns"], b["iteration_time_ns"])


if __name__ == "__main__":
    unittest.main()
