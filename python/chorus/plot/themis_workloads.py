"""Themis Sec. 6.2 real workloads (`chorus reproduce themis-workloads`): Fig. 12.

Reads DIR/workloads.csv (per workload x topology x scheduler, times per iteration in ns). Like the
paper's Fig. 12: one panel per model; per topology one bar per scheduler, stacked: forward compute,
backward compute, exposed DP communication, exposed MP communication (plus "optimizer / other" when
the iteration holds time outside those four, e.g. the optimizer step), each segment divided by the
iteration time of the baseline on the same topology, so a baseline bar is 1.0 high and a shorter
bar is the speedup's inverse. Writes fig12_<workload>.svg (one panel) and fig12.svg (all panels).
"""
import math

from matplotlib.patches import Patch

from chorus.plot._common import PlotInputError, load_rows, new_figure, unique

COLUMNS = {"workload": str, "topology": str, "scheduler": str, "iteration_time_ns": float,
           "forward_compute_ns": float, "backward_compute_ns": float, "exposed_dp_comm_ns": float,
           "exposed_mp_comm_ns": float}

# (legend label, CSV column or None for the rest of the iteration, colour)
SEGMENTS = [
    ("forward compute", "forward_compute_ns", "#56B4E9"),
    ("backward compute", "backward_compute_ns", "#0072B2"),
    ("exposed DP comm", "exposed_dp_comm_ns", "#E69F00"),
    ("exposed MP comm", "exposed_mp_comm_ns", "#D55E00"),
    ("optimizer / other", None, "#BBBBBB"),
]
KEY = ("bars: base = baseline, fifo = Themis+FIFO, scf = Themis+SCF, ideal = Ideal (100 % of every "
       "dimension's bandwidth, Themis Table 3)")
SHORT = {"baseline": "base", "themis-fifo": "fifo", "themis-scf": "scf", "ideal": "ideal"}


def load(directory):
    return load_rows(directory, "workloads.csv", COLUMNS)


def segments(row):
    """The stacked parts of one row (ns per iteration), in SEGMENTS order."""
    parts = [row[col] for _, col, _ in SEGMENTS[:-1]]
    rest = row["iteration_time_ns"] - sum(parts)
    # Rounding of the CSV (3 decimals per column) is not a segment.
    return parts + [rest if rest > 1e-6 * row["iteration_time_ns"] + 0.01 else 0.0]


def shown(rows):
    """Which SEGMENTS to draw: the four of the paper, and the rest when some row has one."""
    return [i < 4 or any(segments(r)[i] > 0 for r in rows) for i in range(len(SEGMENTS))]


def legend(ax, show, ncols):
    handles = [Patch(color=SEGMENTS[i][2], label=SEGMENTS[i][0]) for i in range(len(SEGMENTS)) if show[i]]
    ax.legend(handles=handles, loc="upper right", ncols=ncols)


def draw_panel(ax, workload, rows, path, show):
    topologies = unique(r["topology"] for r in rows)
    schedulers = unique(r["scheduler"] for r in rows)
    base = {r["topology"]: r["iteration_time_ns"] for r in rows if r["scheduler"] == "baseline"}
    by_key = {(r["topology"], r["scheduler"]): r for r in rows}
    n = len(schedulers)
    width = 0.8 / n
    ticks, labels = [], []
    for g, t in enumerate(topologies):
        if t not in base or not base[t] > 0:
            raise PlotInputError(f"{path}: {workload} on {t}: no baseline row with iteration_time_ns > 0 "
                                 "(bars are normalized to it)")
        for s_i, s in enumerate(schedulers):
            r = by_key.get((t, s))
            if r is None:
                continue
            x = g + (s_i - (n - 1) / 2) * width
            bottom = 0.0
            for i, value in enumerate(segments(r)):
                if not show[i]:
                    continue
                h = value / base[t]
                ax.bar(x, h, width * 0.92, bottom=bottom, color=SEGMENTS[i][2], edgecolor="white", linewidth=0.3,
                       gid=f"{t}|{s}|{SEGMENTS[i][0]}")
                bottom += h
            ticks.append(x)
            labels.append(SHORT.get(s, s))
    ax.set_xticks(ticks, labels, rotation=90, fontsize=7)
    ax.grid(axis="x", visible=False)
    ax.set_xlim(-0.5, len(topologies) - 0.5)
    for g, t in enumerate(topologies):
        ax.annotate(t, (g, 0), xycoords=("data", "axes fraction"), xytext=(0, -30), textcoords="offset points",
                    ha="center", va="top", fontsize=7)
    ax.set_title(f"{workload} (Themis Fig. 12)")
    ax.set_ylabel("iteration time / baseline's")
    ax.set_ylim(0, 1.25)


def figures(data):
    rows, path = data["rows"], data["path"]
    workloads = unique(r["workload"] for r in rows)
    out = []
    for w in workloads:
        fig = new_figure(9, 4.4)
        ax = fig.add_subplot()
        mine = [r for r in rows if r["workload"] == w]
        show = shown(mine)
        draw_panel(ax, w, mine, path, show)
        legend(ax, show, 5)
        fig.suptitle(KEY, fontsize=8)
        out.append((f"fig12_{w}.svg", fig))
    cols = 2 if len(workloads) > 1 else 1
    nrows = math.ceil(len(workloads) / cols)
    fig = new_figure(8 * cols, 4.2 * nrows + 0.4)
    axes = fig.subplots(nrows, cols, squeeze=False).flatten()
    show = shown(rows)
    for ax, w in zip(axes, workloads):
        draw_panel(ax, w, [r for r in rows if r["workload"] == w], path, show)
    for ax in axes[len(workloads):]:
        ax.set_visible(False)
    legend(axes[0], show, 3)
    fig.suptitle("Themis Fig. 12: iteration time breakdown per topology and scheduler, normalized to the "
                 "baseline\n" + KEY, fontsize=10)
    out.append(("fig12.svg", fig))
    return out
