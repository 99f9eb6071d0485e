#!/usr/bin/env python3
"""chorus.plot (python/chorus/plot) on small hand-written CSVs: what is drawn (bar heights, stacked
segments, lines, legend labels, panels) equals values worked out by hand from the CSV; malformed
input exits with status 2 naming the file, line and column; the same CSV gives byte-identical SVG.

usage: test_plot.py   (with an interpreter that has matplotlib: python3-matplotlib)
"""
import contextlib
import io
import os
import subprocess
import sys
import tempfile
import unittest
import xml.etree.ElementTree as ET

PYTHON_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python")
sys.path.insert(0, PYTHON_DIR)

from chorus.plot import capture_whatif, profile, syndicate, syndicate_real, themis, themis_real, themis_sensitivity, themis_workloads, topoopt, topoopt_heatmaps, topoopt_iterations  # noqa: E402
from chorus.plot.__main__ import main as plot_main  # noqa: E402

# Two topologies x two sizes x two schedulers at 4 chunks, a chunk sweep on A, an activity trace.
MICROBENCH = """study,topology,size_bytes,scheduler,chunks,time_ns,ideal_time_ns,avg_bw_utilization
sizes,A,100000000,baseline,4,2500000.000,1000000.000,0.500000
sizes,A,100000000,themis-scf,4,1250000.000,1000000.000,0.900000
sizes,B,100000000,baseline,4,4000000.000,1000000.000,0.700000
sizes,B,100000000,themis-scf,4,2000000.000,1000000.000,0.800000
sizes,A,1000000000,baseline,4,25000000.000,10000000.000,0.400000
sizes,A,1000000000,themis-scf,4,12500000.000,10000000.000,1.000000
sizes,B,1000000000,baseline,4,40000000.000,10000000.000,0.600000
sizes,B,1000000000,themis-scf,4,20000000.000,10000000.000,0.950000
chunk_sweep,A,100000000,baseline,2,2500000.000,1000000.000,0.300000
chunk_sweep,A,100000000,themis-scf,2,2500000.000,1000000.000,0.600000
chunk_sweep,A,100000000,ideal,2,1000000.000,1000000.000,1.000000
chunk_sweep,A,100000000,baseline,8,2500000.000,1000000.000,0.350000
chunk_sweep,A,100000000,themis-scf,8,2500000.000,1000000.000,0.850000
chunk_sweep,A,100000000,ideal,8,1000000.000,1000000.000,1.000000
"""
ACTIVITY = """scheduler,dim,window_start_ns,activity_rate
baseline,0,0,1.0000
baseline,0,100000,0.5000
baseline,1,0,0.2500
baseline,1,100000,0.0000
themis-scf,0,0,1.0000
themis-scf,1,0,1.0000
ideal,0,0,1.0000
"""
STUDY = '{"activity_topology": "A", "activity_size_bytes": 1e9}\n'

