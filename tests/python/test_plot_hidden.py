#!/usr/bin/env python3
"""Nothing hidden in the figures (issue 43, item 5): chorus.plot._hidden finds a legend over a line,
text over text or a line, a legend or text cut by the figure's edge, and a line drawn over another
without a visual distinction; on hand-made figures it finds exactly what was put there, and on
the figures of Themis Fig. 9, the Fig. 12 sensitivity and jobs.svg, drawn from files made to provoke
it (lines at 100 %, equal paper speedups, identical traces), it finds nothing.

usage: test_plot_hidden.py   (with an interpreter that has matplotlib)
"""
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))

from chorus.plot import _common, capture_whatif, jobs, themis, themis_sensitivity  # noqa: E402
from chorus.plot._hidden import problems  # noqa: E402


def write(directory, files):
    for name, text in files.items():
        with open(os.path.join(directory, name), "w") as f:
            f.write(text)


def one_axes():
    fig = _common.new_figure(6, 3)
    return fig, fig.add_subplot()


class Helper(unittest.TestCase):
    """The checks themselves, on figures whose faults are known by construction."""

    def test_legend_over_a_line_at_100(self):
        fig, ax = one_axes()
        ax.plot([0, 10], [100, 100], label="full")
        ax.plot([0, 10], [10, 20], label="low")
        ax.set_ylim(0, 105)
        ax.legend(loc="upper right")  # top right corner: on the 100 % line, far from the low one
        self.assertEqual(problems(fig), ["legend ['full', 'low'] covers line full"])

    def test_legend_beside_covers_nothing(self):
        fig, ax = one_axes()
        ax.plot([0, 10], [100, 100], label="full")
        ax.set_ylim(0, 105)
        _common.legend_beside(ax)
        self.assertEqual(problems(fig), [])

    def test_identical_lines_hide_unless_distinguished(self):
        fig, ax = one_axes()
        ax.plot([0, 10], [1, 2], label="a")
        ax.plot([0, 10], [1, 2], label="b")
        found = problems(fig)
        self.assertEqual(len(found), 1)
        self.assertTrue(found[0].startswith("line a is hidden by line b over "), found)
        for style in ({"widths": _common.layered_widths(2)}, {"dashes": _common.level_dashes([1.5, 1.5])}):
            fig, ax = one_axes()
            for k in range(2):
                line, = ax.plot([0, 10], [1.5, 1.5] if "dashes" in style else [1, 2], label="ab"[k])
                if "widths" in style:
                    line.set_linewidth(style["widths"][k])
                else:
                    line.set_linestyle(style["dashes"][k])
            self.assertEqual(problems(fig), [], style)

    def test_crossing_lines_hide_nothing(self):
        fig, ax = one_axes()
        ax.plot([0, 10], [0, 10], label="up")
        ax.plot([0, 10], [10, 0], label="down")
        self.assertEqual(problems(fig), [])

    def test_texts_over_each_other_and_past_the_edge(self):
        fig, ax = one_axes()
        ax.set_xlim(0, 10)
        ax.annotate("first label", (5, 0.5))
        ax.annotate("second label", (5, 0.5), xytext=(3, 0), textcoords="offset points")
        self.assertEqual(problems(fig), ["text 'first label' overlaps text 'second label'"])
        fig, ax = one_axes()
        far = ax.annotate("far out", (1.0, 0.5), xycoords="axes fraction", xytext=(200, 0), textcoords="offset points")
        far.set_in_layout(False)  # else the layout makes room for it
        self.assertEqual(problems(fig), ["Annotation 'far out' is cut by the figure's edge"])

    def test_merge_identical_and_levels(self):
        merged = _common.merge_identical([("a", [0, 1], [5, 5]), ("b", [0, 1], [5, 6]), ("c", [0, 1], [5, 5])])
        self.assertEqual(merged, [(["a", "c"], [0, 1], [5, 5]), (["b"], [0, 1], [5, 6])])
        self.assertEqual(_common.identical_label(["a", "c"]), "a, c (identical)")
        self.assertEqual(_common.identical_label(list("abcdef")), "a, b, c, d +2 more (identical)")
        # Two at 1.3 take turns (4 on, 4 off, shifted by 4); 1.49 alone.
        self.assertEqual(_common.level_dashes([1.3, 1.49, 1.3]), [(0.0, (4.0, 4.0)), (0.0, (4.0, 4.0)), (4.0, (4.0, 4.0))])
        self.assertEqual(_common.layered_widths(3), [3.0, 2.0, 1.0])


