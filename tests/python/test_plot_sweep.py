#!/usr/bin/env python3
"""chorus.plot.sweep (`chorus sweep --plot`): the lines drawn are the means worked out by hand from
a small sweep.csv, rows with an error are left out, sizes are placed by their bytes.

usage: test_plot_sweep.py   (with an interpreter that has matplotlib: python3-matplotlib)
"""
import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))

from chorus.plot import sweep  # noqa: E402
from chorus.plot._common import PlotInputError  # noqa: E402

CSV = """key,size,scheduler,topology,time_ns,error
k1,1MiB,baseline,A,10,
k2,1MiB,baseline,B,30,
k3,2MiB,baseline,A,40,
k4,1MiB,themis,A,5,
k5,2MiB,themis,A,8,
k6,2MiB,themis,B,999,"s.yaml:4: field 'topology': no such preset"
"""


def load(tmp, csv_text, plot):
    with open(os.path.join(tmp, "sweep.csv"), "w") as f:
        f.write(csv_text)
    with open(os.path.join(tmp, "sweep_plot.json"), "w") as f:
        json.dump(plot, f)
    return sweep.load(tmp)


class Sweep(unittest.TestCase):
    def test_lines_are_means_per_x_and_series(self):
        with tempfile.TemporaryDirectory() as d:
            data = load(d, CSV, {"x": "size", "y": "time_ns", "series": "scheduler"})
        (name, fig), = sweep.figures(data)
        self.assertEqual(name, "sweep.svg")
        lines = {ln.get_label(): ln for ln in fig.axes[0].get_lines()}
        self.assertEqual(sorted(lines), ["baseline", "themis"])
        self.assertEqual(list(lines["baseline"].get_xdata()), [2**20, 2**21])
        self.assertEqual(list(lines["baseline"].get_ydata()), [(10 + 30) / 2, 40])
        self.assertEqual(list(lines["themis"].get_ydata()), [5, 8])  # the failed point left out

    def test_without_series_one_line_of_all_rows(self):
        with tempfile.TemporaryDirectory() as d:
            data = load(d, CSV, {"x": "topology", "y": "time_ns", "series": ""})
        (_, fig), = sweep.figures(data)
        (line,) = fig.axes[0].get_lines()
        self.assertEqual(list(line.get_ydata()), [(10 + 40 + 5 + 8) / 4, 30])

    def test_a_missing_column_is_named(self):
        with tempfile.TemporaryDirectory() as d:
            with self.assertRaises(PlotInputError) as e:
                load(d, CSV, {"x": "chunks", "y": "time_ns", "series": ""})
        self.assertIn("missing column 'chunks'", str(e.exception))


if __name__ == "__main__":
    unittest.main()