# w1 on T: baseline 10 ms = 2 + 4 + 3 + 1; themis-scf 8 ms = 2 + 4 + 1 + 0.5 and 0.5 outside the
# four parts. w2 on T and U, parts add up.
WORKLOADS = """workload,topology,scheduler,iteration_time_ns,compute_ns,forward_compute_ns,backward_compute_ns,exposed_comm_ns,exposed_dp_comm_ns,exposed_mp_comm_ns,avg_bw_utilization
w1,T,baseline,10000000.000,6000000.000,2000000.000,4000000.000,4000000.000,3000000.000,1000000.000,0.5
w1,T,themis-scf,8000000.000,6500000.000,2000000.000,4000000.000,1500000.000,1000000.000,500000.000,0.9
w2,T,baseline,4000000.000,3000000.000,1000000.000,2000000.000,1000000.000,1000000.000,0.000,0.5
w2,T,themis-scf,3000000.000,3000000.000,1000000.000,2000000.000,0.000,0.000,0.000,0.9
w2,U,baseline,5000000.000,3000000.000,1000000.000,2000000.000,2000000.000,1500000.000,500000.000,0.5
w2,U,themis-scf,4000000.000,3000000.000,1000000.000,2000000.000,1000000.000,500000.000,500000.000,0.9
"""
# w1 (paper 1.49x): batch 1, 2, 4 (default), compute 1 (default), 4; crossing at batch 2.5.
# a (no paper number): compute only.
SENSITIVITY = """workload,axis,value,is_default,mean_speedup,min_speedup,max_speedup,baseline_compute_ns,baseline_exposed_comm_ns,paper_speedup
w1,batch,4,1,1.1,1.0,1.2,1000.000,10.000,1.49
w1,batch,1,0,2.0,1.5,2.5,250.000,500.000,1.49
w1,batch,2,0,1.6,1.2,2.0,500.000,200.000,1.49
w1,compute,1,1,1.1,1.0,1.2,1000.000,10.000,1.49
w1,compute,4,0,1.3,1.1,1.5,250.000,100.000,1.49
a,compute,0.5,0,1.05,1.0,1.1,2000.000,0.000,
a,compute,1,1,1.2,1.0,1.4,1000.000,0.000,
"""
CROSSINGS = """workload,axis,paper_speedup,default_value,default_speedup,crossing_value,lo,hi
w1,batch,1.49,4,1.100000,2.5,2,4
w1,compute,1.49,1,1.100000,,,
"""
REAL = """topology,scheduler,ranks,size_bytes,chunks,measured_ns,predicted_ns,ratio,check
N,baseline,4,65536,2,4000000,5000000,0.8000,passed
N,themis-scf,4,65536,2,2000000,4000000,0.5000,passed
"""


def write(directory, files):
    for name, text in files.items():
        with open(os.path.join(directory, name), "w") as f:
            f.write(text)


def by_name(pairs):
    return dict(pairs)


def bars(ax, label):
    """Heights of the bars of the legend entry `label` on `ax`."""
    for c in ax.containers:
        if c.get_label() == label:
            return [round(p.get_height(), 9) for p in c.patches]
    raise AssertionError(f"no bars labelled {label}: {[c.get_label() for c in ax.containers]}")


def run_cli(*args):
    env = dict(os.environ, PYTHONPATH=PYTHON_DIR)
    return subprocess.run([sys.executable, "-m", "chorus.plot", *args], capture_output=True, text=True, env=env,
                          timeout=60)


