#!/usr/bin/env python3
"""End-to-end tests of the chorus CLI: exit codes, JSON shape, bad input, outputs on disk."""
import csv
import json
import os
import re
import subprocess
import sys
import tempfile
import unittest
import xml.etree.ElementTree as ET

CHORUS = sys.argv.pop(1) if len(sys.argv) > 1 else "chorus"


def chorus(*args, timeout=120):
    return subprocess.run([CHORUS, *args], capture_output=True, text=True, timeout=timeout)


class Help(unittest.TestCase):
    def test_every_command_has_help(self):
        for cmd in ([], ["sim"], ["sim", "collective"], ["sim", "schedule"], ["sim", "topologies"], ["sim", "workload"], ["reproduce"], ["reproduce", "themis"], ["reproduce", "themis-workloads"], ["export"]):
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

    def test_no_internal_work_item_numbers_in_help_or_docs(self):
        # "issue 34" means nothing to a user: the help of every command and the user's docs say
        # what a thing is instead.
        root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        internal = re.compile(r"\b[Ii]ssues? \d+")
        r = chorus("--help-all")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIsNone(internal.search(r.stdout), internal.search(r.stdout))
        pages = [os.path.join(root, "README.md")] + [os.path.join(root, "docs", f)
                                                     for f in sorted(os.listdir(os.path.join(root, "docs")))
                                                     if f.endswith(".md")]
        for page in pages:
            with open(page) as f:
                for n, line in enumerate(f, 1):
                    m = internal.search(line)
                    # (the public trackers of other projects are cited by their numbers)
                    if m and not re.search(r"(PyTorch|NCCL|Gloo|ASTRA-sim|astra-sim|SimAI|Chakra|chakra)[^.]*" + m.group(0), line):
                        self.fail(f"{page}:{n}: {line.strip()}")

    def test_bare_command_prints_its_help(self):
        for cmd, usage in (([], "chorus [OPTIONS] SUBCOMMAND"), (["sim"], "chorus sim [OPTIONS] SUBCOMMAND")):
            r = chorus(*cmd)
            self.assertEqual(r.returncode, 0, (cmd, r.stderr))
            self.assertIn(usage, r.stdout)
            self.assertEqual(r.stderr, "")


class DidYouMean(unittest.TestCase):
    def check(self, args, expected):
        r = chorus(*args)
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertIn(expected, r.stderr)
        self.assertNotIn("internal error", r.stderr)

    def test_unknown_flag(self):
        self.check(["sim", "collective", "--szie", "1GiB"],
                   "chorus sim collective: error: unknown option '--szie' (did you mean '--size'?)")
        self.check(["sim", "collective", "--szie=1GiB"], "unknown option '--szie' (did you mean '--size'?)")

    def test_unknown_command(self):
        self.check(["simm"], "chorus: error: unknown command 'simm' (did you mean 'sim'?)")
        self.check(["sim", "colective"], "chorus sim: error: unknown command 'colective' (did you mean 'collective'?)")

    def test_operation_names(self):
        # One spelling list everywhere; both spellings accepted.
        self.check(["bench", "--ops", "allreduse"], "unknown operation 'allreduse' (did you mean 'allreduce'?)")
        self.check(["sim", "collective", "--op", "allreduse"], "(did you mean 'allreduce'?)")
        self.check(["motif", "expand", "--op", "alltoal", "--ranks", "4", "--bytes", "1MB"], "(did you mean 'alltoall'?)")
        for op in ("all_reduce", "allreduce", "all-reduce"):
            self.assertEqual(chorus("sim", "collective", "--op", op, "--size", "1MiB").returncode, 0, op)

    def test_scheduler_names(self):
        self.check(["sim", "collective", "--scheduler", "fifo"], "(did you mean 'themis-fifo'?)")
        self.check(["sim", "collective", "--scheduler", "themis-sfc"], "(did you mean 'themis-scf'?)")
        self.assertEqual(chorus("sim", "collective", "--scheduler", "themis").returncode, 0)


def capped(*args, env=None, timeout=60):
    """chorus under a 4 GiB address-space cap: a flag that would exhaust memory must be refused
    up front (exit 2), not end in std::bad_alloc (exit 1) or the OOM killer."""
    import resource

    def cap():
        resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))
    return subprocess.run([CHORUS, *args], capture_output=True, text=True, timeout=timeout, preexec_fn=cap,
                          env=env if env is not None else os.environ)


class FieldFlags(unittest.TestCase):
    """Libraries name the field of their options (issue 32); the user reads the flag that set it."""

    def test_library_field_reaches_the_user_as_its_flag(self):  # eval::ThemisRealOptions::chunks
        with tempfile.TemporaryDirectory() as d:
            r = chorus("reproduce", "themis-real", "--chunks", "0", "--out", d, "-q")
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertEqual(r.stderr, "chorus: error: --chunks: must be >= 1, got 0\n")

    def test_field_whose_flag_differs(self):  # topoopt::ServerSpec::gpus, AlternatingOptions::gbps: kFieldFlags
        for flag, field in (("--gpus-per-server", "gpus"), ("--bandwidth", "gbps")):
            r = chorus("topo", "optimize", "--workload", "topoopt-dlrm", "--servers", "4", flag, "0", "-q")
            self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
            self.assertTrue(r.stderr.startswith(f"chorus: error: {flag}: "), r.stderr)
            self.assertNotIn(field + ":", r.stderr)

    def test_one_batch_tolerance_limit(self):  # sim::flow::kMaxBatchTolerance, in every command
        with tempfile.TemporaryDirectory() as d:
            for cmd in (["sim", "jobs", os.path.join(d, "jobs.yaml")], ["reproduce", "topoopt", "--costs-only", "-q", "--out", d]):
                r = chorus(*cmd[:2], "--batch-tolerance", "0.5", *cmd[2:])
                self.assertEqual(r.returncode, 2, (cmd, r.stdout + r.stderr))
                self.assertIn("--batch-tolerance: must be in [0, 0.1), got 0.5", r.stderr, cmd)


class Bounds(unittest.TestCase):
    """Issue 31's reproductions: every flag and file bounded; no crash, no exhaustion, exit 2 naming the field."""

    def refused(self, r, field):
        self.assertEqual(r.returncode, 2, r.stdout[-500:] + r.stderr[-500:])
        self.assertIn(field, r.stderr)
        self.assertNotIn("internal error", r.stderr)

    def test_flags(self):
        cases = [
            (["run", "collective", "--grid", "1", "--size", "1KiB", "--chunks", "1", "--dim-backends", "shm",
              "--iters", "2147483647"], "--iters"),  # was SIGSEGV (warm-up + iterations overflowed an int)
            (["run", "collective", "--grid", "1", "--size", "1KiB", "--chunks", "1000000000", "--dim-backends", "shm"],
             "--chunks"),
            (["run", "collective", "--grid", "2x", "--size", "1KiB"], "--grid"),
            (["run", "collective", "--grid", "2xx", "--size", "1KiB"], "--grid"),
            (["sim", "workload", "--workload", "transformer-1t", "--pp", "8", "--microbatches", "10000000"], "--microbatches"),
            (["sim", "workload", "--pp", "0"], "--pp"),
            (["topo", "optimize", "--workload", "topoopt-dlrm", "--servers", "4", "--steps", "2147483647",
              "--patience", "2147483647"], "--steps"),
            (["motif", "expand", "--op", "all_to_all", "--ranks", "64", "--bytes", "1GB", "--segment", "1KB"], "--segment"),
            (["bench", "--sizes", "1TiB", "--iters", "1"], "--sizes"),  # was std::bad_alloc
            (["bench", "--sizes", "8", "--iters", "2147483647"], "--iters"),
            (["bench", "--sizes", "8", "--warmup", "2147483647"], "--warmup"),  # ran on for hours
            (["launch", "-n", "1000", "--", "true"], "launch -n"),
            (["launch", "--kill-grace-s", "nan", "-n", "1", "--", "true"], "--kill-grace-s"),
        ]
        for args, field in cases:
            with self.subTest(args=args):
                self.refused(capped(*args), field)

    def test_files(self):
        with tempfile.TemporaryDirectory() as d:
            def write(name, text):
                path = os.path.join(d, name)
                with open(path, "w") as f:
                    f.write(text)
                return path
            plan = write("p.json", '{"format": 1e400}')
            self.refused(capped("plan", "--evaluate", plan), plan)
            huge = write("huge.yaml", "fabric: {servers: 100000000, link_gbps: 100, links: []}\n")
            self.refused(capped("sim", "workload", "--topology", huge), "fabric.servers")
            slow = write("slow.yaml", "fabric: {servers: 2, link_gbps: 1e-305, links: [[0, 1], [1, 0]]}\n")
            self.refused(capped("sim", "workload", "--workload", "topoopt-dlrm", "--topology", slow), "gbps")
            for key, value in (("link_bandwidth_gbps", "1e-308"), ("latency_ns", "1e308")):
                dims = {"kind": "ring", "size": 4, "link_bandwidth_gbps": 100, "links_per_npu": 2, "latency_ns": 500}
                dims[key] = value
                net = write(f"{key}.yaml", "name: n\ndims:\n  - {" + ", ".join(f"{k}: {v}" for k, v in dims.items()) + "}\n")
                self.refused(capped("sim", "collective", "--topology", net), key)

    def test_environment(self):
        env = dict(os.environ, CHORUS_RANK="0")
        env.pop("CHORUS_WORLD_SIZE", None)
        self.refused(capped("bench", "--sizes", "8", "--iters", "1", env=env), "CHORUS_WORLD_SIZE")


