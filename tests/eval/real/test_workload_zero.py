#!/usr/bin/env python3
"""Reduce-scatter and all-gather comm-ops on the enforcer (ZeRO-2): a plan whose every
reduce-scatter and all-gather is cut into 4 segments (strided parts of every rank's block,
staged) on alternating channels, run on 4 ranks in checking mode with random submission delays;
every element of every result checked by the command, the motif order compared across ranks."""
import sys
import tempfile
import unittest

from edited_plan import run_edited_plan

CHORUS = sys.argv.pop(1)
WORKLOAD = sys.argv.pop(1)


class ZeroOnTheEnforcer(unittest.TestCase):
    def test_segmented_reduce_scatters_and_all_gathers(self):
        def edit(p):
            kinds = [op["kind"] for op in p["comm_ops"]]
            self.assertIn("reduce_scatter", kinds)
            self.assertIn("all_gather", kinds)
            for i, op in enumerate(p["comm_ops"]):
                op["option"]["path"] = "shm" if i % 2 == 0 else "gloo"
                op["option"].pop("alt_path", None)  # one path per comm-op here
                op["option"].pop("alt_segments", None)
                if op["kind"] in ("reduce_scatter", "all_gather"):
                    op["option"]["segments"] = 4

        with tempfile.TemporaryDirectory() as tmp:
            _, r, j = run_edited_plan(CHORUS, WORKLOAD, tmp, edit)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(j["check"], "passed")
        self.assertTrue(j["same_order_on_every_rank"])

if __name__ == "__main__":
    unittest.main()
