#!/usr/bin/env python3
"""Reduce-scatter and all-gather comm-ops on the enforcer (ZeRO-2): a plan whose every
reduce-scatter and all-gather is cut into 4 segments (strided parts of every rank's block,
staged) on alternating channels, run on 4 ranks in checking mode with random submission delays;
every element of every result checked by the command, the motif order compared across ranks."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

CHORUS = sys.argv.pop(1)
WORKLOAD = sys.argv.pop(1)


class ZeroOnTheEnforcer(unittest.TestCase):
    def test_segmented_reduce_scatters_and_all_gathers(self):
        with tempfile.TemporaryDirectory() as tmp:
            plan = os.path.join(tmp, "plan.json")
            subprocess.run([CHORUS, "plan", "--workload", WORKLOAD, "--topology", "host", "--ranks", "4", "--out", plan],
                           check=True, capture_output=True, text=True, timeout=60)
            with open(plan) as f:
                p = json.load(f)
            kinds = [op["kind"] for op in p["comm_ops"]]
            self.assertIn("reduce_scatter", kinds)
            self.assertIn("all_gather", kinds)
            for i, op in enumerate(p["comm_ops"]):
                op["option"]["path"] = "shm" if i % 2 == 0 else "gloo"
                op["option"].pop("alt_path", None)  # one path per comm-op here
                op["option"].pop("alt_segments", None)
                if op["kind"] in ("reduce_scatter", "all_gather"):
                    op["option"]["segments"] = 4
            with open(plan, "w") as f:
                json.dump(p, f)
            env = dict(os.environ, CHORUS_RT_CHECK="1")
            r = subprocess.run([CHORUS, "launch", "-n", "4", "--kill-grace-s", "5", "--", CHORUS, "run", "workload",
                                "--workload", WORKLOAD, "--plan", plan, "--repeat", "2", "--submit-jitter-us", "300",
                                "--json"], capture_output=True, text=True, timeout=240, env=env)
            self.assertEqual(r.returncode, 0, r.stderr)
            j = json.loads(r.stdout)
            self.assertEqual(j["check"], "passed")
            self.assertTrue(j["same_order_on_every_rank"])


if __name__ == "__main__":
    unittest.main()
