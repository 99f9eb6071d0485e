#!/usr/bin/env python3
"""chorus.plot shared-fabric and jobs (python/chorus/plot/shared_fabric.py, jobs.py) on hand-written
files: the bars and lines are the values worked out by hand; a malformed file exits with status 2
naming the file.

usage: test_plot_shared_fabric.py   (with an interpreter that has matplotlib)
"""
import contextlib
import io
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))

from chorus.plot import jobs, shared_fabric  # noqa: E402
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


JOBS_JSON = """{"fabric": {"name": "f"}, "jobs": [
  {"name": "a", "start_ns": 0, "iteration_times_ns": [2e6, 3e6], "alone_iteration_time_ns": 2e6},
  {"name": "b", "start_ns": 1e6, "iteration_times_ns": [4e6], "alone_iteration_time_ns": 1e6}],
 "links": [{"from": 0, "to": 4, "utilization": 0.25}, {"from": 4, "to": 5, "utilization": 0.5}]}
"""


class JobsPlot(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.tmp.cleanup()

    def write(self, text):
        with open(os.path.join(self.tmp.name, "jobs.json"), "w") as f:
            f.write(text)

    def test_lines_and_bars(self):
        self.write(JOBS_JSON)
        [(name, fig)] = jobs.figures(jobs.load(self.tmp.name))
        self.assertEqual(name, "jobs.svg")
        left, right = fig.axes
        lines = {line.get_label(): (list(line.get_xdata()), list(line.get_ydata())) for line in left.lines
                 if not line.get_label().startswith("_")}
        # a: iterations end at 2 and 5 ms, of 2 and 3 ms; b starts at 1 ms, its one iteration ends at 5 ms.
        self.assertEqual(lines, {"a": ([2.0, 5.0], [2.0, 3.0]), "b": ([5.0], [4.0])})
        self.assertEqual(sorted(line.get_ydata()[0] for line in left.lines if line.get_label().startswith("_")), [1.0, 2.0])
        # Busiest first, in percent: 4 -> 5 (50 %), then 0 -> 4 (25 %).
        self.assertEqual([p.get_height() for p in right.patches], [50.0, 25.0])
        self.assertEqual([t.get_text() for t in right.get_xticklabels()], ["4->5", "0->4"])

    def test_utilization_over_time(self):
        self.write(JOBS_JSON)
        with open(os.path.join(self.tmp.name, "links_over_time.csv"), "w") as f:
            f.write("window_start_ns,window_end_ns,link,from,to,gbps,bytes,utilization\n"
                    "0,1000000,8,4,5,8,500000,0.5\n1000000,2000000,8,4,5,8,1000000,1\n"
                    "0,1000000,0,0,4,8,0,0\n1000000,2000000,0,0,4,8,250000,0.25\n")
        [(_, fig)] = jobs.figures(jobs.load(self.tmp.name))
        self.assertEqual(len(fig.axes), 3)  # (c) beside (a) and (b)
        ax = fig.axes[2]
        steps = {line.get_label(): (list(line.get_xdata()), list(line.get_ydata())) for line in ax.lines}
        # Busiest first: 4->5 at 50 % in [0, 1] ms and 100 % in [1, 2] ms; 0->4 at 0 then 25 %.
        self.assertEqual(steps, {"4->5": ([0.0, 1.0, 1.0, 2.0], [50.0, 50.0, 100.0, 100.0]),
                                 "0->4": ([0.0, 1.0, 1.0, 2.0], [0.0, 0.0, 25.0, 25.0])})
        with open(os.path.join(self.tmp.name, "links_over_time.csv"), "w") as f:
            f.write("window_start_ns,window_end_ns,link,from,to\n0,x,8,4,5\n")
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            self.assertEqual(plot_main(["jobs", self.tmp.name, "-q"]), 2)
        self.assertIn("links_over_time.csv:2", err.getvalue())

    def test_malformed_input_exits_2(self):
        self.write(JOBS_JSON.replace('"iteration_times_ns": [4e6]', '"iteration_times_ns": "slow"'))
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            self.assertEqual(plot_main(["jobs", self.tmp.name, "-q"]), 2)
        self.assertIn("jobs.json: field 'iteration_times_ns'", err.getvalue())


if __name__ == "__main__":
    unittest.main()