def limited(*args, cap_bytes=4 << 30, env=None, stdout=subprocess.PIPE, timeout=60):
    """chorus under an address-space cap of `cap_bytes`, with extra environment variables `env`."""
    import resource

    def cap():
        resource.setrlimit(resource.RLIMIT_AS, (cap_bytes, cap_bytes))
    return subprocess.run([CHORUS, *args], stdout=stdout, stderr=subprocess.PIPE, text=True, timeout=timeout,
                          preexec_fn=cap, env=dict(os.environ, **(env or {})))


class EveryReadBounded(unittest.TestCase):
    """Issue 42: every input read has a bound. Each case ends in exit 2 with a message naming the
    file or flag and the limit: no crash, no std::bad_alloc, no OOM, no hang."""

    SMALL = {"CHORUS_MAX_INPUT_BYTES": "1MiB"}  # devices read to 1 MiB + 1 byte, not 256 MiB

    def refused(self, r, *needles):
        self.assertEqual(r.returncode, 2, (r.stdout or "")[-500:] + r.stderr[-500:])
        for n in needles:
            self.assertIn(n, r.stderr)
        self.assertNotIn("internal error", r.stderr)

    def test_endless_devices_are_read_to_the_limit(self):
        self.refused(limited("sim", "collective", "--topology", "/dev/zero"),
                     "/dev/zero: network file goes on past the 256 MiB limit on input files", "CHORUS_MAX_INPUT_BYTES")
        for args in (["sim", "schedule", "/dev/urandom"], ["run", "schedule", "/dev/urandom"],
                     ["plan", "--evaluate", "/dev/zero"], ["sim", "workload", "--plan", "/dev/zero"]):
            with self.subTest(args=args):
                self.refused(limited(*args, env=self.SMALL), args[-1] + ": ", "goes on past the 1 MiB limit")
        r = limited("bench", "--sizes", "8", "--iters", "1", "--warmup", "0", "--backends", "auto",
                    env=dict(self.SMALL, CHORUS_RT_TUNING="/dev/urandom"))
        self.refused(r, "/dev/urandom: the tuning table goes on past the 1 MiB limit")

    def test_huge_regular_files_are_refused_by_their_size(self):
        with tempfile.TemporaryDirectory() as d:
            big = os.path.join(d, "big.json")
            with open(big, "wb") as f:
                f.truncate(1500 << 20)  # sparse: 1,572,864,000 bytes (1.46 GiB), none written
            size = "is 1.5 GiB (1572864000 bytes), more than the 256 MiB limit on input files"
            for args in (["sim", "collective", "--topology", big], ["sim", "schedule", big],
                         ["sim", "workload", "--workload", big], ["plan", "--evaluate", big],
                         ["sim", "jobs", big], ["tune", "--out", big, "--sizes", "8", "--iters", "1"]):
                with self.subTest(args=args):
                    r = limited(*args)
                    self.refused(r, big + ": ", size)
                    self.assertEqual(r.stdout, "")  # nothing measured or simulated first
            r = limited("sim", "schedule", big, env={"CHORUS_MAX_INPUT_BYTES": "2GiB"})
            self.assertNotIn("limit on input files", r.stderr)  # the variable raises the limit
            self.refused(limited("sim", "schedule", big, env={"CHORUS_MAX_INPUT_BYTES": "lots"}),
                         "CHORUS_MAX_INPUT_BYTES: 'lots' is not a size")
            self.refused(limited("sim", "schedule", d), d + ": cannot open the schedule file: Is a directory")

    def test_tune_writes_its_out_but_never_reads_a_device(self):  # read /dev/full whole: 1.7 GB in 15 s
        with open("/dev/null", "w") as null:
            r = limited("tune", "--out", "/dev/full", "--sizes", "8", "--iters", "1", "--warmup", "0", "--ops",
                        "allreduce", "--backends", "shm", "--backends-only", stdout=null)
        self.refused(r, "/dev/full: cannot write: No space left on device")

    def test_parent_cycle_in_an_execution_graph(self):  # grew to 2 GB in 25 s, then std::bad_alloc
        def node(i, parent, name):
            return {"id": i, "parent": parent, "tid": 1, "name": name, "inputs": [], "input_shapes": [],
                    "input_types": [], "outputs": [], "output_shapes": [], "output_types": []}
        graph = {"schema": "1.0.1", "nodes": [node(1, 1, "[pytorch|profiler|execution_graph|thread]"),
                                              node(2, 3, "aten::add"), node(3, 2, "aten::mul")]}
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "cycle.0.json")
            with open(path, "w") as f:
                json.dump(graph, f)
            r = limited("sim", "workload", "--workload", path, cap_bytes=1 << 30, timeout=20)
        self.refused(r, path + ": field parent: nodes 2 -> 3 -> 2 are each other's parents (a cycle)")

    def test_outputs_estimated_before_they_are_built(self):  # 4.3 GB, then abort (134) under a 2 GB limit
        # A million chunks of an all-reduce (2 phases) on 3 dimensions: 6,000,000 chunk stages.
        stages = "of 1000000 chunks (6000000 chunk stages) needs about"
        for flags, flag in ((["--schedules", "--json"], "--schedules"), (["--save-schedule", "s.json"], "--save-schedule"),
                            (["--trace", "t.json"], "--trace")):
            with self.subTest(flag=flag), tempfile.TemporaryDirectory() as d:
                r = limited("sim", "collective", "--topology", "3D-SW_SW_SW_homo", "--chunks", "1000000", *flags,
                            cap_bytes=2 << 30, timeout=20)
                self.refused(r, f"chorus: error: {flag}: ", stages, "this machine can give (available memory, ulimit -v)")
                self.assertEqual(os.listdir(d), [])
        with tempfile.TemporaryDirectory() as d:  # a saved schedule's chunks: 20,000 x 6 stages
            sched = os.path.join(d, "s.json")
            self.assertEqual(chorus("sim", "collective", "--chunks", "20000", "--save-schedule", sched).returncode, 0)
            self.assertEqual(limited("sim", "schedule", sched, "--json", cap_bytes=512 << 20).returncode, 0)
            r = limited("sim", "schedule", sched, "--trace", os.path.join(d, "t.json"), cap_bytes=512 << 20)
            self.refused(r, "chorus: error: --trace: ", "of 20000 chunks (120000 chunk stages)")

    def test_motif_sizes_need_data(self):  # --sizes 0 ran and reported 'element 0: 1 != 3' (exit 1)
        self.refused(chorus("run", "motifs", "--sizes", "0"),
                     "--sizes: '0' is less than one f32 element per rank (4 bytes on 1 rank(s))")
        self.refused(chorus("run", "motifs", "--sizes", "1KiB,3"), "--sizes: '3'")
        self.refused(chorus("run", "motifs", "--overlap-size", "0"), "--overlap-size: '0'")
        with tempfile.TemporaryDirectory() as d:  # 4 ranks: an all-to-all block of 4 bytes each, 16 in all
            r = chorus("reproduce", "syndicate-real", "-n", "4", "--sizes", "1KiB,8", "--out", d, "-q")
            self.refused(r, "--sizes: '8' is less than one f32 element per rank (16 bytes on 4 rank(s))")


class StandardOutput(unittest.TestCase):
    """A table written to a full standard output is an error (exit 2), in every command."""

    def test_full_stdout_is_an_error(self):
        for args in (["sim", "collective", "--chunks", "4"], ["sim", "collective", "--chunks", "4", "--json"],
                     ["sim", "topologies"], ["sim", "collective", "--help"], ["--version"]):
            with self.subTest(args=args), open("/dev/full", "w") as full:
                r = subprocess.run([CHORUS, *args], stdout=full, stderr=subprocess.PIPE, text=True, timeout=60)
            self.assertEqual(r.returncode, 2, (args, r.stderr))
            self.assertTrue(r.stderr.startswith("chorus: error: standard output: cannot write: "), r.stderr)
            self.assertEqual(r.stderr.count("\n"), 1, r.stderr)
            if args[0] == "sim":  # the failed flush's errno (--version's write fails earlier, inside CLI11)
                self.assertEqual(r.stderr, "chorus: error: standard output: cannot write: No space left on device\n")

    def test_failed_command_keeps_its_status_and_message(self):
        with open("/dev/full", "w") as full:
            r = subprocess.run([CHORUS, "sim", "collective", "--chunks", "0"], stdout=full, stderr=subprocess.PIPE,
                               text=True, timeout=60)
        self.assertEqual(r.returncode, 2)
        self.assertIn("--chunks", r.stderr)
        self.assertNotIn("standard output", r.stderr)


