#!/usr/bin/env python3
"""chorus run workload on 4 ranks: a plan switched mid-run by two-phase commit, and a vetoed switch
that leaves the old plan running; results checked and the motif order compared by the command."""
import json
import subprocess
import sys
import unittest

CHORUS = sys.argv.pop(1)
WORKLOAD = sys.argv.pop(1)


def run(*extra):
    cmd = [CHORUS, "launch", "-n", "4", "--kill-grace-s", "5", "--", CHORUS, "run", "workload", "--workload", WORKLOAD,
           "--repeat", "4", "--method", "fifo", "--switch-after", "2", "--submit-jitter-us", "200", "--json", *extra]
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


if __name__ == "__main__":
    unittest.main()