class Themis(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        with tempfile.TemporaryDirectory() as d:
            write(d, {"microbench.csv": MICROBENCH, "activity.csv": ACTIVITY, "study.json": STUDY})
            cls.figs = by_name(themis.figures(themis.load(d)))

    def test_files(self):
        self.assertEqual(sorted(self.figs), sorted(["fig8_time_100MB.svg", "fig8_time_1000MB.svg",
                                                    "fig11_utilization.svg", "fig10_chunks.svg", "fig9_activity.svg"]))

    def test_fig8_bar_heights_are_times_in_ms(self):
        ax = self.figs["fig8_time_100MB.svg"].axes[0]
        self.assertEqual(bars(ax, "baseline"), [2.5, 4.0])      # A, B
        self.assertEqual(bars(ax, "themis-scf"), [1.25, 2.0])
        self.assertEqual([t.get_text() for t in ax.get_xticklabels()], ["A", "B"])
        self.assertIn("Fig. 8", ax.get_title())
        self.assertIn("100 MB", ax.get_title())
        self.assertEqual(ax.get_ylabel(), "time (ms)")
        self.assertEqual(bars(self.figs["fig8_time_1000MB.svg"].axes[0], "baseline"), [25.0, 40.0])

    def test_fig11_mean_utilization_over_topologies(self):
        ax = self.figs["fig11_utilization.svg"].axes[0]
        self.assertEqual(bars(ax, "baseline"), [60.0, 50.0])      # (50+70)/2, (40+60)/2
        self.assertEqual(bars(ax, "themis-scf"), [85.0, 97.5])    # (90+80)/2, (100+95)/2
        self.assertEqual([t.get_text() for t in ax.get_xticklabels()], ["100 MB", "1 GB"])

    def test_fig10_lines_without_ideal(self):
        ax = self.figs["fig10_chunks.svg"].axes[0]
        lines = {l.get_label(): (list(l.get_xdata()), list(l.get_ydata())) for l in ax.get_lines()}
        self.assertEqual(sorted(lines), ["A baseline", "A themis-scf"])
        self.assertEqual(lines["A themis-scf"], ([2, 8], [60.0, 85.0]))
        self.assertEqual(ax.get_xscale(), "log")

    def test_fig9_one_panel_per_scheduler_but_ideal(self):
        axes = self.figs["fig9_activity.svg"].axes
        self.assertEqual(len(axes), 2)
        self.assertIn("baseline", axes[0].get_title())
        self.assertIn("1 GB", axes[0].get_title())
        # activity.csv numbers dimensions from 0, as the CLI and the figure do.
        self.assertEqual([l.get_label() for l in axes[0].get_lines()], ["dim 0", "dim 1"])
        dim1 = [l for l in axes[0].get_lines() if l.get_label() == "dim 1"][0]
        self.assertEqual(list(dim1.get_xdata()), [0.0, 100.0])  # us
        self.assertEqual(list(dim1.get_ydata()), [25.0, 0.0])
        self.assertEqual(axes[1].get_xlabel(), "time (us)")


# N (dimension network) under two schedulers, F (a fabric) once: 3 + 1 = 4 ms, 3 + 0.5, 3 + 2.
WHATIF = """network,shape,npus,world,scheduler,iteration_time_ns,compute_ns,exposed_comm_ns,bytes_per_npu
N,4x4,16,16,baseline,4000000.000,3000000.000,1000000.000,100.0
N,4x4,16,16,themis-scf,3500000.000,3000000.000,500000.000,100.0
F,16,16,16,flow,5000000.000,3000000.000,2000000.000,100.0
"""


class CaptureWhatIf(unittest.TestCase):
    def figure(self, text):
        with tempfile.TemporaryDirectory() as d:
            write(d, {"whatif.csv": text})
            return by_name(capture_whatif.figures(capture_whatif.load(d)))

    def test_stacks_are_compute_then_exposed_communication_in_ms(self):
        ax = self.figure(WHATIF)["whatif.svg"].axes[0]
        seg = {p.get_gid(): (round(p.get_y(), 9), round(p.get_height(), 9)) for p in ax.patches if p.get_gid()}
        self.assertEqual(seg["N|baseline|compute"], (0.0, 3.0))
        self.assertEqual(seg["N|baseline|exposed communication"], (3.0, 1.0))
        self.assertEqual(seg["N|themis-scf|exposed communication"], (3.0, 0.5))
        self.assertEqual(seg["F|flow|exposed communication"], (3.0, 2.0))
        self.assertEqual(len(seg), 3 * 2)
        # the fabric's one bar is centred on its group (x = 1), N's two around 0
        xs = {g: round(p.get_x() + p.get_width() / 2, 9) for p in ax.patches if (g := p.get_gid())}
        self.assertEqual(xs["F|flow|compute"], 1.0)
        self.assertEqual(xs["N|baseline|compute"] + xs["N|themis-scf|compute"], 0.0)
        self.assertEqual([t.get_text() for t in ax.get_xticklabels()], ["baseline", "themis-scf", "flow"])

    def test_parts_that_do_not_make_the_iteration_are_refused(self):
        bad = WHATIF.replace("N,4x4,16,16,baseline,4000000.000", "N,4x4,16,16,baseline,4100000.000")
        with tempfile.TemporaryDirectory() as d:
            write(d, {"whatif.csv": bad})
            err = io.StringIO()
            with contextlib.redirect_stderr(err):
                self.assertEqual(plot_main(["capture-whatif", d, "-q"]), 2)
            self.assertIn("whatif.csv: line 2: compute_ns + exposed_comm_ns must be iteration_time_ns",
                          err.getvalue())


class Workloads(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        with tempfile.TemporaryDirectory() as d:
            write(d, {"workloads.csv": WORKLOADS})
            cls.figs = by_name(themis_workloads.figures(themis_workloads.load(d)))

    def segments(self, ax):
        return {p.get_gid(): (round(p.get_y(), 9), round(p.get_height(), 9)) for p in ax.patches if p.get_gid()}

    def test_files_and_panels(self):
        self.assertEqual(sorted(self.figs), ["fig12.svg", "fig12_w1.svg", "fig12_w2.svg"])
        self.assertEqual(len(self.figs["fig12.svg"].axes), 2)
        self.assertEqual([a.get_title() for a in self.figs["fig12.svg"].axes],
                         ["w1 (Themis Fig. 12)", "w2 (Themis Fig. 12)"])

    def test_stacks_are_the_parts_over_the_baseline(self):
        seg = self.segments(self.figs["fig12_w1.svg"].axes[0])
        # (bottom, height), divided by the baseline's 10 ms
        self.assertEqual(seg["T|baseline|forward compute"], (0.0, 0.2))
        self.assertEqual(seg["T|baseline|backward compute"], (0.2, 0.4))
        self.assertEqual(seg["T|baseline|exposed DP comm"], (0.6, 0.3))
        self.assertEqual(seg["T|baseline|exposed MP comm"], (0.9, 0.1))
        self.assertEqual(seg["T|baseline|optimizer / other"], (1.0, 0.0))
        self.assertEqual(seg["T|themis-scf|exposed DP comm"], (0.6, 0.1))
        self.assertEqual(seg["T|themis-scf|exposed MP comm"], (0.7, 0.05))
        self.assertEqual(seg["T|themis-scf|optimizer / other"], (0.75, 0.05))
        self.assertEqual(len(seg), 2 * 5)

    def test_second_topology_normalized_to_its_own_baseline(self):
        seg = self.segments(self.figs["fig12_w2.svg"].axes[0])
        self.assertEqual(len(seg), 2 * 2 * 4)  # no "other" in w2
        self.assertEqual(seg["U|themis-scf|exposed DP comm"], (0.6, 0.1))   # 0.5 ms / 5 ms
        self.assertEqual(seg["U|themis-scf|exposed MP comm"], (0.7, 0.1))
        self.assertEqual(seg["T|baseline|exposed DP comm"], (0.75, 0.25))   # 1 ms / 4 ms

    def test_legend(self):
        four = ["forward compute", "backward compute", "exposed DP comm", "exposed MP comm"]
        legend = lambda fig: [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
        self.assertEqual(legend(self.figs["fig12_w2.svg"]), four)
        self.assertEqual(legend(self.figs["fig12_w1.svg"]), four + ["optimizer / other"])
        self.assertEqual(legend(self.figs["fig12.svg"]), four + ["optimizer / other"])

    def test_bar_labels(self):
        ax = self.figs["fig12_w2.svg"].axes[0]
        self.assertEqual([t.get_text() for t in ax.get_xticklabels()], ["base", "scf", "base", "scf"])


class Sensitivity(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        with tempfile.TemporaryDirectory() as d:
            write(d, {"sensitivity_summary.csv": SENSITIVITY, "sensitivity_crossings.csv": CROSSINGS})
            cls.figs = by_name(themis_sensitivity.figures(themis_sensitivity.load(d)))

    def line(self, ax, gid):
        found = [l for l in ax.get_lines() if l.get_gid() == gid]
        self.assertEqual(len(found), 1, gid)
        return list(found[0].get_xdata()), list(found[0].get_ydata())

    def test_panels_and_lines_sorted_by_value(self):
        self.assertEqual(list(self.figs), ["fig12_sensitivity.svg"])
        batch, compute = self.figs["fig12_sensitivity.svg"].axes
        self.assertEqual(self.line(batch, "w1|batch"), ([1.0, 2.0, 4.0], [2.0, 1.6, 1.1]))
        self.assertEqual(self.line(compute, "w1|compute"), ([1.0, 4.0], [1.1, 1.3]))
        self.assertEqual(self.line(compute, "a|compute"), ([0.5, 1.0], [1.05, 1.2]))
        self.assertEqual([l.get_gid() for l in batch.get_lines() if l.get_gid() == "a|batch"], [])
        self.assertEqual(batch.get_xscale(), "log")
        # The paper's speedup and where it is reached (crossings: 2.5 on batch, none on compute) in the legend.
        self.assertEqual([t.get_text() for t in compute.get_legend().get_texts()], ["w1: paper 1.49x, not reached", "a"])
        self.assertEqual([t.get_text() for t in batch.get_legend().get_texts()], ["w1: paper 1.49x, reached at batch 2.5"])

    def test_default_paper_and_crossing_marks(self):
        batch, compute = self.figs["fig12_sensitivity.svg"].axes
        self.assertEqual(self.line(batch, "w1|batch|default"), ([4.0], [1.1]))
        self.assertEqual(self.line(compute, "a|compute|default"), ([1.0], [1.2]))
        self.assertEqual(self.line(batch, "w1|batch|paper")[1], [1.49, 1.49])
        self.assertEqual(self.line(batch, "w1|batch|crossing"), ([2.5], [1.49]))
        # Not reached on the compute axis, no paper number for a: no star.
        self.assertEqual([l for l in compute.get_lines() if l.get_gid() and l.get_gid().endswith("|crossing")], [])
        self.assertEqual([l for l in compute.get_lines() if l.get_gid() == "a|compute|paper"], [])

    def test_bad_axis_is_refused(self):
        with tempfile.TemporaryDirectory() as d:
            write(d, {"sensitivity_summary.csv": SENSITIVITY.replace("w1,compute,4,", "w1,rate,4,"),
                      "sensitivity_crossings.csv": CROSSINGS})
            with self.assertRaisesRegex(Exception, "sensitivity_summary.csv: line 6: axis must be batch or compute"):
                themis_sensitivity.figures(themis_sensitivity.load(d))


class Real(unittest.TestCase):
    def test_times_and_speedups(self):
        with tempfile.TemporaryDirectory() as d:
            write(d, {"real_vs_sim.csv": REAL})
            figs = by_name(themis_real.figures(themis_real.load(d)))
        ax = figs["real_vs_sim.svg"].axes[0]
        self.assertEqual(bars(ax, "measured (real ranks)"), [4.0, 2.0])
        self.assertEqual(bars(ax, "predicted (simulator)"), [5.0, 4.0])
        ax = figs["speedup.svg"].axes[0]
        self.assertEqual(bars(ax, "measured (real ranks)"), [2.0])
        self.assertEqual(bars(ax, "predicted (simulator)"), [1.25])


COST = """fabric,servers,degree,bandwidth_gbps,server_gbps,cost_usd
ideal-fat-tree,128,4,100,400,2000000
ideal-fat-tree,432,4,100,400,8000000
topoopt-oneshot,432,4,100,400,1000000
topoopt-oneshot,128,4,100,400,500000
ideal-fat-tree,128,8,200,1600,4000000
cost-equivalent-fat-tree,128,8,200,700,3000000
"""


class TopoOpt(unittest.TestCase):
    def test_fig11_one_panel_per_degree_lines_in_millions(self):
        with tempfile.TemporaryDirectory() as d:
            write(d, {"cost.csv": COST})
            figs = by_name(topoopt.figures(topoopt.load(d)))
        axes = figs["fig11_cost.svg"].axes
        self.assertEqual(len(axes), 2)
        self.assertIn("d = 4, B = 100 Gbps", axes[0].get_title())
        self.assertIn("d = 8, B = 200 Gbps", axes[1].get_title())
        lines = {l.get_label(): (list(l.get_xdata()), list(l.get_ydata())) for l in axes[0].get_lines()}
        self.assertEqual(lines["TopoOpt-oneshot"], ([128, 432], [0.5, 1.0]))  # sorted by servers, M$
        self.assertEqual(lines["Ideal Fat-tree"], ([128, 432], [2.0, 8.0]))
        self.assertEqual(axes[0].get_yscale(), "log")
        self.assertEqual(sorted(l.get_label() for l in axes[1].get_lines()), ["Cost-equiv. Fat-tree", "Ideal Fat-tree"])

    def test_zero_cost_is_refused(self):
        with tempfile.TemporaryDirectory() as d:
            write(d, {"cost.csv": COST.replace("500000", "0")})
            with self.assertRaises(Exception) as e:
                topoopt.figures(topoopt.load(d))
            self.assertIn("line 5", str(e.exception))


ITERATIONS = """model,fabric,servers,degree,bandwidth_gbps,iteration_ms
topoopt-dlrm,ideal-fat-tree,16,4,100,50
topoopt-dlrm,ideal-fat-tree,16,4,10,500
topoopt-dlrm,topoopt-oneshot,16,4,10,580
topoopt-dlrm,topoopt-oneshot,16,4,100,60
topoopt-bert,ideal-fat-tree,16,4,10,300
"""


class TopoOptIterations(unittest.TestCase):
    def test_one_panel_per_model_lines_per_fabric_in_seconds(self):
        with tempfile.TemporaryDirectory() as d:
            write(d, {"iterations.csv": ITERATIONS})
            figs = by_name(topoopt_iterations.figures(topoopt_iterations.load(d)))
        axes = figs["fig12_13_iterations.svg"].axes
        self.assertEqual(len(axes), 2)  # one degree x two models, in file order
        self.assertIn("DLRM, 16 servers, d = 4", axes[0].get_title())
        self.assertIn("BERT", axes[1].get_title())
        lines = {l.get_label(): (list(l.get_xdata()), list(l.get_ydata())) for l in axes[0].get_lines()}
        self.assertEqual(lines["TopoOpt-oneshot"], ([10, 100], [0.58, 0.06]))  # sorted by bandwidth, seconds
        self.assertEqual(lines["Ideal Fat-tree"], ([10, 100], [0.5, 0.05]))
        self.assertEqual(axes[0].get_xscale(), "log")

    def test_fig15_reconfig_line_and_oneshot_level(self):
        reconfig = ("model,fabric,reconfig_latency_us,iteration_ms\n"
                    "topoopt-dlrm,topoopt-oneshot,0,50\n"
                    "topoopt-dlrm,topoopt-reconfig,10000,900\n"
                    "topoopt-dlrm,topoopt-reconfig,1,49\n")
        with tempfile.TemporaryDirectory() as d:
            write(d, {"iterations.csv": ITERATIONS, "reconfig.csv": reconfig})
            figs = by_name(topoopt_iterations.figures(topoopt_iterations.load(d)))
        [ax] = figs["fig15_reconfig.svg"].axes
        lines = {l.get_label(): (list(l.get_xdata()), list(l.get_ydata())) for l in ax.get_lines()}
        self.assertEqual(lines["TopoOpt-reconfig"], ([1, 10000], [0.049, 0.9]))  # sorted by latency, seconds
        self.assertEqual(lines["TopoOpt-oneshot"][1], [0.05, 0.05])  # a horizontal line

    def test_non_positive_time_is_refused(self):
        with tempfile.TemporaryDirectory() as d:
            write(d, {"iterations.csv": ITERATIONS.replace(",580", ",0")})
            with self.assertRaises(Exception) as e:
                topoopt_iterations.figures(topoopt_iterations.load(d))
            self.assertIn("line 4", str(e.exception))


HEATMAPS = """figure,label,src,dst,bytes
fig4,p = 1,0,1,3000000000
fig4,p = 1,2,0,1000000000
fig4,p = 3,0,3,2000000000
fig9,TopoOpt d = 6,1,2,500000000
"""


class TopoOptHeatmaps(unittest.TestCase):
    def test_one_panel_per_permutation_cells_in_gb(self):
        with tempfile.TemporaryDirectory() as d:
            write(d, {"heatmaps.csv": HEATMAPS})
            figs = by_name(topoopt_heatmaps.figures(topoopt_heatmaps.load(d)))
        panels = [ax for ax in figs["fig4_heatmaps.svg"].axes if ax.get_images()]
        self.assertEqual([ax.get_title() for ax in panels], ["(a) p = 1", "(b) p = 3"])
        first = panels[0].get_images()[0].get_array()
        self.assertEqual(first.shape, (4, 4))  # servers 0..3 appear in fig4
        self.assertEqual(float(first[0][1]), 3.0)  # row = source, column = destination, GB
        self.assertEqual(float(first[2][0]), 1.0)
        self.assertTrue(first.mask[1][0])  # nothing sent: left blank
        self.assertEqual(panels[1].get_images()[0].get_clim(), (1.0, 3.0))  # one log scale per figure, nonzero cells
        [nine] = [ax for ax in figs["fig9_heatmap.svg"].axes if ax.get_images()]
        self.assertEqual(float(nine.get_images()[0].get_array()[1][2]), 0.5)

    def test_a_missing_figure_is_named(self):
        with tempfile.TemporaryDirectory() as d:
            write(d, {"heatmaps.csv": HEATMAPS.replace("fig9,", "fig4,")})
            with self.assertRaises(Exception) as e:
                topoopt_heatmaps.figures(topoopt_heatmaps.load(d))
            self.assertIn("fig9", str(e.exception))


SYNDICATE = """workload,topology,method,iteration_time_ns,throughput_vs_bsplus,compute_idle_fraction,paper_speedup
a2,testbed,bs+,10,1.0,0.45,1.44
a2,testbed,syndicate,8,1.25,0.274,1.44
fig6,fig6,bs+,13.5,1.0,0.6,0
fig6,fig6,syndicate,9.5,1.4210526,0.5,0
"""


class Syndicate(unittest.TestCase):
    def test_throughput_bars_and_paper_marks(self):
        with tempfile.TemporaryDirectory() as d:
            write(d, {"syndicate.csv": SYNDICATE})
            figs = by_name(syndicate.figures(syndicate.load(d)))
        ax = figs["fig11_throughput.svg"].axes[0]
        self.assertEqual([t.get_text() for t in ax.get_xticklabels()], ["a2", "fig6"])
        self.assertEqual(bars(ax, "BS+"), [1.0, 1.0])
        self.assertEqual(bars(ax, "SYNDICATE"), [1.25, 1.4210526])
        # The paper's 1.44x for a2 is a dashed line over its group; fig6 has none.
        dashed = [l for l in ax.get_lines() if l.get_linestyle() == "--"]
        self.assertEqual([list(l.get_ydata()) for l in dashed], [[1.44, 1.44]])
        ax = figs["fig14_compute_idle.svg"].axes[0]
        self.assertEqual([round(v, 6) for v in bars(ax, "SYNDICATE")], [27.4, 50.0])

    def test_unknown_method_is_refused(self):
        with tempfile.TemporaryDirectory() as d:
            write(d, {"syndicate.csv": SYNDICATE.replace("a2,testbed,syndicate", "a2,testbed,magic")})
            with self.assertRaises(Exception) as e:
                syndicate.figures(syndicate.load(d))
            self.assertIn("line 3", str(e.exception))


MOTIFS = """fig,case,variant,ranks,size_bytes,measured_ns,predicted_ns,ratio,check
fig16,all_reduce,ring,4,2097152,2000000,1000000,2,passed
fig16,all_reduce,ring,4,1048576,1000000,500000,2,passed
fig16,all_reduce,tree,4,1048576,3000000,1500000,2,passed
fig17,all_to_all,1-way,4,1048576,1000000,1000000,1,passed
fig18,all_reduce + all_to_all,one backend (shm),4,8388608,4000000,3000000,1.33,passed
fig18,all_reduce + all_to_all,two backends (shm + gloo),4,8388608,5000000,2000000,2.5,passed
"""


class SyndicateReal(unittest.TestCase):
    def test_lines_per_variant_and_overlap_bars(self):
        with tempfile.TemporaryDirectory() as d:
            write(d, {"motifs.csv": MOTIFS})
            figs = by_name(syndicate_real.figures(syndicate_real.load(d)))
        ax = figs["fig16_all_reduce.svg"].axes[0]
        lines = {l.get_label(): (list(l.get_xdata()), list(l.get_ydata())) for l in ax.get_lines()}
        self.assertEqual(lines["ring (measured)"], ([1048576, 2097152], [1.0, 2.0]))  # sorted by size, ms
        self.assertEqual(lines["tree (predicted)"], ([1048576], [1.5]))
        self.assertEqual([t.get_text() for t in ax.get_xticklabels()], ["1 MiB", "2 MiB"])
        ax = figs["fig18_overlap.svg"].axes[0]
        self.assertEqual(bars(ax, "measured"), [4.0, 5.0])
        self.assertEqual(bars(ax, "predicted"), [3.0, 2.0])


PROFILE = """op,backend,calls_per_rank,bytes_per_rank,busy_ns_per_rank,queued_ns_per_rank,mean_call_ns,share
all_reduce,gloo,4,100,3000000,0,750000,0.5
all_reduce,shm,4,100,1000000,0,250000,0.1667
all_to_all_single,shm,2,50,2000000,0,1000000,0.3333
"""


class Profile(unittest.TestCase):
    def test_stacked_by_backend_in_ms(self):
        with tempfile.TemporaryDirectory() as d:
            write(d, {"profile.csv": PROFILE})
            figs = by_name(profile.figures(profile.load(d)))
        ax = figs["profile.svg"].axes[0]
        self.assertEqual([t.get_text() for t in ax.get_xticklabels()], ["all_reduce", "all_to_all_single"])
        self.assertEqual(bars(ax, "gloo"), [3.0, 0.0])
        self.assertEqual(bars(ax, "shm"), [1.0, 2.0])  # on top of gloo's, drawn from its bottom


class Cli(unittest.TestCase):
    def test_help(self):
        r = run_cli("--help")
        self.assertEqual(r.returncode, 0)
        for study in ("themis", "themis-workloads", "themis-real"):
            self.assertIn(study, r.stdout)

    def test_writes_svg_and_is_deterministic(self):
        with tempfile.TemporaryDirectory() as a, tempfile.TemporaryDirectory() as b:
            for d in (a, b):
                write(d, {"workloads.csv": WORKLOADS, "real_vs_sim.csv": REAL, "microbench.csv": MICROBENCH,
                          "activity.csv": ACTIVITY, "study.json": STUDY, "sensitivity_summary.csv": SENSITIVITY,
                          "sensitivity_crossings.csv": CROSSINGS})
                for study in ("themis", "themis-workloads", "themis-real", "themis-sensitivity"):
                    r = run_cli(study, d)
                    self.assertEqual(r.returncode, 0, r.stderr)
            names = sorted(n for n in os.listdir(a) if n.endswith(".svg"))
            self.assertEqual(len(names), 5 + 3 + 2 + 1)
            for n in names:
                with open(os.path.join(a, n), "rb") as fa, open(os.path.join(b, n), "rb") as fb:
                    data = fa.read()
                    self.assertEqual(data, fb.read(), n)
                self.assertEqual(ET.fromstring(data).tag, "{http://www.w3.org/2000/svg}svg", n)

    def bad(self, study, files, *needles):
        """The CLI's main() in this process (a subprocess per case would start matplotlib each time)."""
        with tempfile.TemporaryDirectory() as d:
            write(d, files)
            err = io.StringIO()
            with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
                status = plot_main([study, d])
            self.assertEqual(status, 2, err.getvalue())
            for needle in needles:
                self.assertIn(needle, err.getvalue())
            self.assertEqual([n for n in os.listdir(d) if n.endswith(".svg")], [])

    def test_missing_column(self):
        lines = WORKLOADS.splitlines()
        lines[0] = lines[0].replace(",exposed_mp_comm_ns", ",exposed_mp")
        self.bad("themis-workloads", {"workloads.csv": "\n".join(lines) + "\n"},
                 "workloads.csv: line 1: missing column 'exposed_mp_comm_ns'")

    def test_bad_number(self):
        text = MICROBENCH.replace("sizes,A,100000000,themis-scf,4,1250000.000", "sizes,A,100000000,themis-scf,4,fast")
        self.bad("themis", {"microbench.csv": text, "activity.csv": ACTIVITY, "study.json": STUDY},
                 "microbench.csv: line 3: column 'time_ns': 'fast' is not a number")

    def test_short_row(self):
        self.bad("themis-real", {"real_vs_sim.csv": REAL + "N,themis-fifo,4\n"}, "real_vs_sim.csv: line 4: 3 fields")

    def test_missing_file_and_json_field(self):
        self.bad("themis-real", {}, "real_vs_sim.csv: cannot read")
        self.bad("themis", {"microbench.csv": MICROBENCH, "activity.csv": ACTIVITY, "study.json": "{}"},
                 "study.json: missing field 'activity_topology'")
        self.bad("themis", {"microbench.csv": MICROBENCH, "activity.csv": ACTIVITY, "study.json": "{\n  x"},
                 "study.json: line 2: column 3")

    def test_no_baseline(self):
        text = "\n".join(l for l in WORKLOADS.splitlines() if not l.startswith("w2,U,baseline")) + "\n"
        self.bad("themis-workloads", {"workloads.csv": text}, "w2 on U: no baseline row")


if __name__ == "__main__":
    unittest.main(verbosity=2)