class Outputs(unittest.TestCase):
    def test_sim_collective_csv_is_the_json(self):
        args = ("sim", "collective", "--topology", "3D-FC_Ring_SW", "--size", "64MiB", "--chunks", "8")
        j = json.loads(chorus(*args, "--json").stdout)
        r = chorus(*args, "--csv", "-")
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = r.stdout.splitlines()  # the CSV, then the table
        rows = list(csv.DictReader([l for l in lines if l.count(",") == lines[0].count(",")]))
        self.assertEqual(len(rows), 3)  # a row per dimension
        for k, row in enumerate(rows):
            self.assertEqual(int(row["dim.index"]), k)
            self.assertEqual(float(row["time_ns"]), j["time_ns"])
            self.assertEqual(float(row["dim.bytes_per_npu"]), j["dims"][k]["bytes_per_npu"])

    def test_sim_workload_csv_is_the_json(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "w.csv")
            r = chorus("sim", "workload", "--workload", "resnet152", "--iterations", "1", "--csv", path)
            self.assertEqual(r.returncode, 0, r.stderr)
            j = json.loads(chorus("sim", "workload", "--workload", "resnet152", "--iterations", "1", "--json").stdout)
            with open(path) as f:
                rows = list(csv.DictReader(f))
        self.assertEqual(len(rows), 1)
        self.assertEqual(float(rows[0]["iteration_time_ns"]), j["iteration_time_ns"])
        self.assertEqual(int(rows[0]["nodes.comm"]), j["nodes"]["comm"])

    def test_bandwidth_is_GBps_in_json_and_network_yaml(self):
        # 3D-SW_SW_SW_homo: 800 Gb/s per NPU on each dimension = 100 GB/s, as the table prints.
        r = chorus("sim", "collective", "--topology", "3D-SW_SW_SW_homo", "--size", "1MiB", "--json")
        self.assertEqual(r.returncode, 0, r.stderr)
        dims = json.loads(r.stdout)["dims"]
        self.assertEqual([d["aggregate_bandwidth_GBps"] for d in dims], [100, 100, 100])
        self.assertEqual([d["aggregate_bandwidth_gbps"] for d in dims], [800, 800, 800])  # deprecated: Gb/s
        # A network YAML in GB/s: 25 GB/s x 2 links = 50 GB/s per NPU; the same network in Gb/s (200) runs the same.
        with tempfile.TemporaryDirectory() as d:
            times = []
            for key, value in (("link_bandwidth_GBps", 25), ("link_bandwidth_gbps", 200)):
                path = os.path.join(d, key + ".yaml")
                with open(path, "w") as f:
                    f.write(f"dims:\n  - {{kind: ring, size: 4, {key}: {value}, links_per_npu: 2, latency_ns: 500}}\n")
                r = chorus("sim", "collective", "--topology", path, "--size", "1MiB", "--json")
                self.assertEqual(r.returncode, 0, r.stderr)
                j = json.loads(r.stdout)
                self.assertEqual(j["dims"][0]["aggregate_bandwidth_GBps"], 50)
                times.append(j["time_ns"])
            self.assertEqual(times[0], times[1])
            # A fabric of 16 servers, degree 2, 100 Gb/s links: 200 Gb/s = 25 GB/s per server.
            e = os.path.join(d, "e.yaml")
            r = chorus("topo", "fabric", "--fabric", "expander", "--servers", "16", "--degree", "2", "--save", e)
            self.assertEqual(r.returncode, 0, r.stderr)
            r = chorus("sim", "workload", "--workload", "topoopt-bert", "--topology", e, "-i", "1")
            self.assertIn("(16 servers, 32 links, 25 GB/s per server)", r.stdout)
            j = json.loads(chorus("sim", "workload", "--workload", "topoopt-bert", "--topology", e, "-i", "1",
                                  "--memory-bandwidth", "900", "--json").stdout)
            self.assertEqual((j["fabric"]["server_GBps"], j["fabric"]["server_gbps"]), (25, 200))
            self.assertEqual(j["compute_model"]["memory_bandwidth_GBps"], 900)

    def test_tables_number_dimensions_as_json_and_print_GBps(self):
        r = chorus("sim", "collective", "--topology", "3D-SW_SW_SW_homo", "--size", "1GiB", "--schedules")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("BW GB/s", r.stdout)
        dims = [l.split() for l in r.stdout.splitlines() if re.match(r"\s+[0-9]\s+switch", l)]
        self.assertEqual([d[0] for d in dims], ["0", "1", "2"])
        self.assertEqual([d[3] for d in dims], ["100", "100", "100"])  # 800 Gb/s per NPU = 100 GB/s
        self.assertRegex(dims[0][4], r"^\d{1,3}(,\d{3})+$")  # digit grouping in tables
        self.assertIn("chunk   0: RS0", r.stdout)

    def test_topo_cost_columns_add_up(self):
        r = chorus("topo", "cost", "--servers", "128", "--degree", "4", "--bandwidth", "100")
        self.assertEqual(r.returncode, 0, r.stderr)
        j = {x["fabric"]: x for x in json.loads(chorus("topo", "cost", "--servers", "128", "--degree", "4",
                                                        "--bandwidth", "100", "--json").stdout)}
        rows = [l.split() for l in r.stdout.splitlines()[1:] if l.split() and l.split()[0] in j]
        self.assertEqual(len(rows), len(j))
        for f, inter, nics, total, *_ in rows:
            num = lambda t: float(t.replace(",", ""))  # noqa: E731
            self.assertEqual(num(inter) + num(nics), num(total), f)
            self.assertEqual(num(inter), round(j[f]["cost_usd"]), f)
            self.assertEqual(num(nics), round(j[f]["nic_usd"]), f)

    def test_dash_is_stdout(self):
        r = chorus("sim", "collective", "--size", "1MiB", "--chunks", "2", "--json", "--trace", "-")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertFalse(os.path.exists("-"))
        self.assertIn('"traceEvents"', r.stdout)

    def test_unwritable_out_refused_before_work(self):  # /proc takes no directories, even root's
        r = chorus("reproduce", "themis", "--out", "/proc/chorus-out", "-q")
        self.assertEqual(r.returncode, 2)
        self.assertIn("--out", r.stderr)
        self.assertNotIn("Headline", r.stdout)

    def test_out_that_is_a_file_refused_before_work(self):
        with tempfile.NamedTemporaryFile() as f:
            r = chorus("reproduce", "themis", "--out", f.name, "-q")
            self.assertEqual(r.returncode, 2, r.stdout)
            self.assertIn("--out", r.stderr)
            self.assertEqual(r.stdout, "")  # nothing computed

    def test_enforce_order_states_its_verdict(self):
        with tempfile.TemporaryDirectory() as d:
            sched = os.path.join(d, "s.json")
            self.assertEqual(chorus("sim", "collective", "--size", "4MiB", "--chunks", "4", "--scheduler", "themis-scf",
                                    "--save-schedule", sched).returncode, 0)
            r = chorus("sim", "schedule", sched, "--enforce-order")
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("it does not deadlock", r.stdout)


class BenchSizes(unittest.TestCase):
    """nccl-tests' -b/-e/-f beside --sizes: a bad combination exits 2 naming the flag, before any
    rank starts (the sweep itself is checked on real ranks by rt_bench_nccl)."""

    def check(self, args, *expected):
        r = chorus(*args)
        self.assertEqual(r.returncode, 2, (args, r.stdout, r.stderr))
        for e in expected:
            self.assertIn(e, r.stderr, args)
        self.assertEqual(r.stdout, "", args)  # nothing measured
        self.assertNotIn("internal error", r.stderr)

    def test_bad_sweeps(self):
        self.check(["bench", "-b", "8KiB", "-e", "4KiB"], "-b/--begin: 8KiB is larger than -e/--end (4KiB)")
        self.check(["tune", "--begin", "2MiB", "--end", "1MiB"], "-b/--begin: 2MiB is larger than -e/--end (1MiB)")
        self.check(["bench", "-b", "8", "-e", "1KiB", "-f", "1"], "-f/--factor: must be larger than 1, not 1")
        self.check(["bench", "-b", "8", "-e", "1KiB", "-f", "-4"], "-f/--factor: must be larger than 1, not -4")
        self.check(["bench", "-b", "8", "-e", "1KiB", "-f", "1.5x"], "-f/--factor: '1.5x' is not a number")
        # A factor as close to 1 as this makes thousands of sizes (1.0001^k from 1 B to 1 GiB).
        self.check(["bench", "-b", "1", "-e", "1GiB", "-f", "1.0001"], "-f/--factor: 1.0001 makes more than 1000 sizes")
        self.check(["bench", "-b", "0", "-e", "1KiB"], "-b/--begin: must be at least 1 byte")
        self.check(["bench", "-b", "eight", "-e", "1KiB"], "-b/--begin")
        self.check(["bench", "-b", "8", "-e", "1KiB?"], "-e/--end")

    def test_sweep_flags_go_together_and_exclude_sizes(self):
        self.check(["bench", "--sizes", "4KiB", "-b", "8", "-e", "1KiB"], "--sizes", "--begin")
        self.check(["bench", "--sizes", "4KiB", "-f", "4"], "--sizes", "--factor")
        self.check(["bench", "-b", "8"], "--begin", "--end")
        self.check(["bench", "-e", "1KiB"], "--end", "--begin")
        self.check(["bench", "-f", "4"], "--factor", "--begin")


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


