#!/usr/bin/env python3
"""chorus.plot shared-fabric (python/chorus/plot/shared_fabric.py) on a hand-written CSV: the bars
are the sums worked out by hand; a malformed file exits with status 2 naming the file and line.

usage: test_plot_shared_fabric.py   (with an interpreter that has matplotlib)
"""
import contextlib
import io
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))

from chorus.plot import shared_fabric  # noqa: E402
from chorus.plot.__main__ import main as plot_main  # noqa: E402

CSV = """workloads,placement,slowdown_a,slowdown_b,shifted_slowdown_a,shifted_slowdown_b,shift_b_ns
x+x,contiguous,1,1,1,1,0
x+x,interleaved,1.5,1.75,1.25,1.5,5
y+z,contiguous,1,1,1,1,0
y+z,interleaved,2,1.5,1.5,1.25,7
"""


def heights(ax):
    """Bar heights per legend entry, in the order drawn."""
    return {c.get_label(): [round(p.get_height(), 9) for p in c.patches] for c in ax.containers}


class SharedFabricPlot(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        with open(os.path.join(self.tmp.name, "shared_fabric.csv"), "w") as f:
            f.write(CSV)

    def tearDown(self):
        self.tmp.cleanup()

    def test_bars_are_the_totals(self):
        [(name, fig)] = shared_fabric.figures(shared_fabric.load(self.tmp.name))
        self.assertEqual(name, "shared_fabric.svg")
        left, right = fig.axes
        # a + b per pair: x+x contiguous 2, interleaved 1.5 + 1.75 = 3.25; y+z 2 and 2 + 1.5 = 3.5.
        self.assertEqual(heights(left), {"contiguous": [2, 2], "interleaved": [3.25, 3.5]})
        # interleaved, no shift against shifted: x+x 3.25 -> 2.75, y+z 3.5 -> 2.75.
        self.assertEqual(heights(right), {"no shift": [3.25, 3.5], "searched shift": [2.75, 2.75]})

    def test_malformed_input_exits_2(self):
        with open(os.path.join(self.tmp.name, "shared_fabric.csv"), "w") as f:
            f.write(CSV.replace("1.75", "fast"))
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            self.assertEqual(plot_main(["shared-fabric", self.tmp.name, "-q"]), 2)
        self.assertIn("shared_fabric.csv", err.getvalue())


if __name__ == "__main__":
    unittest.main()
