#!/usr/bin/env python3
"""End-to-end tests of `chorus sweep`: the points a spec makes, rows equal to the commands' own
--json, serial and parallel runs identical, errors named by file, line and field, a sweep killed
with SIGKILL or stopped by Ctrl-C resumed to every point exactly once, and mpirun -n 2."""
import csv
import itertools
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
import unittest

CHORUS = sys.argv.pop(1) if len(sys.argv) > 1 else "chorus"

GRID = """command: sim collective
fixed:
  op: allreduce
grid:
  topology: [3D-SW_SW_SW_homo, 4D-Ring_FC_Ring_SW]
  scheduler: [baseline, themis-fifo, themis-scf]
  size: [1MiB, 64MiB, 1GiB]
  chunks: [16, 256]
"""
GRID_POINTS = 2 * 3 * 3 * 2

# Slow enough points (tens of ms each) that a sweep can be killed in the middle.
SLOW = """command: sim collective
grid:
  topology: [3D-SW_SW_SW_homo, 4D-Ring_FC_Ring_SW]
  scheduler: [baseline, themis-fifo, themis-scf]
  size: [256MiB, 512MiB, 1GiB, 2GiB]
  chunks: [8192, 16384]
"""
SLOW_POINTS = 2 * 3 * 4 * 2


def chorus(*args, timeout=300, **kw):
    return subprocess.run([CHORUS, *args], capture_output=True, text=True, timeout=timeout, **kw)


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def db_rows(path):
    with sqlite3.connect(path) as c:
        return c.execute("SELECT key, rank, error FROM points").fetchall()