class SimWorkload(unittest.TestCase):
    KEYS = ("iteration_time_ns", "compute_ns", "forward_compute_ns", "backward_compute_ns", "exposed_comm_ns",
            "exposed_dp_comm_ns", "exposed_mp_comm_ns", "avg_bw_utilization")

    def run_json(self, *args):
        r = chorus("sim", "workload", "--json", *args)
        self.assertEqual(r.returncode, 0, r.stderr)
        return json.loads(r.stdout)

    def test_parallel_layout(self):
        # 3D-SW_SW_SW_homo is 16 x 8 x 8 = 1024 NPUs. ResNet-152 is data parallel over all of it.
        r = chorus("sim", "workload", "--workload", "resnet152", "--iterations", "1")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("\n  parallel layout: TP 1 (no dimension) x DP 1024 (dims 0, 1, 2) x PP 1 (no dimension)\n",
                      r.stdout)
        # Transformer-1T's tensor-parallel group is "up to 128 NPUs" = 16 x 8, data parallel the last 8.
        j = self.run_json("--workload", "transformer-1t", "--iterations", "1")
        self.assertEqual(j["layout"], {"tp": {"npus": 128, "dims": [0, 1]}, "dp": {"npus": 8, "dims": [2]},
                                       "pp": {"npus": 1, "dims": []}})
        # The same layout spelled out is the same run.
        explicit = self.run_json("--workload", "transformer-1t", "--iterations", "1", "--tp", "128", "--dp", "8")
        self.assertEqual(explicit["iteration_time_ns"], j["iteration_time_ns"])
        # Megatron's order: tensor innermost (16), data (8), pipeline outermost (8).
        j = self.run_json("--workload", "transformer-1t", "--iterations", "1", "--tp", "16", "--dp", "8", "--pp", "8",
                          "--microbatches", "8")
        self.assertEqual(j["layout"], {"tp": {"npus": 16, "dims": [0]}, "dp": {"npus": 8, "dims": [1]},
                                       "pp": {"npus": 8, "dims": [2]}})
        self.assertEqual(len(j["pipeline_stages"]), 8)
        # Without --dp, data parallel takes what remains: 1024 / (16 x 1) = 64 over dims 1, 2.
        j = self.run_json("--workload", "transformer-1t", "--iterations", "1", "--tp", "16")
        self.assertEqual(j["layout"]["dp"], {"npus": 64, "dims": [1, 2]})
        # The hybrid DLRM and the MoE say where their all-to-alls go.
        r = chorus("sim", "workload", "--workload", "moe", "--iterations", "1")
        self.assertIn("expert all-to-all over 128 NPUs (dims 0, 1)", r.stdout)
        r = chorus("sim", "workload", "--workload", "dlrm", "--iterations", "1", "--dp", "1024")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("embedding tables sharded over all NPUs", r.stdout)

    def test_parallel_layout_errors_name_the_flag(self):
        eg = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "pytorch_eg", "ddp.0.json")
        for args, needles in (
                (["--workload", "transformer-1t", "--tp", "8"],
                 ["--tp: 8 NPUs are no product of the network's first dimensions (16 x 8 x 8)", "1, 16, 128, 1024"]),
                (["--workload", "transformer-1t", "--tp", "16", "--dp", "16"],
                 ["--dp: tp 16 x dp 16 x pp 1 = 256 NPUs, but the network has 1024", "dp is 64"]),
                (["--workload", "resnet152", "--dp", "512"], ["--dp: tp 1 x dp 512 x pp 1 = 512 NPUs"]),
                (["--workload", "transformer-1t", "--tp", "16", "--pp", "16"], ["--pp: 16 pipeline stages"]),
                (["--workload", "resnet152", "--tp", "16"], ["--tp: resnet152 takes no tensor parallelism"]),
                (["--workload", "dlrm", "--tp", "16"], ["--tp: dlrm takes no tensor parallelism", "embedding tables"]),
                (["--workload", "moe", "--tp", "16"], ["--tp: moe takes no tensor parallelism", "expert"]),
                (["--workload", eg, "--dp", "2"], ["--dp: applies to model zoo names and workload YAML files"]),
                (["--workload", "transformer-1t", "--tp", "0"], ["--tp"])):
            with self.subTest(args=args):
                r = chorus("sim", "workload", "-i", "1", *args)
                self.assertEqual(r.returncode, 2, r.stdout[-300:] + r.stderr)
                for n in needles:
                    self.assertIn(n, r.stderr)

    def test_workload_yaml_layout_and_groups_larger_than_the_network(self):
        net = "dims:\n  - {kind: ring, size: 2, link_bandwidth_gbps: 100, links_per_npu: 1, latency_ns: 500}\n" * 1
        net += "  - {kind: ring, size: 2, link_bandwidth_gbps: 100, links_per_npu: 1, latency_ns: 500}\n"  # 2 x 2
        layers = "layers:\n  - {forward_flops: 1.0e9, params: 1000, output_elements: 100, mp_all_reduce: true}\n"
        with tempfile.TemporaryDirectory() as d:
            n, w = os.path.join(d, "four.yaml"), os.path.join(d, "w.yaml")
            with open(n, "w") as f:
                f.write(net)
            with open(w, "w") as f:
                f.write("batch_per_npu: 1\nparallelism:\n  mp_npus: 8\n" + layers)
            r = chorus("sim", "workload", "--workload", w, "--topology", n, "-i", "1")
            self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
            self.assertIn(w + ":3: field 'parallelism.mp_npus': a group of 8 NPUs, but the network (2x2) has 4",
                          r.stderr)
            with open(w, "w") as f:
                f.write("batch_per_npu: 1\nparallelism:\n  tp: 2\n  dp: 2\n" + layers)
            r = chorus("sim", "workload", "--workload", w, "--topology", n, "-i", "1")
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("parallel layout: TP 2 (dim 0) x DP 2 (dim 1) x PP 1 (no dimension)", r.stdout)
            r = chorus("sim", "workload", "--workload", w, "--topology", n, "-i", "1", "--pp", "2")
            self.assertEqual(r.returncode, 2, r.stdout + r.stderr)  # the file's dp 2 x the flag's pp 2 x tp 2 = 8
            self.assertIn(w + ":4: field 'parallelism.dp': tp 2 x dp 2 x pp 2 = 8 NPUs, but the network has 4",
                          r.stderr)

    def test_world_and_compute_warnings(self):
        here = os.path.dirname(os.path.abspath(__file__))
        eg = os.path.join(here, "..", "data", "pytorch_eg", "ddp.0.json")  # with ddp.1.json: 2 ranks
        r = chorus("sim", "workload", "--workload", eg, "-i", "1")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stderr.count("warning:"), 1, r.stderr)
        self.assertIn("chorus: warning: simulating a 2-rank PyTorch execution graph on 1024 NPUs (16x8x8)", r.stderr)
        et = os.path.join(here, "..", "data", "chakra", "dp_step.0.et")  # with dp_step.1.et: 2 ranks
        r = chorus("sim", "workload", "--workload", et, "-i", "1")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("chorus: warning: simulating a 2-rank Chakra trace on 1024 NPUs", r.stderr)
        with tempfile.TemporaryDirectory() as d:
            pair = os.path.join(d, "pair.yaml")
            with open(pair, "w") as f:
                f.write("dims:\n  - {kind: switch, size: 2, link_bandwidth_gbps: 800, links_per_npu: 1, latency_ns: 700}\n")
            r = chorus("sim", "workload", "--workload", eg, "--topology", pair, "-i", "1")
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertNotIn("warning", r.stderr)  # 2 ranks on 2 NPUs
            # A graph whose operators have no FLOPs chorus counts (adds, no matmul): compute ~ 0, said so.
            def node(i, parent, name):
                return {"id": i, "parent": parent, "tid": 1, "name": name, "inputs": [], "input_shapes": [],
                        "input_types": [], "outputs": [], "output_shapes": [], "output_types": []}
            graph = {"schema": "1.0.1", "nodes": [node(1, 1, "[pytorch|profiler|execution_graph|thread]"),
                                                  node(2, 1, "aten::add"), node(3, 1, "aten::mul")]}
            flat = os.path.join(d, "flat.json")
            with open(flat, "w") as f:
                json.dump(graph, f)
            r = chorus("sim", "workload", "--workload", flat, "-i", "1")
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("chorus: warning: " + flat + ": no operator has FLOPs", r.stderr)
            self.assertIn("--profile-trace", r.stderr)
            self.assertNotIn("simulating a", r.stderr)  # one file, not named per rank: its world is unknown
        r = chorus("sim", "workload", "--workload", eg, "-i", "1", "--topology", "3D-SW_SW_SW_homo")
        self.assertNotIn("no operator has FLOPs", r.stderr)  # ddp.0.json has matmuls

    def test_json_keys_and_split(self):
        j = self.run_json("--workload", "transformer-1t", "--topology", "3D-SW_SW_SW_homo", "--scheduler", "baseline",
                          "--iterations", "1")
        for key in self.KEYS:
            self.assertIn(key, j)
        self.assertAlmostEqual(j["compute_ns"] + j["exposed_comm_ns"], j["iteration_time_ns"], delta=1e-6 * j["iteration_time_ns"])
        self.assertGreater(j["exposed_mp_comm_ns"], 0)
        self.assertEqual(j["iterations"], 1)

    def test_schedulers_order_and_determinism(self):
        t = {s: self.run_json("--workload", "transformer-1t", "--scheduler", s, "--iterations", "1")["iteration_time_ns"]
             for s in ("baseline", "themis-scf", "ideal")}
        self.assertLessEqual(t["ideal"], t["themis-scf"])
        self.assertLess(t["themis-scf"], t["baseline"])
        a = chorus("sim", "workload", "--json", "--workload", "resnet152", "--iterations", "1")
        b = chorus("sim", "workload", "--json", "--workload", "resnet152", "--iterations", "1")
        self.assertEqual(a.stdout, b.stdout)

    def test_trace(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "t.json")
            r = chorus("sim", "workload", "--workload", "resnet152", "--iterations", "1", "--trace", path)
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(path) as f:
                events = json.load(f)["traceEvents"]
            cats = {e.get("cat") for e in events}
            for cat in ("forward", "weight_gradient", "dp", "RS", "AG"):
                self.assertIn(cat, cats)

    def test_yaml_workload_file(self):
        here = os.path.dirname(os.path.abspath(__file__))
        path = os.path.join(here, "..", "data", "workloads", "two_layers.yaml")
        j = self.run_json("--workload", path, "--iterations", "1")
        self.assertEqual(j["workload"], "two-layers")
        self.assertEqual(j["forward_compute_ns"], 3000)
        with tempfile.TemporaryDirectory() as d:
            bad = os.path.join(d, "bad.yaml")
            with open(bad, "w") as f:
                f.write("batch_per_npu: 1\nlayers:\n  - {forward_flops: 1, parms: 3}\n")
            r = chorus("sim", "workload", "--workload", bad)
            self.assertEqual(r.returncode, 2)
            self.assertIn("bad.yaml:3", r.stderr)
            self.assertIn("parms", r.stderr)

    def test_astra_text_workload_file(self):
        here = os.path.dirname(os.path.abspath(__file__))
        path = os.path.join(here, "..", "data", "workloads", "astra_data.txt")
        j = self.run_json("--workload", path, "--iterations", "1", "--ns-per-cycle", "2")
        self.assertEqual(j["forward_compute_ns"], 6000)  # 3000 cycles x 2 ns
        with tempfile.TemporaryDirectory() as d:
            bad = os.path.join(d, "bad.txt")
            with open(bad, "w") as f:
                f.write("DATA\n1\nl0 -1 1 NONE 0 1 NONE 0 1 ALLREDUCE\n")
            r = chorus("sim", "workload", "--workload", bad)
            self.assertEqual(r.returncode, 2)
            self.assertIn("bad.txt:3", r.stderr)

    def test_chakra_trace(self):
        here = os.path.dirname(os.path.abspath(__file__))
        data = os.path.join(here, "..", "data", "chakra")
        # Compute durations come from the trace (duration_micros), whatever the topology:
        # forward 1 + 2 us, back-propagation 2 + 2 + 1 us, optimizer 1 us.
        j = self.run_json("--workload", os.path.join(data, "dp_step.0.et"), "--iterations", "1")
        self.assertEqual(j["workload"], "dp_step")
        self.assertEqual(j["forward_compute_ns"], 3000)
        self.assertEqual(j["backward_compute_ns"], 5000)
        self.assertEqual(j["optimizer_compute_ns"], 1000)
        self.assertEqual(j["nodes"], {"compute": 6, "comm": 2})
        j = self.run_json("--workload", os.path.join(data, "dp_step"), "--rank", "1", "--iterations", "2")
        self.assertEqual(j["nodes"], {"compute": 12, "comm": 4})
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(data, "dp_step.0.et"), "rb") as f:
                good = f.read()
            bad = os.path.join(d, "cut.0.et")
            with open(bad, "wb") as f:
                f.write(good[:300])
            r = chorus("sim", "workload", "--workload", bad)
            self.assertEqual(r.returncode, 2)
            self.assertIn("cut.0.et: byte 219", r.stderr)
            self.assertIn("runs past the end", r.stderr)
        r = chorus("sim", "workload", "--workload", os.path.join(data, "dp_step.0.et"), "--rank", "1")
        self.assertEqual(r.returncode, 2)
        self.assertIn("rank 0", r.stderr)
        # Send/recv import as point-to-point nodes. On 3D-SW_SW_SW_homo (dimension 0: switch, 800
        # Gb/s, 700 ns) each 4096-byte transfer takes 700 + 4096 * 8 / 800 = 740.96 ns: the receive
        # (from t = 0) ends before the 1 us forward, the send (after it) hides under the 2 us input
        # gradient, so an iteration is the 3 us of compute and the transfers are busy 1481.92 ns.
        j = self.run_json("--workload", os.path.join(data, "p2p_step.0.et"), "--iterations", "1")
        self.assertEqual(j["nodes"], {"compute": 2, "comm": 2})
        self.assertAlmostEqual(j["iteration_time_ns"], 3000)
        self.assertAlmostEqual(j["exposed_comm_ns"], 0)
        self.assertAlmostEqual(j["comm_active_ns"], 2 * 740.96, places=6)

    def test_export_chakra_round_trip_and_errors(self):
        # A zoo model exported, one file per rank (a 2 x 4 network: 8), read back by sim workload
        # with the same iteration time as the model itself.
        net = ("dims:\n  - {kind: ring, size: 2, link_bandwidth_gbps: 100, links_per_npu: 2, latency_ns: 500}\n"
               "  - {kind: switch, size: 4, link_bandwidth_gbps: 100, links_per_npu: 1, latency_ns: 500}\n")
        with tempfile.TemporaryDirectory() as d:
            topo = os.path.join(d, "net.yaml")
            with open(topo, "w") as f:
                f.write(net)
            out = os.path.join(d, "et")
            r = chorus("export", "--chakra", "--workload", "gnmt", "--topology", topo, "--out", out)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(sorted(os.listdir(out)), sorted(f"gnmt.{k}.et" for k in range(8)))
            a = self.run_json("--workload", "gnmt", "--topology", topo, "--iterations", "1")
            b = self.run_json("--workload", os.path.join(out, "gnmt.5.et"), "--topology", topo, "--iterations", "1")
            self.assertEqual(a["iteration_time_ns"], b["iteration_time_ns"])
            self.assertEqual(a["exposed_dp_comm_ns"], b["exposed_dp_comm_ns"])
            # What the format cannot hold, or no format: exit 2 with the reason.
            for args, needle in ((["--workload", "resnet152"], "--chakra is required"),
                                 (["--chakra", "--workload", "transformer-1t", "--name", "a/b"], "--name"),
                                 (["--chakra", "--workload", "nosuchmodel"], "nosuchmodel")):
                r = chorus("export", *args, "--topology", topo, "--out", out)
                self.assertEqual(r.returncode, 2, (args, r.stderr))
                self.assertIn(needle, r.stderr)
                self.assertNotIn("internal error", r.stderr)

    def test_astra_sim_example_files(self):
        here = os.path.dirname(os.path.abspath(__file__))
        data = os.path.join(here, "..", "data", "workloads", "astra-sim-1.0")
        for name in sorted(os.listdir(data)):
            if not name.endswith(".txt"):
                continue
            j = self.run_json("--workload", os.path.join(data, name), "--topology", "4D-Ring_SW_SW_SW", "--iterations", "1")
            self.assertGreater(j["iteration_time_ns"], 0, name)
        # MICRO: one all-reduce of 1 MiB, exactly sim collective's request.
        j = self.run_json("--workload", os.path.join(data, "microAllReduce.txt"), "--iterations", "1",
                          "--scheduler", "baseline", "--chunks", "1")
        self.assertAlmostEqual(j["iteration_time_ns"], 40951.04, places=6)

    def test_pytorch_execution_graph(self):
        here = os.path.dirname(os.path.abspath(__file__))
        path = os.path.join(here, "..", "data", "pytorch_eg", "ddp.0.json")
        j = self.run_json("--workload", path, "--iterations", "2")
        self.assertEqual(j["nodes"], {"compute": 54, "comm": 2})  # 27 operators and the bucket's all-reduce, twice
        with tempfile.TemporaryDirectory() as d:
            cut = os.path.join(d, "cut.json")
            with open(path) as f, open(cut, "w") as g:
                g.write(f.read()[:5000])
            r = chorus("sim", "workload", "--workload", cut)
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertIn("cut.json: not JSON", r.stderr)
            # --check-ranks: every rank's graph must issue the same collectives.
            for rank, name in ((0, "ddp.0.json"), (1, "alltoall.1.json")):
                with open(os.path.join(here, "..", "data", "pytorch_eg", name)) as f, \
                        open(os.path.join(d, f"g.{rank}.json"), "w") as g:
                    g.write(f.read())
            r = chorus("sim", "workload", "--workload", os.path.join(d, "g.0.json"), "--check-ranks")
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertIn("g.1.json (rank 1): collective 1 ('gloo:all_to_all #26'): field op", r.stderr)
        self.assertEqual(chorus("sim", "workload", "--workload", path, "--check-ranks", "-i", "1").returncode, 0)

    def test_pytorch_collective_dims(self):
        # --collective-dims: the dimensions a collective's group spans (the graph does not record
        # them). ddp.0.json has one collective, the bucket's all-reduce.
        path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "pytorch_eg", "ddp.0.json")
        r = chorus("sim", "workload", "--json", "--workload", path, "--collective-dims", "1=0", "-i", "1")
        self.assertEqual(r.returncode, 0, r.stderr)
        for value, needle in (("2=0", "collective 2 (collective_dims): the graph has 1 collective"),
                              ("1=7", "in 0..2, got 7"), ("one=0", "--collective-dims: 'one=0': expected")):
            r = chorus("sim", "workload", "--workload", path, "--collective-dims", value)
            self.assertEqual(r.returncode, 2, (value, r.stderr))
            self.assertIn(needle, r.stderr)
        r = chorus("sim", "workload", "--workload", "resnet152", "--collective-dims", "1=0")
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("--collective-dims: applies to PyTorch execution graphs only", r.stderr)

    def test_pytorch_profiler_trace(self):
        # --profile-trace: the operators take the durations of the torch profiler trace recorded
        # around the same window. alltoall.0.trace.json by hand: linear 281 us, empty_like 42 us,
        # linear 270 us; the all-to-all of 2048 bytes after the first linear is done well within
        # empty_like's 42 us, so the second linear starts at 323 us: 593 us a step.
        data = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "pytorch_eg")
        graph, trace = os.path.join(data, "alltoall.0.json"), os.path.join(data, "alltoall.0.trace.json")
        r = chorus("sim", "workload", "--json", "--workload", graph, "--profile-trace", trace, "-i", "2", "--check-ranks")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertAlmostEqual(json.loads(r.stdout)["iteration_time_ns"], 593000, places=3)
        self.assertIn("3 of 3 compute operators took their durations from the trace", r.stderr)
        # Another graph's trace, a missing file, a workload that is not an execution graph: exit 2.
        for args, needle in ((["--workload", graph, "--profile-trace", os.path.join(data, "ddp.0.trace.json")],
                              "ddp.0.trace.json: no top-level event matches"),
                             (["--workload", graph, "--profile-trace", os.path.join(data, "none.trace.json")],
                              "none.trace.json"),
                             (["--workload", "resnet152", "--profile-trace", trace], "--profile-trace")):
            r = chorus("sim", "workload", *args)
            self.assertEqual(r.returncode, 2, (args, r.stderr))
            self.assertIn(needle, r.stderr)
            self.assertNotIn("internal error", r.stderr)

    def test_pipeline(self):
        # ResNet-152 in 8 stages over the last dimension of 16 x 8 x 8 (data parallel over the
        # 16 x 8 before it): every stage's compute and waits add up to the iteration, and the
        # means are the stages' means.
        for schedule in ("1f1b", "gpipe"):
            j = self.run_json("--workload", "resnet152", "--pp", "8", "--pipeline-schedule", schedule, "--iterations", "1")
            stages = j["pipeline_stages"]
            self.assertEqual(len(stages), 8)
            for st in stages:
                total = st["compute_ns"] + st["exposed_dp_comm_ns"] + st["exposed_mp_comm_ns"] + st["exposed_pp_comm_ns"]
                self.assertAlmostEqual(total, j["iteration_time_ns"], delta=1e-6 * j["iteration_time_ns"])
            self.assertAlmostEqual(sum(st["exposed_pp_comm_ns"] for st in stages) / 8, j["exposed_pp_comm_ns"],
                                   delta=1e-6 * j["iteration_time_ns"])
            self.assertGreater(j["exposed_pp_comm_ns"], 0)
        # The trace: a compute track and a dimensions process per stage, the transfers as "pp".
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "pp.json")
            r = chorus("sim", "workload", "--workload", "resnet152", "--pp", "8", "--iterations", "1", "--trace", path)
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(path) as f:
                events = json.load(f)["traceEvents"]
        names = {e["args"]["name"] for e in events if e.get("ph") == "M"}
        for s in range(8):
            self.assertIn(f"stage {s} compute stream", names)
            self.assertIn(f"stage {s} dimensions", names)
        self.assertEqual({e["tid"] for e in events if e.get("ph") == "X" and e.get("pid") == 0}, set(range(8)))
        self.assertIn("pp", {e.get("cat") for e in events})
        self.assertNotIn("pipeline_stages", self.run_json("--workload", "resnet152", "--iterations", "1"))
        for args, needle in ((["--pp", "3"], "--pp"), (["--pp", "8", "--workload", "dlrm"], "embedding"),
                             (["--pipeline-schedule", "zb"], "--pipeline-schedule"), (["--microbatches", "-2"], "--microbatches")):
            r = chorus("sim", "workload", *args)
            self.assertEqual(r.returncode, 2, (args, r.stderr))
            self.assertIn(needle, r.stderr, args)

    def test_bad_input_exit_2(self):
        cases = [
            (["--workload", "resnet125"], "resnet152"),
            (["--topology", "nope"], "nope"),
            (["--scheduler", "themis-lifo"], "themis-lifo"),
            (["--iterations", "0"], "--iterations"),
            (["--chunks", "0"], "--chunks"),
            (["--bucket", "lots"], "--bucket"),
            (["--peak-tflops", "0"], "--peak-tflops"),
        ]
        for args, needle in cases:
            r = chorus("sim", "workload", *args)
            self.assertEqual(r.returncode, 2, (args, r.stdout, r.stderr))
            self.assertIn(needle, r.stderr, args)