# Three dimensions (0..2) all busy at once for a while, dim 0 busy throughout: lines
# at 100 % across the whole panel and on top of each other.
ACTIVITY = "scheduler,dim,window_start_ns,activity_rate\n" + "".join(
    f"{s},{d},{w * 100000},{rate}\n" for s in ("baseline", "themis-scf") for d in (0, 1, 2) for w, rate in
    enumerate([1.0, 1.0, 1.0, 1.0 if d == 0 or s == "themis-scf" else 0.2, 1.0 if d == 0 else 0.0]))
MICROBENCH = """study,topology,size_bytes,scheduler,chunks,time_ns,ideal_time_ns,avg_bw_utilization
sizes,A,100000000,baseline,4,2500000.000,1000000.000,0.500000
sizes,A,100000000,themis-scf,4,1250000.000,1000000.000,0.900000
"""


class Fig9(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        with tempfile.TemporaryDirectory() as d:
            write(d, {"microbench.csv": MICROBENCH, "activity.csv": ACTIVITY,
                      "study.json": '{"activity_topology": "A", "activity_size_bytes": 1e8}\n'})
            cls.fig = dict(themis.figures(themis.load(d)))["fig9_activity.svg"]

    def test_dimensions_numbered_from_0_as_the_cli_does(self):
        for ax in self.fig.axes:
            self.assertEqual([l.get_label() for l in ax.get_lines()], ["dim 0", "dim 1", "dim 2"])
        self.assertEqual([t.get_text() for t in self.fig.axes[0].get_legend().get_texts()], ["dim 0", "dim 1", "dim 2"])

    def test_nothing_hidden(self):
        self.assertEqual(problems(self.fig), [])


# Two workloads with the same paper speedup (1.3x, both reached) and a third close below (1.28x);
# their lines meet at 1.0 for small batches, right where the paper labels used to be.
SENSITIVITY = "workload,axis,value,is_default,mean_speedup,min_speedup,max_speedup,paper_speedup\n" + "".join(
    f"{w},batch,{v},{int(v == 4)},{y},{y},{y},{paper}\n" for w, paper, ys in
    (("p", 1.3, [1.0, 1.0, 1.2, 1.6, 1.7]), ("q", 1.3, [1.0, 1.0, 1.25, 1.5, 1.8]), ("r", 1.28, [1.0, 1.1, 1.3, 1.4, 1.45]))
    for v, y in zip([1, 2, 4, 8, 16], ys))
CROSSINGS = """workload,axis,paper_speedup,default_value,default_speedup,crossing_value,lo,hi
p,batch,1.3,4,1.2,5.5,4,8
q,batch,1.3,4,1.25,4.8,4,8
r,batch,1.28,4,1.3,3.8,2,4
"""


class Sensitivity(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        with tempfile.TemporaryDirectory() as d:
            write(d, {"sensitivity_summary.csv": SENSITIVITY, "sensitivity_crossings.csv": CROSSINGS})
            cls.fig = dict(themis_sensitivity.figures(themis_sensitivity.load(d)))["fig12_sensitivity.svg"]

    def test_paper_speedups_in_the_legend_not_over_the_data(self):
        batch = self.fig.axes[0]
        self.assertEqual([t.get_text() for t in batch.get_legend().get_texts()],
                         ["p: paper 1.3x, reached at batch 5.5", "q: paper 1.3x, reached at batch 4.8",
                          "r: paper 1.28x, reached at batch 3.8"])
        self.assertEqual([t.get_text() for t in batch.texts], [])

    def test_equal_paper_levels_dash_in_turns(self):
        batch = self.fig.axes[0]
        paper = {l.get_gid(): l for l in batch.get_lines() if (l.get_gid() or "").endswith("|paper")}
        self.assertEqual(sorted(paper), ["p|batch|paper", "q|batch|paper", "r|batch|paper"])
        self.assertNotEqual(paper["p|batch|paper"]._dash_pattern, paper["q|batch|paper"]._dash_pattern)

    def test_nothing_hidden(self):
        self.assertEqual(problems(self.fig), [])


# Jobs a and b: the same iteration times from the same start (one trace); c another, with the same
# alone time as a and b. Links 0->4 and 4->0 carry the same traffic; 4->5 is at 100 % in both windows,
# 0->4 in the second: lines at 100 % on top of each other and where the legend used to be.
JOBS_JSON = """{"fabric": {"name": "f"}, "jobs": [
  {"name": "a", "start_ns": 0, "iteration_times_ns": [2e6, 3e6], "alone_iteration_time_ns": 2e6},
  {"name": "b", "start_ns": 0, "iteration_times_ns": [2e6, 3e6], "alone_iteration_time_ns": 2e6},
  {"name": "c", "start_ns": 1e6, "iteration_times_ns": [4e6], "alone_iteration_time_ns": 2e6}],
 "links": [{"from": 0, "to": 4, "utilization": 0.75}, {"from": 4, "to": 0, "utilization": 0.75},
           {"from": 4, "to": 5, "utilization": 1.0}]}
"""
LINKS_OVER_TIME = """window_start_ns,window_end_ns,link,from,to,gbps,bytes,utilization
0,1000000,0,0,4,8,500000,0.5
1000000,2000000,0,0,4,8,1000000,1
0,1000000,1,4,0,8,500000,0.5
1000000,2000000,1,4,0,8,1000000,1
0,1000000,2,4,5,8,1000000,1
1000000,2000000,2,4,5,8,1000000,1
"""


class Jobs(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        with tempfile.TemporaryDirectory() as d:
            write(d, {"jobs.json": JOBS_JSON, "links_over_time.csv": LINKS_OVER_TIME})
            [(_, cls.fig)] = jobs.figures(jobs.load(d))

    def test_identical_traces_are_one_labelled_line(self):
        left, _, over_time = self.fig.axes
        labelled = {l.get_label(): (list(l.get_xdata()), list(l.get_ydata())) for l in left.get_lines()
                    if not l.get_label().startswith("_")}
        # a and b: iterations end at 2 and 5 ms, of 2 and 3 ms; c's one iteration ends at 1 + 4 ms.
        self.assertEqual(labelled, {"a, b (identical)": ([2.0, 5.0], [2.0, 3.0]), "c": ([5.0], [4.0])})
        steps = {l.get_label(): list(l.get_ydata()) for l in over_time.get_lines()}
        # Busiest first: 4->5 (100 %), then 0->4 and 4->0 (75 %), which are the same steps.
        self.assertEqual(steps, {"4->5": [100.0] * 4, "0->4, 4->0 (identical)": [50.0, 50.0, 100.0, 100.0]})

    def test_equal_alone_times_dash_in_turns(self):
        left = self.fig.axes[0]
        alone = [l for l in left.get_lines() if l.get_label().startswith("_")]
        self.assertEqual([list(l.get_ydata()) for l in alone], [[2.0, 2.0], [2.0, 2.0]])  # one per trace
        self.assertNotEqual(alone[0]._dash_pattern, alone[1]._dash_pattern)

    def test_nothing_hidden(self):
        self.assertEqual(problems(self.fig), [])


# Long network names (file paths) under the bars, and one fabric's single bar.
WHATIF = """network,shape,npus,world,scheduler,iteration_time_ns,compute_ns,exposed_comm_ns,bytes_per_npu
host,2,2,2,baseline,2000000.000,1000000.000,1000000.000,1.0
host,2,2,2,themis-scf,1500000.000,1000000.000,500000.000,1.0
examples/jobs/torus-2x4.yaml,2x4,8,8,baseline,1200000.000,1000000.000,200000.000,1.0
examples/jobs/torus-2x4.yaml,2x4,8,8,themis-scf,1100000.000,1000000.000,100000.000,1.0
examples/jobs/expander-16.yaml,16,16,16,flow,3000000.000,1000000.000,2000000.000,1.0
"""


class CaptureWhatIf(unittest.TestCase):
    def test_nothing_hidden(self):
        with tempfile.TemporaryDirectory() as d:
            write(d, {"whatif.csv": WHATIF})
            [(_, fig)] = capture_whatif.figures(capture_whatif.load(d))
        self.assertEqual(problems(fig), [])


if __name__ == "__main__":
    unittest.main(verbosity=2)
