#!/usr/bin/env python3
"""chorus motif expand: motif lists by hand, JSON shape, the validity check, bad input (exit 2)."""
import json
import subprocess
import sys
import unittest

CHORUS = sys.argv.pop(1) if len(sys.argv) > 1 else "chorus"


def chorus(*args):
    return subprocess.run([CHORUS, "motif", "expand", *args], capture_output=True, text=True, timeout=60)


class MotifExpand(unittest.TestCase):
    def test_all_to_all_segmented_and_splined(self):
        r = chorus("--op", "all_to_all", "--ranks", "8", "--bytes", "10MB", "--segment", "4MB", "--spline", "2", "--json", "--check")
        self.assertEqual(r.returncode, 0, r.stderr)
        j = json.loads(r.stdout)
        self.assertEqual(j["transforms"], ["S(4000000)", "P(2)"])
        self.assertEqual(j["problems"], [])
        motifs = j["motifs"]
        self.assertEqual(len(motifs), 12)  # 3 segments (4, 4, 2 MB) x 4 groups of 2 destinations
        self.assertEqual([m["bytes"] for m in motifs[::4]], [[0, 4000000], [4000000, 8000000], [8000000, 10000000]])
        # Segment 1, group 3: source i sends to (i + 6) % 8 and (i + 7) % 8.
        self.assertEqual(motifs[7]["destinations"], [[6, 7], [7, 0], [0, 1], [1, 2], [2, 3], [3, 4], [4, 5], [5, 6]])
        self.assertTrue(all(m["after"] == [] for m in motifs))

    def test_ring_and_tree(self):
        r = chorus("--op", "all_reduce", "--ranks", "4", "--bytes", "8", "--spline", "ring", "--json")
        self.assertEqual(r.returncode, 0, r.stderr)
        motifs = json.loads(r.stdout)["motifs"]
        self.assertEqual([(m["kind"], m["after"]) for m in motifs], [("reduce_scatter", []), ("all_gather", [0])])
        r = chorus("--op", "all_reduce", "--ranks", "8", "--bytes", "64", "--spline", "2", "--check")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("13 motifs", r.stdout)  # 4 + 2 reduces, the all-reduce of {0,4}, 2 + 4 broadcasts
        self.assertIn("AR[0,64) on ranks {0,4} after #4 #5", r.stdout)
        self.assertIn("valid:", r.stdout)

    def test_bad_input(self):
        for args, flag in [(["--op", "reduce"], "--op"), (["--ranks", "0"], "--ranks"), (["--bytes", "1x"], "--bytes"),
                           (["--segment", "0"], "--segment"), (["--spline", "tree:1"], "--spline"), (["--transform", "Q:1"], "--transform"),
                           (["--bytes", "1GB", "--segment", "1"], "--segment"), (["--op", "broadcast", "--root", "9"], "--root"),
                           (["--ranks", "600", "--check"], "--check"), (["--ranks", "64", "--bytes", "1000", "--segment", "1", "--spline", "2", "--check"], "--check")]:
            r = chorus(*args)
            self.assertEqual(r.returncode, 2, (args, r.stderr))
            self.assertIn(flag, r.stderr, args)
            self.assertNotIn("internal", r.stderr, args)


if __name__ == "__main__":
    unittest.main()