def assert_svg(test, path):
    """An SVG document (matplotlib's, with an XML prolog) whose root is <svg>."""
    test.assertEqual(ET.parse(path).getroot().tag, "{http://www.w3.org/2000/svg}svg", path)


class Topo(unittest.TestCase):
    def test_totient_json_has_the_papers_rings(self):
        r = chorus("topo", "totient", "--n", "12", "--json")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(json.loads(r.stdout), {"n": 12, "generators": [1, 5, 7, 11]})

    def test_routes_json(self):
        r = chorus("topo", "routes", "--n", "12", "--coins", "5,1", "--json")
        self.assertEqual(r.returncode, 0, r.stderr)
        j = json.loads(r.stdout)
        self.assertEqual(j["coins"], [1, 5])
        by_distance = {x["distance"]: x for x in j["routes"]}
        self.assertEqual(by_distance[10]["hops"], 2)  # 5 + 5, by hand
        self.assertEqual(by_distance[10]["coins"], [5, 5])

    def test_bad_input_exits_2_naming_the_option(self):
        for args, needle in ((["totient", "--n", "0"], "--n"), (["routes", "--coins", "1,x"], "--coins"),
                             (["routes", "--n", "12", "--coins", "12"], "coin 12")):
            r = chorus("topo", *args)
            self.assertEqual(r.returncode, 2, (args, r.stderr))
            self.assertIn(needle, r.stderr)

    def test_find_dlrm_example_json(self):
        r = chorus("topo", "find", "--workload", "dlrm-example", "--degree", "6", "--json")
        self.assertEqual(r.returncode, 0, r.stderr)
        j = json.loads(r.stdout)
        out, into = [0] * 16, [0] * 16
        for u, v in j["edges"]:
            out[u] += 1
            into[v] += 1
        self.assertLessEqual(max(out + into), 6)
        edges = {tuple(e) for e in j["edges"]}
        self.assertEqual(len(j["routes"]), 108)  # 4 tables x 15 servers x 2 directions, 12 pairs twice
        self.assertEqual(len(j["mp_hops"]), len(j["routes"]))
        for route, hops in zip(j["routes"], j["mp_hops"]):
            path = route["path"]
            self.assertEqual((path[0], path[-1]), (route["src"], route["dst"]))
            self.assertEqual(hops, len(path) - 1)
            for a, b in zip(path, path[1:]):
                self.assertIn((a, b), edges)
        direct = sum(x["bytes"] for x, h in zip(j["routes"], j["mp_hops"]) if h == 1)
        self.assertAlmostEqual(j["mp_direct_bytes"], direct)
        self.assertAlmostEqual(j["mp_satisfied_fraction"], direct / 3.84e9)

    def test_find_saves_the_topology_as_a_fabric(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "t.yaml")
            r = chorus("topo", "find", "--workload", "dlrm-example", "--degree", "6", "--save", path, "--bandwidth", "25", "--json")
            self.assertEqual(r.returncode, 0, r.stderr)
            edges = sorted(tuple(e) for e in json.loads(r.stdout)["edges"])
            with open(path) as f:
                text = f.read()
            self.assertIn("fabric", text)
            text, _, rings = text.partition("  rings:")
            # The AllReduce group's 6 rings (p = 1, 3, 5, 9, 11, 13 over the 16 servers) follow the links.
            self.assertEqual(rings.count("orders:"), 1)
            self.assertEqual(rings.count("- ["), 6)
            self.assertIn("servers: 16", text)
            # One link line per directed edge the finder returned, all at 25 Gb/s.
            links = sorted(tuple(int(x) for x in l.strip()[3:-1].split(",")) for l in text.splitlines() if l.strip().startswith("- ["))
            self.assertEqual(links, edges)
            self.assertIn("link_gbps: 25", text)
            r = chorus("topo", "find", "--workload", "dlrm-example", "--degree", "6", "--save", path, "--bandwidth", "0")
            self.assertEqual(r.returncode, 2)
            self.assertIn("--bandwidth", r.stderr)

    def test_fabric_then_sim_workload_on_it(self):
        with tempfile.TemporaryDirectory() as d:
            e = os.path.join(d, "e.yaml")
            r = chorus("topo", "fabric", "--fabric", "expander", "--servers", "8", "--degree", "2", "--save", e)
            self.assertEqual(r.returncode, 0, r.stderr)
            t = os.path.join(d, "t.yaml")
            r = chorus("topo", "find", "--workload", "topoopt-dlrm", "--servers", "8", "--degree", "2", "--save", t)
            self.assertEqual(r.returncode, 0, r.stderr)
            csv_path = os.path.join(d, "m.csv")
            for fabric in (e, t):
                r = chorus("sim", "workload", "--workload", "topoopt-dlrm", "--topology", fabric, "--iterations", "1", "--json",
                           "--traffic-csv", csv_path)
                self.assertEqual(r.returncode, 0, r.stderr)
                j = json.loads(r.stdout)
                self.assertEqual(j["scheduler"], "flow-level")
                self.assertEqual(j["fabric"]["servers"], 8)
                self.assertGreater(j["flow_model"]["flows"], 0)
                self.assertAlmostEqual(j["iteration_time_ns"], j["compute_ns"] + j["exposed_comm_ns"], delta=1e-6 * j["iteration_time_ns"])
                with open(csv_path) as f:
                    matrix = list(csv.reader(f))
                self.assertEqual(len(matrix), 9)  # header + 8 servers
            for args, needle in ((["--scheduler", "themis-scf"], "--scheduler"), (["--chunks", "4"], "--chunks")):
                r = chorus("sim", "workload", "--workload", "topoopt-dlrm", "--topology", e, *args)
                self.assertEqual(r.returncode, 2, (args, r.stderr))
                self.assertIn(needle, r.stderr)
            r = chorus("topo", "fabric", "--fabric", "expander", "--servers", "16", "--degree", "2", "--save", e)
            self.assertEqual(r.returncode, 0, r.stderr)
            r = chorus("sim", "workload", "--workload", "topoopt-bert", "--topology", e, "--iterations", "1")
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(e, "a") as f:
                f.write("  rings:\n    - {servers: [0, 1], orders: [[0, 2]]}\n")
            r = chorus("sim", "workload", "--workload", "topoopt-bert", "--topology", e)
            self.assertEqual(r.returncode, 2)
            self.assertIn("fabric.rings[0].orders[0]", r.stderr)
            r = chorus("topo", "fabric", "--fabric", "clos", "--save", e)
            self.assertEqual(r.returncode, 2)
            self.assertIn("--fabric", r.stderr)

    def test_cost_json_and_bad_input(self):
        r = chorus("topo", "cost", "--fabric", "topoopt-oneshot", "--servers", "16", "--degree", "2",
                   "--bandwidth", "10", "--json")
        self.assertEqual(r.returncode, 0, r.stderr)
        [row] = json.loads(r.stdout)
        # 32 interfaces x (transceiver 20 + 1x2 switch 25 + 2 patch-panel ports 200 + 2 fibres 300)
        self.assertAlmostEqual(row["cost_usd"], 32 * 545)
        self.assertEqual(row["parts"]["patch_panel_ports"], 64)
        for args, needle in ((["--fabric", "clos"], "--fabric"), (["--bandwidth", "50"], "--bandwidth"),
                             (["--servers", "1"], "--servers"), (["--switch-radix", "7"], "--switch-radix")):
            r = chorus("topo", "cost", *args)
            self.assertEqual(r.returncode, 2, (args, r.stderr))
            self.assertIn(needle, r.stderr)

    def test_find_bad_traffic_names_the_field(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "t.json")
            for text, needle in (('{"mp": [[0, 16, 5]]}', "mp[0][1]"),
                                 ('{"allreduce_groups": [{"servers": [1, 1], "bytes": 3}]}', "servers[1]"),
                                 ('{"mp": [[0, 1, 5]', "invalid JSON")):
                with open(path, "w") as f:
                    f.write(text)
                r = chorus("topo", "find", "--traffic", path, "--servers", "16")
                self.assertEqual(r.returncode, 2, (text, r.stderr))
                self.assertIn(needle, r.stderr)
        for args, needle in ((["--workload", "dlrm-example", "--servers", "8"], "--servers"),
                             (["--workload", "nope"], "nope"), ([], "--workload"),
                             (["--workload", "dlrm-example", "--degree", "0"], "--degree")):
            r = chorus("topo", "find", *args)
            self.assertEqual(r.returncode, 2, (args, r.stderr))
            self.assertIn(needle, r.stderr)


    def test_optimize_alternates_and_saves(self):
        # TopoOpt Sec. 3.2 on a small DLRM job: the job's own strategy, round 0 (the sequential
        # approach), the alternating rounds, the best.
        with tempfile.TemporaryDirectory() as d:
            fabric, table = os.path.join(d, "best.yaml"), os.path.join(d, "rounds.csv")
            args = ("topo", "optimize", "--workload", "topoopt-dlrm", "--servers", "8", "--degree", "2", "--bandwidth", "10",
                    "--rounds", "2", "--steps", "12", "--patience", "6", "--seed", "5")
            r = chorus(*args, "--json", "-q", "--save", fabric, "--csv", table)
            self.assertEqual(r.returncode, 0, r.stderr)
            j = json.loads(r.stdout)
            self.assertEqual(j["own"]["strategy"]["mp_npus"], 1)  # the zoo's DLRM: data-parallel MLPs
            rounds = j["rounds"]
            self.assertEqual([x["round"] for x in rounds], list(range(len(rounds))))
            best = j["best"]["iteration_ms"]
            self.assertLessEqual(best, j["own"]["iteration_ms"])
            for x in rounds:
                self.assertGreaterEqual(x["iteration_ms"], best * (1 - 1e-12))
                if x["round"] > 0:
                    self.assertGreaterEqual(x["searched_ms"], best * (1 - 1e-12))
            with open(table) as f:
                rows = list(csv.DictReader(f))
            self.assertEqual([x["round"] for x in rows], ["own"] + [str(x["round"]) for x in rounds])
            # The saved fabric runs the workload (its own strategy) through sim workload.
            r = chorus("sim", "workload", "--workload", "topoopt-dlrm", "--topology", fabric, "--json")
            self.assertEqual(r.returncode, 0, r.stderr)
            # Seeded: the same run prints the same JSON.
            again = chorus(*args, "--json", "-q")
            self.assertEqual(json.loads(again.stdout), j)
        for extra, needle in ((["--servers", "1"], "--servers"), (["--mp-choices", "3"], "--mp-choices"),
                              (["--rounds", "-1"], "--rounds"), (["--patience", "0"], "--patience")):
            r = chorus("topo", "optimize", "--workload", "topoopt-dlrm", "--servers", "8", "--steps", "2", "-q", *extra)
            self.assertEqual(r.returncode, 2, (extra, r.stderr))
            self.assertIn(needle, r.stderr)
        r = chorus("topo", "optimize", "--workload", "resnet", "-q")
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("resnet152", r.stderr)  # did you mean


