#!/usr/bin/env python3
"""chorus run workload on 4 ranks: a plan switched mid-run by two-phase commit, a vetoed switch
that leaves the old plan running, a multipath plan, the timeline; results checked and the motif
order compared by the command."""
import json
import os
import subprocess
import tempfile
import sys
import unittest

from edited_plan import run_edited_plan

CHORUS = sys.argv.pop(1)
WORKLOAD = sys.argv.pop(1)


def run(*extra):
    cmd = [CHORUS, "launch", "-n", "4", "--kill-grace-s", "5", "--", CHORUS, "run", "workload", "--workload", WORKLOAD,
           "--repeat", "4", "--method", "fifo", "--switch-after", "2", "--submit-jitter-us", "200", "--json",
           # The topology's costs: the switch does not depend on them, and timing every motif on
           # the ranks first (--costs measured) is tested by rt_workload_launch_4 (2.3 s a run against 0.9 s).
           "--costs", "model", *extra]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=240)
    return r, (json.loads(r.stdout) if r.returncode == 0 else None)


class PlanSwitch(unittest.TestCase):
    def test_commit_switches_every_rank_after_run_two(self):
        r, j = run()
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(j["check"], "passed")
        self.assertTrue(j["same_order_on_every_rank"])
        self.assertEqual(j["plan_switches"], 1)
        self.assertEqual(j["plan_switch_aborts"], 0)
        self.assertEqual([p["method"] for p in j["plans"]], ["fifo", "syndicate"])
        self.assertEqual(j["plans"][1]["from_run"], 2)
        self.assertEqual(j["runs_with_final_plan"], 2)
        self.assertEqual(j["method"], "syndicate")

    def test_a_veto_aborts_and_the_old_plan_keeps_running(self):
        r, j = run("--veto-rank", "2")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(j["check"], "passed")
        self.assertTrue(j["same_order_on_every_rank"])
        self.assertEqual(j["plan_switches"], 0)
        self.assertEqual(j["plan_switch_aborts"], 1)
        self.assertEqual(j["method"], "fifo")
        self.assertEqual(j["runs_with_final_plan"], 4)


class MultipathPlan(unittest.TestCase):
    def test_segments_of_one_comm_op_on_two_backends(self):
        # Every comm-op cut in two segments, the first on shm, the second on gloo (Fig. 9's
        # motifs multiplexed over interconnects), run checked with random submission delays.
        def edit(p):
            for op in p["comm_ops"]:
                op["option"].update({"path": "shm", "segments": 2, "spline": 1, "alt_path": "gloo", "alt_segments": 1})

        with tempfile.TemporaryDirectory() as tmp:
            p, r, j = run_edited_plan(CHORUS, WORKLOAD, tmp, edit, "--trace", os.path.join(tmp, "t.json"))
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(j["check"], "passed")
            self.assertTrue(j["same_order_on_every_rank"])
            with open(os.path.join(tmp, "t.json")) as f:
                events = json.load(f)["traceEvents"]
        # Every rank ran steps of every comm-op on both channels.
        names = {(e["pid"], e["tid"]): e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
        for rank in range(4):
            on = {}
            for e in events:
                if e["ph"] == "X" and e["pid"] == 10 + rank and e["tid"] > 0:
                    on.setdefault(e["args"]["comm_op"], set()).add(names[(e["pid"], e["tid"])])
            self.assertEqual(len(on), len(p["comm_ops"]))
            for op, channels in on.items():
                self.assertEqual(channels, {"shm", "gloo"}, f"rank {rank}, {op}")


class Timeline(unittest.TestCase):
    def test_trace_has_every_rank_issuing_in_sequence_order(self):
        with tempfile.TemporaryDirectory() as tmp:
            trace_file = os.path.join(tmp, "run.json")
            cmd = [CHORUS, "launch", "-n", "4", "--kill-grace-s", "5", "--", CHORUS, "run", "workload", "--workload", WORKLOAD,
                   "--repeat", "2", "--submit-jitter-us", "200", "--costs", "model", "--json", "--trace", trace_file]
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=240)
            self.assertEqual(r.returncode, 0, r.stderr)
            j = json.loads(r.stdout)
            with open(trace_file) as f:
                events = json.load(f)["traceEvents"]
        names = {e["pid"]: e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "process_name"}
        self.assertEqual(names[1], "compute")   # the prediction
        self.assertEqual(names[2], "channels")
        ranks = [pid for pid, n in names.items() if n.endswith("(measured)")]
        self.assertEqual(sorted(ranks), [10, 11, 12, 13])
        predicted = {e["args"]["seq"] for e in events if e["ph"] == "X" and e["pid"] == 2}
        for pid in ranks:
            mine = [e for e in events if e["ph"] == "X" and e["pid"] == pid]
            # moe_small, 3 layers: per iteration 3 forwards, 3 weight gradients and 2 input
            # gradients (none for the first layer), 2 iterations unrolled.
            compute = [e for e in mine if e["tid"] == 0 and not e["name"].startswith("wait for ")]
            self.assertEqual(len(compute), 16)
            steps = sorted({(e["args"]["seq"], e["ts"]) for e in mine if e["tid"] > 0})
            self.assertTrue(steps, pid)
            self.assertLessEqual({s for s, _ in steps}, predicted)
            # The enforcer issues strictly in sequence order on every rank.
            issue_times = [ts for _, ts in steps]
            self.assertEqual(issue_times, sorted(issue_times), pid)
            for e in mine:
                self.assertGreaterEqual(e["ts"], 0)
                self.assertGreaterEqual(e["dur"], 0)
        last = j["last_run"]
        self.assertEqual(last["steps"], len(predicted))
        self.assertAlmostEqual(last["step_time_ratio"], last["step_ns"] / last["predicted_step_ns"])
        self.assertGreater(last["makespan_ns"], 0)


if __name__ == "__main__":
    unittest.main()
