"""`chorus reproduce themis-workloads --sensitivity`: Fig. 12 explained by a figure.

Reads DIR/sensitivity_summary.csv (Themis-SCF's speedup over the baseline, mean over Fig. 12's
topologies, per workload, axis and value) and DIR/sensitivity_crossings.csv (where that speedup
equals the paper's). Two panels, log2 x axes: (a) against the per-NPU batch, (b) against the compute
rate (multiplier on the A100 roofline). One line per workload (its own marker); the zoo's default point
circled; the paper's speedup a dashed line in the workload's colour (workloads with the same paper
speedup dash in turns along one level); where the line crosses it, a star. The paper's speedup and
where it is reached are in the legend (beside the panel), not written over the data.
Writes fig12_sensitivity.svg.
"""
import math

from matplotlib.ticker import FuncFormatter

from chorus.plot._common import (PlotInputError, colour, legend_beside, level_dashes, load_rows, new_figure, read_csv,
                                 require, unique)

COLUMNS = {"workload": str, "axis": str, "value": float, "is_default": int, "mean_speedup": float,
           "min_speedup": float, "max_speedup": float, "paper_speedup": str}
CROSSING_COLUMNS = {"workload": str, "axis": str, "paper_speedup": float, "crossing_value": str}
AXES = [("batch", "per-NPU batch (samples)", "(a) against the per-NPU batch"),
        ("compute", "compute rate (x the A100 roofline's FLOP/s and memory bandwidth)",
         "(b) against the compute rate")]
MARKERS = ["o", "s", "^", "D", "v", "P", "X", "<"]


def _optional_float(text, path, line, column):
    if text == "":
        return None
    try:
        value = float(text)
    except ValueError:
        raise PlotInputError(f"{path}: line {line}: column '{column}': '{text}' is not a number") from None
    if not math.isfinite(value):
        raise PlotInputError(f"{path}: line {line}: column '{column}': '{text}' is not a finite number")
    return value


def load(directory):
    data = load_rows(directory, "sensitivity_summary.csv", COLUMNS)
    for i, r in enumerate(data["rows"]):
        r["paper_speedup"] = _optional_float(r["paper_speedup"], data["path"], i + 2, "paper_speedup")
    path = data["path"].replace("sensitivity_summary.csv", "sensitivity_crossings.csv")
    crossings = read_csv(path, CROSSING_COLUMNS) if _has_rows(path) else []
    for i, c in enumerate(crossings):
        c["crossing_value"] = _optional_float(c["crossing_value"], path, i + 2, "crossing_value")
    data["crossings"], data["crossings_path"] = crossings, path
    return data


def _has_rows(path):
    """A crossings file may hold only its header (no workload has a paper number)."""
    try:
        with open(path, encoding="utf-8") as f:
            return sum(1 for line in f if line.strip()) > 1
    except OSError as e:
        raise PlotInputError(f"{path}: cannot read: {e.strerror}") from None


def figures(data):
    rows, path = data["rows"], data["path"]
    require(rows, path, lambda r: r["axis"] in ("batch", "compute"), "axis must be batch or compute", nonempty=True)
    require(rows, path, lambda r: r["value"] > 0, "value must be > 0 (log axis)")
    require(rows, path, lambda r: r["mean_speedup"] > 0, "mean_speedup must be > 0")
    workloads = unique(r["workload"] for r in rows)
    fig = new_figure(14, 4.6)
    axes = fig.subplots(1, 2)
    for ax, (axis, xlabel, title) in zip(axes, AXES):
        top = 1.0
        drawn = []  # (workload index, workload, rows on this axis)
        for k, w in enumerate(workloads):
            mine = sorted((r for r in rows if r["workload"] == w and r["axis"] == axis), key=lambda r: r["value"])
            if mine:
                drawn.append((k, w, mine))
        papers = [mine[0]["paper_speedup"] for _, _, mine in drawn if mine[0]["paper_speedup"] is not None]
        dashes = iter(level_dashes(papers))
        for k, w, mine in drawn:
            c = colour(k)
            xs, ys = [r["value"] for r in mine], [r["mean_speedup"] for r in mine]
            paper = mine[0]["paper_speedup"]
            label = w
            if paper is not None:
                crossing = [cr["crossing_value"] for cr in data["crossings"] if cr["workload"] == w and cr["axis"] == axis]
                reached = (f", reached at {axis} {crossing[0]:.3g}" if crossing and crossing[0] is not None
                           else ", not reached" if crossing else "")
                label = f"{w}: paper {paper:g}x{reached}"
            ax.plot(xs, ys, marker=MARKERS[k % len(MARKERS)], markersize=4, color=c, label=label, gid=f"{w}|{axis}")
            top = max(top, *ys)
            for r in mine:
                if r["is_default"]:
                    ax.plot([r["value"]], [r["mean_speedup"]], marker="o", markersize=9, fillstyle="none", color=c,
                            linestyle="none", gid=f"{w}|{axis}|default")
            if paper is not None:
                ax.axhline(paper, color=c, linestyle=next(dashes), linewidth=0.9, gid=f"{w}|{axis}|paper")
                top = max(top, paper)
            for cr in data["crossings"]:
                if cr["workload"] == w and cr["axis"] == axis and cr["crossing_value"] is not None:
                    ax.plot([cr["crossing_value"]], [cr["paper_speedup"]], marker="*", markersize=11, color=c,
                            linestyle="none", gid=f"{w}|{axis}|crossing")
        ax.set_xscale("log", base=2)
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        ax.set_xlabel(xlabel)
        ax.set_ylabel("Themis-SCF speedup over baseline (mean over topologies)")
        ax.set_title(title)
        ax.set_ylim(0.95, top * 1.08 + 0.02)
        ax.axhline(1.0, color="grey", linewidth=0.8, linestyle=":")  # dotted: data on 1.0 shows through
        if drawn:
            legend_beside(ax, fontsize=7)
    fig.suptitle("Themis Fig. 12 explained: speedup against the workload's compute/communication ratio "
                 "(dashed: the paper's speedup, in the legend; star: where it is reached; circle: the zoo's default)", fontsize=9)
    return [("fig12_sensitivity.svg", fig)]