class Reproduce(unittest.TestCase):
    def test_reproduce_topoopt_costs(self):
        with tempfile.TemporaryDirectory() as d:
            r = chorus("reproduce", "topoopt", "--out", d, "--costs-only")
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("ideal Fat-tree / TopoOpt-oneshot", r.stdout)
            with open(os.path.join(d, "cost.csv")) as f:
                rows = list(csv.DictReader(f))
            self.assertEqual(len(rows), 2 * 4 * 6)
            for col in ("fabric", "servers", "degree", "bandwidth_gbps", "cost_usd"):
                self.assertIn(col, rows[0])
            assert_svg(self, os.path.join(d, "fig11_cost.svg"))

    def test_reproduce_topoopt_replan_policies(self):
        # Circuits re-planned only at the 50 ms boundaries (--periodic-replan, Appendix D) change at
        # most once per boundary passed; on demand (default) DLRM at 1 us re-plans between them.
        for periodic in (False, True):
            with tempfile.TemporaryDirectory() as d:
                extra = ["--periodic-replan"] if periodic else []
                r = chorus("reproduce", "topoopt", "--out", d, "--servers", "16", "--models", "topoopt-dlrm", "--fabrics",
                           "topoopt-reconfig", "--degrees", "4", "--bandwidths", "100", "--iterations", "1",
                           "--reconfig-latencies", "1", "10000", "-q", *extra)
                self.assertEqual(r.returncode, 0, r.stderr)
                with open(os.path.join(d, "reconfig.csv")) as f:
                    rows = [x for x in csv.DictReader(f) if x["model"] == "topoopt-dlrm" and x["fabric"] == "topoopt-reconfig"]
                self.assertEqual(len(rows), 2)
                for x in rows:
                    boundaries = int(float(x["iteration_ms"]) // 50)
                    if periodic:
                        self.assertLessEqual(int(x["reconfigurations"]), boundaries, x)
                    elif x["reconfig_latency_us"] == "1":
                        self.assertGreater(int(x["reconfigurations"]), boundaries, x)

    def test_reproduce_topoopt_iterations_small(self):
        # Figs. 12-13 at 16 servers, d = 4, two bandwidths, one iteration: every model on every fabric.
        with tempfile.TemporaryDirectory() as d:
            r = chorus("reproduce", "topoopt", "--out", d, "--servers", "16", "--degrees", "4", "--bandwidths", "10", "100",
                       "--iterations", "1", "-q")
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("Figs. 12-13", r.stdout)
            with open(os.path.join(d, "iterations.csv")) as f:
                rows = list(csv.DictReader(f))
            self.assertEqual(len(rows), 3 * 2 * 7)
            t = {(x["model"], x["fabric"], float(x["bandwidth_gbps"])): float(x["iteration_ms"]) for x in rows}
            for model in ("topoopt-candle", "topoopt-bert", "topoopt-dlrm"):
                for b in (10.0, 100.0):
                    ideal = t[(model, "ideal-fat-tree", b)]
                    # Same star, every NIC slower (cost model: below d x B) / more hops and half the ToR uplinks.
                    self.assertLess(ideal, t[(model, "cost-equivalent-fat-tree", b)], (model, b))
                    self.assertLessEqual(ideal, t[(model, "oversub-fat-tree", b)] * (1 + 1e-9), (model, b))
                # More bandwidth never makes an iteration slower.
                for fabric in ("ideal-fat-tree", "topoopt-oneshot", "expander"):
                    self.assertLessEqual(t[(model, fabric, 100.0)], t[(model, fabric, 10.0)], (model, fabric))
            assert_svg(self, os.path.join(d, "fig12_13_iterations.svg"))
            # Fig. 15: TopoOpt-reconfig over the OCS latency; links stop for every reconfiguration, so a
            # slower OCS never makes DLRM's iteration faster, and 10 ms is slower than 1 us.
            with open(os.path.join(d, "reconfig.csv")) as f:
                rc = list(csv.DictReader(f))
            self.assertEqual(len(rc), 2 * (1 + 5))
            dlrm = [float(x["iteration_ms"]) for x in rc if x["model"] == "topoopt-dlrm" and x["fabric"] == "topoopt-reconfig"]
            self.assertEqual(len(dlrm), 5)
            for fast, slow in zip(dlrm, dlrm[1:]):
                self.assertLessEqual(fast, slow * (1 + 1e-9))
            self.assertLess(dlrm[0], dlrm[-1])
            assert_svg(self, os.path.join(d, "fig15_reconfig.svg"))
            r = chorus("reproduce", "topoopt", "--out", d, "--servers", "16", "--fabrics", "clos", "-q")
            self.assertEqual(r.returncode, 2)
            self.assertIn("--fabrics", r.stderr)

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
                assert_svg(self, os.path.join(d, fig))

    def test_reproduce_themis_workloads(self):
        with tempfile.TemporaryDirectory() as a, tempfile.TemporaryDirectory() as b:
            r = chorus("reproduce", "themis-workloads", "-q", "--iterations", "1", "--out", a)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("Headline", r.stdout)
            with open(os.path.join(a, "workloads.csv")) as f:
                header = f.readline().strip().split(",")
                rows = [dict(zip(header, line.strip().split(","))) for line in f]
            for col in ("workload", "topology", "scheduler", "iteration_time_ns", "compute_ns", "exposed_comm_ns",
                        "exposed_dp_comm_ns", "exposed_mp_comm_ns"):
                self.assertIn(col, header)
            self.assertEqual(len(rows), 4 * 6 * 4)
            self.assertEqual({r["workload"] for r in rows}, {"resnet152", "gnmt", "dlrm", "transformer-1t"})
            for fig in ("fig12.svg", "fig12_resnet152.svg", "fig12_transformer-1t.svg"):
                assert_svg(self, os.path.join(a, fig))
            self.assertEqual(chorus("reproduce", "themis-workloads", "-q", "--iterations", "1", "--out", b).returncode, 0)
            with open(os.path.join(a, "workloads.csv")) as fa, open(os.path.join(b, "workloads.csv")) as fb:
                self.assertEqual(fa.read(), fb.read())

    def test_reproduce_themis_sensitivity(self):
        with tempfile.TemporaryDirectory() as d:
            r = chorus("reproduce", "themis-workloads", "--sensitivity", "-q", "--iterations", "1", "--out", d)
            self.assertEqual(r.returncode, 0, r.stderr)
            for needle in ("resnet152 (paper: Themis 1.49x)", "gnmt (paper: Themis 1.30x)", "paper's 1.30x at batch ~",
                           "astra-resnet50", "batch does not apply"):
                self.assertIn(needle, r.stdout)
            with open(os.path.join(d, "sensitivity.csv")) as f:
                rows = f.readlines()[1:]
            # Points: resnet152 batch 1..64 (7), gnmt 1..256 (9), dlrm 1..1024 (11); rates 1/4..16 (7) for the
            # three and the ASTRA-sim ResNet-50; each on the six Table 2 topologies.
            self.assertEqual(len(rows), (7 + 9 + 11 + 4 * 7) * 6)
            for name in ("sensitivity_summary.csv", "sensitivity_crossings.csv"):
                self.assertTrue(os.path.exists(os.path.join(d, name)), name)
            assert_svg(self, os.path.join(d, "fig12_sensitivity.svg"))
        r = chorus("reproduce", "themis-workloads", "--grid", "full")
        self.assertEqual(r.returncode, 2)
        self.assertIn("--grid requires --sensitivity", r.stderr)
        with tempfile.TemporaryDirectory() as d:
            r = chorus("reproduce", "themis-workloads", "--sensitivity", "--astra-workload", os.path.join(d, "none.txt"),
                       "-q", "--out", d)
            self.assertEqual(r.returncode, 2)
            self.assertIn("none.txt: cannot open ASTRA-sim text workload", r.stderr)

    def test_reproduce_is_deterministic(self):
        with tempfile.TemporaryDirectory() as a, tempfile.TemporaryDirectory() as b:
            self.assertEqual(chorus("reproduce", "themis", "-q", "--out", a).returncode, 0)
            self.assertEqual(chorus("reproduce", "themis", "-q", "--out", b).returncode, 0)
            for name in ("microbench.csv", "fig10_chunks.svg"):
                with open(os.path.join(a, name)) as fa, open(os.path.join(b, name)) as fb:
                    self.assertEqual(fa.read(), fb.read(), name)

    def test_reproduce_without_plotting_interpreter_exits_2_after_the_data(self):
        with tempfile.TemporaryDirectory() as d:
            env = dict(os.environ, CHORUS_PLOT_PYTHON="/nonexistent/python3")
            r = subprocess.run([CHORUS, "reproduce", "themis-workloads", "-q", "--iterations", "1", "--out", d],
                               capture_output=True, text=True, timeout=120, env=env)
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertIn("cannot start '/nonexistent/python3'", r.stderr)
            self.assertIn("python3-matplotlib", r.stderr)
            self.assertTrue(os.path.exists(os.path.join(d, "workloads.csv")))
            self.assertFalse(os.path.exists(os.path.join(d, "fig12.svg")))


class AstraSimInputs(unittest.TestCase):
    """ASTRA-sim's network YAML and system JSON (--system) read with ASTRA-sim's meaning. Expected
    times from ASTRA-sim's analytical formulas: each message hops x latency + endpoint-delay +
    bytes / bandwidth (GB = 2^30 bytes), each reduced message 3 x bytes / local-mem-bw more."""
    EX = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "examples",
                      "astra-sim")
    BPNS = 50 * 2 ** 30 / 1e9  # 50 GB/s in bytes per ns

    def sim(self, net, *args):
        r = chorus("sim", "collective", "--topology", os.path.join(self.EX, net), "--json", *args)
        self.assertEqual(r.returncode, 0, r.stderr)
        return json.loads(r.stdout)

    def test_ring_with_the_example_system_file(self):
        # Ring_4chunks.json: 4 splits of 256 KiB, one at a time; 14 steps of 500 + 10 ns + 32 KiB,
        # 7 reduced messages of 32 KiB at 1600 GB/s.
        j = self.sim("ring8.yml", "--system", os.path.join(self.EX, "ring_4chunks.json"), "--size", "1MiB")
        expected = 4 * (14 * (510 + 32768 / self.BPNS) + 7 * 3 * 32768 / 1600)
        self.assertAlmostEqual(j["time_ns"] / expected, 1, delta=1e-3)
        self.assertEqual(j["num_chunks"], 4)
        self.assertEqual(j["scheduler"], "baseline-lifo")
        # An explicit --chunks wins over preferred-dataset-splits.
        j = self.sim("ring8.yml", "--system", os.path.join(self.EX, "ring_4chunks.json"), "--size", "1MiB",
                     "--chunks", "1")
        self.assertEqual(j["num_chunks"], 1)

    def test_fully_connected_and_switch_meanings(self):
        # Direct on 8 fully connected NPUs: 7 messages of 8 MiB at once, each at 50 GB/s, twice.
        j = self.sim("fc8.yml", "--size", "64MiB", "--chunks", "1")
        self.assertAlmostEqual(j["time_ns"] / (2 * (500 + 8 * 2 ** 20 / self.BPNS)), 1, delta=1e-3)
        # A switch: two hops of 500 ns per halving-doubling step.
        j = self.sim("switch8.yml", "--size", "1MiB", "--chunks", "1")
        self.assertAlmostEqual(j["time_ns"] / (6 * 1000 + 2 * 7 * 2 ** 17 / self.BPNS), 1, delta=1e-3)

    def test_bad_system_files_exit_2_naming_file_key_and_dimension(self):
        with tempfile.TemporaryDirectory() as d:
            def fails(text, *needles, net="ring8.yml", cmd=("sim", "collective")):
                path = os.path.join(d, "sys.json")
                with open(path, "w") as f:
                    f.write(text)
                r = chorus(*cmd, "--topology", os.path.join(self.EX, net), "--system", path)
                self.assertEqual(r.returncode, 2, (text, r.stderr))
                self.assertIn("sys.json", r.stderr)
                for n in needles:
                    self.assertIn(n, r.stderr)
            fails('{"endpoint-dalay": 1}', "unknown key 'endpoint-dalay'", "did you mean 'endpoint-delay'")
            fails('{"endpoint-delay": "10"}', "field 'endpoint-delay'", "must be a number")
            fails('{"all-reduce-implementation": ["oneRing"]}', "field 'all-reduce-implementation': dimension 0")
            fails('{"all-reduce-implementation": ["ring", "ring"]}', "names 2 dimension(s) but the network ring8 has 1")
            fails('{"all-reduce-implementation": ["ring", "direct", "ring"], "reduce-scatter-implementation": '
                  '["ring", "ring", "ring"], "collective-optimization": "localBWAware"}',
                  "field 'reduce-scatter-implementation': dimension 1", "differs", net="ring_fc_switch.yml")
            fails('{"all-reduce-implementation": ["ring", "ring", "halvingDoubling"]}', "collective-optimization",
                  net="ring_fc_switch.yml")
            fails('{"roofline-enabled": 1}', "field 'peak-perf'", cmd=("sim", "workload"))
            fails('{"replay-only": 1}', "field 'replay-only'", cmd=("sim", "workload"))

    def test_resnet152_agrees_with_astra_sim(self):
        # ASTRA-sim's own runs (f242411, congestion-unaware) of the traces `chorus export --chakra -w
        # resnet152 -i 1 --topology ring8.yml` writes, with this system file (its roofline: the
        # A100 figures chorus's compute model uses): iteration time and exposed communication.
        astra = {1: (8383247, 7787), 4: (11302215, 2926755), 16: (24389047, 16013587)}
        with tempfile.TemporaryDirectory() as d:
            for splits, (total, exposed) in astra.items():
                path = os.path.join(d, "sys.json")
                with open(path, "w") as f:
                    json.dump({"scheduling-policy": "LIFO", "endpoint-delay": 1, "active-chunks-per-dimension": 1,
                               "preferred-dataset-splits": splits, "all-reduce-implementation": ["ring"],
                               "collective-optimization": "localBWAware", "local-mem-bw": 1555,
                               "roofline-enabled": 1, "peak-perf": 312}, f)
                r = chorus("sim", "workload", "-w", "resnet152", "-i", "1", "--topology",
                           os.path.join(self.EX, "ring8.yml"), "--system", path, "--json")
                self.assertEqual(r.returncode, 0, r.stderr)
                j = json.loads(r.stdout)
                self.assertAlmostEqual(j["iteration_time_ns"] / total, 1, delta=0.01, msg=splits)
                self.assertAlmostEqual(j["exposed_comm_ns"], exposed, delta=0.01 * total, msg=splits)

    def test_sim_workload_and_export_take_the_system_file(self):
        sys_file = os.path.join(self.EX, "ring_4chunks.json")
        r = chorus("sim", "workload", "-w", "resnet152", "-i", "1", "--topology", os.path.join(self.EX, "ring8.yml"),
                   "--system", sys_file)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("scheduler baseline-lifo", r.stdout)
        self.assertIn("4 chunks per collective", r.stdout)
        with tempfile.TemporaryDirectory() as d:
            r = chorus("export", "--chakra", "-w", "resnet152", "--topology", os.path.join(self.EX, "ring8.yml"),
                       "--system", sys_file, "-o", d, "--name", "r")
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(os.path.join(d, "r.system.json")) as f, open(sys_file) as g:
                self.assertEqual(f.read(), g.read())

if __name__ == "__main__":
    unittest.main(verbosity=2)