class SweepBase(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="chorus-sweep-test-")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def spec(self, text, name="spec.yaml"):
        path = os.path.join(self.dir, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def sweep(self, spec, tag, *extra, **kw):
        db, out = os.path.join(self.dir, tag + ".db"), os.path.join(self.dir, tag + ".csv")
        return chorus("sweep", spec, "--db", db, "--csv", out, *extra, **kw), db, out


class Points(SweepBase):
    def test_help(self):
        r = chorus("sweep", "--help")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("Usage", r.stdout)

    def test_grid_points_lists_and_random_samples_counted(self):
        spec = self.spec(GRID + """points:
  - {topology: 2D-SW_SW, scheduler: ideal, size: 4MiB, chunks: 4}
  - {topology: 2D-SW_SW, scheduler: baseline, size: 4MiB, chunks: 4}
random:
  count: 5
  seed: 11
  params:
    topology: {choice: [2D-current]}
    size: {log_uniform: [1KiB, 1GiB]}
    chunks: {int_uniform: [1, 64]}
""")
        r, db, out = self.sweep(spec, "a", "-j", "2")
        self.assertEqual(r.returncode, 0, r.stderr)
        rows = read_csv(out)
        self.assertEqual(len(rows), GRID_POINTS + 2 + 5)
        # The grid in the file's order, the last parameter varying fastest.
        expected = list(itertools.product(["3D-SW_SW_SW_homo", "4D-Ring_FC_Ring_SW"],
                                          ["baseline", "themis-fifo", "themis-scf"], ["1MiB", "64MiB", "1GiB"],
                                          ["16", "256"]))
        got = [(x["topology"], x["scheduler"], x["size"], x["chunks"]) for x in rows[:GRID_POINTS]]
        self.assertEqual(got, expected)
        self.assertTrue(all(x["op"] == "allreduce" for x in rows))
        samples = rows[GRID_POINTS + 2:]
        for x in samples:
            self.assertEqual(x["topology"], "2D-current")
            self.assertTrue(1024 <= int(x["size"]) <= 2**30, x["size"])
            self.assertTrue(1 <= int(x["chunks"]) <= 64, x["chunks"])
        self.assertEqual(len({x["key"] for x in rows}), len(rows))
        self.assertEqual(len(db_rows(db)), len(rows))
        # The same seed draws the same samples: a second spec file gives the same keys.
        with open(spec) as f:
            again = self.spec(f.read(), "again.yaml")
        r2, _, out2 = self.sweep(again, "b", "-j", "1")
        self.assertEqual(r2.returncode, 0, r2.stderr)
        self.assertEqual([x["key"] for x in read_csv(out2)], [x["key"] for x in rows])

    def test_row_equals_the_commands_own_json(self):
        r, db, out = self.sweep(self.spec(GRID), "a", "-j", "2")
        self.assertEqual(r.returncode, 0, r.stderr)
        rows = {(x["topology"], x["scheduler"], x["size"], x["chunks"]): x for x in read_csv(out)}
        for topo, sched, size, chunks in (("4D-Ring_FC_Ring_SW", "themis-fifo", "64MiB", "256"),
                                          ("3D-SW_SW_SW_homo", "baseline", "1GiB", "16")):
            c = chorus("sim", "collective", "-t", topo, "--scheduler", sched, "-s", size, "-c", chunks, "--json")
            self.assertEqual(c.returncode, 0, c.stderr)
            j = json.loads(c.stdout)
            row = rows[(topo, sched, size, chunks)]
            self.assertEqual(float(row["time_ns"]), j["time_ns"])
            self.assertEqual(float(row["avg_bw_utilization"]), j["avg_bw_utilization"])
            for d in j["dims"]:
                self.assertEqual(float(row[f"dims.{d['index']}.utilization"]), d["utilization"])
            # The command's JSON repeats the topology: the column is named apart from the parameter.
            self.assertEqual(row["result.topology"], j["topology"])
        with sqlite3.connect(db) as c:
            n, = c.execute("SELECT count(*) FROM results WHERE scheduler = 'baseline' AND time_ns > 0").fetchone()
        self.assertEqual(n, GRID_POINTS // 3)

    def test_workload_rows_equal_the_commands_own_json(self):
        spec = self.spec("""command: sim workload
fixed: {topology: 4D-Ring_FC_Ring_SW, iterations: 1}
grid:
  workload: [resnet152]
  scheduler: [baseline, themis-scf]
""")
        r, _, out = self.sweep(spec, "w", "-j", "2")
        self.assertEqual(r.returncode, 0, r.stderr)
        rows = read_csv(out)
        self.assertEqual(len(rows), 2)
        for row in rows:
            c = chorus("sim", "workload", "-w", "resnet152", "-t", "4D-Ring_FC_Ring_SW", "-i", "1", "--scheduler",
                       row["scheduler"], "--json")
            self.assertEqual(c.returncode, 0, c.stderr)
            j = json.loads(c.stdout)
            numbers = {k: v for k, v in j.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}
            self.assertGreater(len(numbers), 3)
            for k, v in numbers.items():
                self.assertEqual(float(row[k]), v, k)


    def test_workload_on_a_fabric_equals_the_commands_own_json(self):
        fabric = os.path.join(self.dir, "e16.yaml")
        f = chorus("topo", "fabric", "--fabric", "expander", "--servers", "16", "--save", fabric)
        self.assertEqual(f.returncode, 0, f.stderr)
        spec = self.spec(f"command: sim workload\nfixed: {{topology: {fabric}, iterations: 1}}\n"
                         "grid:\n  workload: [topoopt-candle, topoopt-dlrm]\n")
        r, _, out = self.sweep(spec, "f", "-j", "2")
        self.assertEqual(r.returncode, 0, r.stderr)
        rows = read_csv(out)
        self.assertEqual([x["workload"] for x in rows], ["topoopt-candle", "topoopt-dlrm"])
        for row in rows:
            c = chorus("sim", "workload", "-w", row["workload"], "-t", fabric, "-i", "1", "--json")
            self.assertEqual(c.returncode, 0, c.stderr)
            j = json.loads(c.stdout)
            self.assertEqual(float(row["iteration_time_ns"]), j["iteration_time_ns"])
            self.assertEqual(float(row["comm_active_ns"]), j["comm_active_ns"])
        # A fabric runs the flow-level model: a scheduler is refused, named by the spec's line.
        bad = self.spec(f"command: sim workload\nfixed: {{topology: {fabric}, iterations: 1}}\n"
                        "grid:\n  scheduler: [baseline]\n", "bad.yaml")
        r, _, _ = self.sweep(bad, "bad")
        self.assertEqual(r.returncode, 2)
        self.assertIn("bad.yaml:4: field 'scheduler'", r.stderr)


    def test_jobs_rows_equal_the_commands_own_json(self):
        root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        files = [os.path.join(root, "examples", "jobs", f"placement-{p}.yaml") for p in ("contiguous", "shifted")]
        spec = self.spec("command: sim jobs\ngrid:\n  jobs: [" + ", ".join(files) + "]\n")
        r, _, out = self.sweep(spec, "j", "-j", "2")
        self.assertEqual(r.returncode, 0, r.stderr)
        rows = read_csv(out)
        self.assertEqual(len(rows), 2)
        for row, path in zip(rows, files):
            c = chorus("sim", "jobs", path, "--json")
            self.assertEqual(c.returncode, 0, c.stderr)
            j = json.loads(c.stdout)
            for k, job in enumerate(j["jobs"]):
                self.assertEqual(float(row[f"jobs.{k}.slowdown"]), job["slowdown"])
                self.assertEqual(float(row[f"jobs.{k}.iteration_time_ns"]), job["iteration_time_ns"])
            self.assertNotIn("links.0.utilization", row)  # per-link rows left out, as the command's jobs.csv


    def test_plan_rows_equal_the_commands_own_json(self):
        spec = self.spec("command: plan\nfixed: {budget: 1000s, evaluations: 500}\n"
                         "grid:\n  workload: [syndicate-fig6, syndicate-a1]\n  seed: [1, 2]\n")
        r1, _, out1 = self.sweep(spec, "p1", "-j", "1")
        r2, _, out2 = self.sweep(spec, "p2", "-j", "2")
        self.assertEqual(r1.returncode, 0, r1.stderr)
        self.assertEqual(r2.returncode, 0, r2.stderr)
        with open(out1) as a, open(out2) as b:
            self.assertEqual(a.read(), b.read())  # the search stops by its evaluations, not the clock
        rows = read_csv(out1)
        self.assertEqual(len(rows), 4)
        for row in rows:
            c = chorus("plan", "--workload", row["workload"], "--seed", row["seed"], "--budget", "1000s",
                       "--evaluations", "500", "--json")
            self.assertEqual(c.returncode, 0, c.stderr)
            j = json.loads(c.stdout)
            self.assertEqual(float(row["iteration_time_ns"]), j["iteration_time_ns"])
            self.assertEqual(float(row["speedup_over_baseline"]), j["speedup_over_baseline"])
            self.assertNotIn("search_s", row)

    def test_topo_find_rows_equal_the_commands_own_json(self):
        spec = self.spec("command: topo find\nfixed: {workload: dlrm-example}\ngrid:\n  degree: [2, 4]\n"
                         "points:\n  - {workload: topoopt-dlrm, servers: 16, degree: 3}\n")
        r1, _, out1 = self.sweep(spec, "f1", "-j", "1")
        r2, _, out2 = self.sweep(spec, "f2", "-j", "2")
        self.assertEqual(r1.returncode, 0, r1.stderr)
        self.assertEqual(r2.returncode, 0, r2.stderr)
        with open(out1) as a, open(out2) as b:
            self.assertEqual(a.read(), b.read())
        rows = read_csv(out1)
        self.assertEqual([(x["workload"], x["degree"]) for x in rows],
                         [("dlrm-example", "2"), ("dlrm-example", "4"), ("topoopt-dlrm", "3")])
        for row in rows:
            args = ["topo", "find", "--workload", row["workload"], "--degree", row["degree"], "--json"]
            if row["servers"]:
                args += ["--servers", row["servers"]]
            c = chorus(*args)
            self.assertEqual(c.returncode, 0, c.stderr)
            j = json.loads(c.stdout)
            # The degree is split between the AllReduce rings and the model-parallel matchings.
            self.assertEqual(int(row["degree_allreduce"]) + int(row["degree_mp"]), int(row["degree"]))
            self.assertEqual(int(row["result.degree"]), j["degree"])
            self.assertEqual(int(row["degree_mp"]), j["degree_mp"])
            self.assertEqual(float(row["mp_satisfied_fraction"]), j["mp_satisfied_fraction"])
            self.assertEqual(float(row["mp_mean_hops"]), j["mp_mean_hops"])
            # The lists are left out, their counts kept.
            self.assertEqual(int(row["links"]), len(j["edges"]))
            self.assertEqual(int(row["matchings"]), len(j["matchings"]))
            self.assertEqual(int(row["mp_transfers"]), len(j["routes"]))
            self.assertEqual(int(row["mp_max_hops"]), max(j["mp_hops"], default=0))
            self.assertEqual(int(row["allreduce.0.members"]), len(j["allreduce"][0]["servers"]))
            self.assertNotIn("edges.0.0", row)
            self.assertNotIn("routes.0.src", row)

    def test_topo_cost_rows_equal_the_commands_own_json(self):
        spec = self.spec("command: topo cost\nfixed: {degree: 4}\ngrid:\n"
                         "  fabric: [topoopt-oneshot, ideal-fat-tree]\n  servers: [128, 1024]\n  bandwidth: [25, 100]\n")
        r, _, out = self.sweep(spec, "c", "-j", "2")
        self.assertEqual(r.returncode, 0, r.stderr)
        rows = read_csv(out)
        self.assertEqual(len(rows), 8)
        for row in rows:
            c = chorus("topo", "cost", "--fabric", row["fabric"], "--servers", row["servers"], "--degree", "4",
                       "--bandwidth", row["bandwidth"], "--json")
            self.assertEqual(c.returncode, 0, c.stderr)
            j = json.loads(c.stdout)[0]
            self.assertEqual(float(row["cost_usd"]), j["cost_usd"])
            self.assertEqual(float(row["nic_usd"]), j["nic_usd"])
            self.assertEqual(float(row["parts.transceivers"]), j["parts"]["transceivers"])
            if row["fabric"] == "topoopt-oneshot":  # d interfaces of B each (Sec. 5.2)
                self.assertEqual(float(row["server_gbps"]), 4 * float(row["bandwidth"]))
        # More servers cost more on every fabric.
        by = {(x["fabric"], x["servers"], x["bandwidth"]): float(x["cost_usd"]) for x in rows}
        for f in ("topoopt-oneshot", "ideal-fat-tree"):
            for b in ("25", "100"):
                self.assertLess(by[(f, "128", b)], by[(f, "1024", b)])

    def test_topo_optimize_rows_equal_the_commands_own_json(self):
        spec = self.spec("command: topo optimize\nfixed: {workload: topoopt-dlrm, servers: 4, steps: 20, "
                         "patience: 10, rounds: 1}\ngrid:\n  seed: [1, 2]\n  degree: [2, 3]\n")
        r1, _, out1 = self.sweep(spec, "o1", "-j", "1")
        r2, _, out2 = self.sweep(spec, "o2", "-j", "2")
        self.assertEqual(r1.returncode, 0, r1.stderr)
        self.assertEqual(r2.returncode, 0, r2.stderr)
        with open(out1) as a, open(out2) as b:
            self.assertEqual(a.read(), b.read())  # seeded, bounded by its steps
        rows = read_csv(out1)
        self.assertEqual(len(rows), 4)
        for row in rows:
            c = chorus("topo", "optimize", "--workload", "topoopt-dlrm", "--servers", "4", "--steps", "20",
                       "--patience", "10", "--rounds", "1", "--seed", row["seed"], "--degree", row["degree"],
                       "--json", "-q")
            self.assertEqual(c.returncode, 0, c.stderr)
            j = json.loads(c.stdout)
            self.assertEqual(float(row["best.iteration_ms"]), j["best"]["iteration_ms"])
            self.assertEqual(int(row["simulations"]), j["simulations"])
            self.assertEqual(row["best.strategy.key"], j["best"]["strategy"]["key"])
            for k, rnd in enumerate(j["rounds"]):
                self.assertEqual(float(row[f"rounds.{k}.iteration_ms"]), rnd["iteration_ms"])
                # The best is the fastest of the job's own strategy and every round's.
                self.assertLessEqual(float(row["best.iteration_ms"]), rnd["iteration_ms"])
            self.assertLessEqual(float(row["best.iteration_ms"]), float(row["own.iteration_ms"]))
            self.assertNotIn("best.topology.edges.0.0", row)  # the lists are left out
            self.assertNotIn("best.strategy.placement.0", row)

    def test_topo_find_bad_degree_named_by_the_spec(self):
        spec = self.spec("command: topo find\nfixed: {workload: dlrm-example}\ngrid:\n  degree: [0, 4]\n")
        r, _, out = self.sweep(spec, "bad")
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("spec.yaml:4: field 'degree'", r.stderr)
        rows = read_csv(out)
        self.assertTrue(rows[0]["error"])
        self.assertFalse(rows[1]["error"])


class Parallel(SweepBase):
    def test_serial_and_parallel_rows_identical(self):
        spec = self.spec(SLOW)
        r1, db1, out1 = self.sweep(spec, "serial", "-j", "1")
        r2, db2, out2 = self.sweep(spec, "parallel", "-j", "3")
        self.assertEqual(r1.returncode, 0, r1.stderr)
        self.assertEqual(r2.returncode, 0, r2.stderr)
        with open(out1) as a, open(out2) as b:
            self.assertEqual(a.read(), b.read())
        self.assertEqual(len(read_csv(out1)), SLOW_POINTS)


class Resume(SweepBase):
    def wait_for_rows(self, proc, db, at_least):
        deadline = time.time() + 120
        while time.time() < deadline and proc.poll() is None:
            if os.path.exists(db):
                try:
                    if len(db_rows(db)) >= at_least:
                        return
                except sqlite3.OperationalError:
                    pass  # the table is not made yet
            time.sleep(0.02)
        self.fail("the sweep ended or stalled before it wrote its first rows")

    def resume_after(self, sig):
        spec = self.spec(SLOW)
        db, out = os.path.join(self.dir, "r.db"), os.path.join(self.dir, "r.csv")
        proc = subprocess.Popen([CHORUS, "sweep", spec, "--db", db, "--csv", out, "-j", "2"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.wait_for_rows(proc, db, 4)
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=120)
        before = len(db_rows(db))
        self.assertLess(before, SLOW_POINTS, "the sweep finished before it was stopped")
        r = chorus("sweep", spec, "--db", db, "--csv", out, "-j", "2")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(f"{SLOW_POINTS - before} run now", r.stdout)
        self.assertIn(f"{before} already in", r.stdout)
        keys = [k for k, _, _ in db_rows(db)]
        self.assertEqual(len(keys), SLOW_POINTS)
        self.assertEqual(len(set(keys)), SLOW_POINTS)
        # ... and the rows are those of one uninterrupted run.
        r2, _, fresh = self.sweep(spec, "fresh", "-j", "1")
        self.assertEqual(r2.returncode, 0, r2.stderr)
        with open(out) as a, open(fresh) as b:
            self.assertEqual(a.read(), b.read())
        return proc.returncode, err

    def test_sigkill_then_resume_runs_every_point_exactly_once(self):
        status, _ = self.resume_after(signal.SIGKILL)
        self.assertEqual(status, -signal.SIGKILL)

    def test_ctrl_c_stops_cleanly_and_resumes(self):
        status, err = self.resume_after(signal.SIGINT)
        self.assertEqual(status, 130, err)
        self.assertIn("run the same command to resume", err)

    def test_dry_run_counts_what_is_left(self):
        spec = self.spec(GRID)
        r, db, _ = self.sweep(spec, "d", "-j", "2")
        self.assertEqual(r.returncode, 0, r.stderr)
        with sqlite3.connect(db) as c:
            c.execute("DELETE FROM points WHERE rowid IN (SELECT rowid FROM points LIMIT 5)")
        d = chorus("sweep", spec, "--db", db, "--dry-run")
        self.assertEqual(d.returncode, 0, d.stderr)
        self.assertIn(f"{GRID_POINTS} points of sim collective, {GRID_POINTS - 5} in", d.stdout)
        self.assertIn("5 to run", d.stdout)


class Examples(SweepBase):
    def test_the_examples_parse_and_count_their_points(self):
        root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        for name, points in (("collectives.yaml", 2 * 3 * 12 * 7), ("workloads.yaml", 2 * 3 + 8)):
            d = chorus("sweep", os.path.join(root, "examples", "sweep", name), "--db",
                       os.path.join(self.dir, name + ".db"), "--dry-run")
            self.assertEqual(d.returncode, 0, d.stderr)
            self.assertIn(f"{points} points of", d.stdout)
            self.assertIn(f"{points} to run", d.stdout)

    def test_the_workloads_example_runs(self):
        root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        r, _, out = self.sweep(os.path.join(root, "examples", "sweep", "workloads.yaml"), "w", "-j", "2")
        self.assertEqual(r.returncode, 0, r.stderr)
        rows = read_csv(out)
        self.assertEqual(len(rows), 14)
        self.assertTrue(all(not x["error"] and float(x["iteration_time_ns"]) > 0 for x in rows))


class Errors(SweepBase):
    def expect(self, text, *needles):
        r, _, _ = self.sweep(self.spec(text), "e")
        self.assertEqual(r.returncode, 2, (r.stdout, r.stderr))
        for n in needles:
            self.assertIn(n, r.stderr)
        return r

    def test_unknown_top_level_key(self):
        self.expect("command: sim collective\ngird:\n  size: [1MiB]\n", "spec.yaml:2", "'gird'", "did you mean 'grid'")

    def test_unknown_parameter(self):
        self.expect("command: sim collective\ngrid:\n  size: [1MiB]\n  schedular: [baseline]\n",
                    "spec.yaml:4", "'schedular'", "did you mean 'scheduler'")

    def test_unknown_command(self):
        self.expect("command: sim colective\n", "spec.yaml:1", "did you mean 'sim collective'")

    def test_wrong_type(self):
        self.expect("command: sim collective\ngrid:\n  chunks: [4, many]\n", "spec.yaml:3", "field 'chunks'",
                    "an integer")
        self.expect("command: sim collective\nfixed:\n  size: 12 parsecs\n", "spec.yaml:3", "size")

    def test_bad_value_found_when_run_names_the_line_and_keeps_the_other_rows(self):
        r = self.expect("command: sim collective\nfixed: {chunks: 4}\ngrid:\n  size: [1MiB]\n"
                        "  topology: [3D-SW_SW_SW_homo, 9D-nowhere]\n",
                        "spec.yaml:5: field 'topology'", "1 of 2 points failed")
        rows = read_csv(os.path.join(self.dir, "e.csv"))
        self.assertEqual([x["error"] == "" for x in rows], [True, False])

    def test_missing_spec_file(self):
        r = chorus("sweep", os.path.join(self.dir, "nope.yaml"))
        self.assertEqual(r.returncode, 2)
        self.assertIn("nope.yaml", r.stderr)


class Mpi(SweepBase):
    def test_two_ranks_split_the_points_with_identical_rows(self):
        mpirun = shutil.which("mpirun")
        if not mpirun:
            self.skipTest("no mpirun")
        spec = self.spec(SLOW)
        r1, _, serial = self.sweep(spec, "serial", "-j", "1")
        self.assertEqual(r1.returncode, 0, r1.stderr)
        db, out = os.path.join(self.dir, "m.db"), os.path.join(self.dir, "m.csv")
        env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
                   OMPI_MCA_rmaps_base_oversubscribe="1")
        r = subprocess.run([mpirun, "-n", "2", "--oversubscribe", CHORUS, "sweep", spec, "--db", db, "--csv", out,
                            "-j", "1"], capture_output=True, text=True, timeout=300, env=env)
        self.assertEqual(r.returncode, 0, (r.stdout, r.stderr))
        self.assertIn("on each of 2 ranks", r.stdout)
        with open(serial) as a, open(out) as b:
            self.assertEqual(a.read(), b.read())
        rows = db_rows(db)
        self.assertEqual(len(rows), SLOW_POINTS)
        self.assertEqual(sorted({rank for _, rank, _ in rows}), [0, 1])
        # Rank r ran the points whose index is r modulo 2.
        self.assertEqual(sum(1 for _, rank, _ in rows if rank == 1), SLOW_POINTS // 2)


    def test_a_rank_killed_leaves_its_points_undone_not_lost(self):
        mpirun = shutil.which("mpirun")
        if not mpirun:
            self.skipTest("no mpirun")
        spec = self.spec(SLOW)
        db, out = os.path.join(self.dir, "k.db"), os.path.join(self.dir, "k.csv")
        env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
        proc = subprocess.Popen([mpirun, "-n", "2", "--oversubscribe", CHORUS, "sweep", spec, "--db", db, "--csv", out,
                                 "-j", "1"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        Resume.wait_for_rows(self, proc, db, 4)
        ranks = subprocess.run(["pgrep", "-f", f"sweep {spec} --db {db}"], capture_output=True, text=True).stdout.split()
        ranks = [int(p) for p in ranks if int(p) != proc.pid]
        self.assertEqual(len(ranks), 2, ranks)
        os.kill(max(ranks), signal.SIGKILL)
        proc.communicate(timeout=120)
        self.assertNotEqual(proc.returncode, 0)
        before = len(db_rows(db))
        self.assertLess(before, SLOW_POINTS)
        r = chorus("sweep", spec, "--db", db, "--csv", out, "-j", "2")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(f"{SLOW_POINTS - before} run now", r.stdout)
        keys = [k for k, _, _ in db_rows(db)]
        self.assertEqual(sorted(set(keys)), sorted(keys))
        self.assertEqual(len(keys), SLOW_POINTS)


class Figure(SweepBase):
    def test_plot_writes_the_figure(self):
        d = os.path.join(self.dir, "fig")
        r, _, _ = self.sweep(self.spec(GRID), "p", "--plot", d, "--x", "size", "--y", "time_ns", "--series",
                             "scheduler")
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(os.path.join(d, "sweep.svg")) as f:
            svg = f.read()
        self.assertIn("<svg", svg)
        for s in ("baseline", "themis-fifo", "themis-scf"):
            self.assertIn(s, svg)

    def test_plot_names_an_unknown_axis(self):
        r, _, _ = self.sweep(self.spec(GRID), "p", "--plot", self.dir, "--x", "sise", "--y", "time_ns")
        self.assertEqual(r.returncode, 2)
        self.assertIn("did you mean 'size'", r.stderr)


if __name__ == "__main__":
    unittest.main()
