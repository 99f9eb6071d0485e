"""What-ifs from a capture (`chorus sim whatif --out DIR`, docs/capture.md).

Reads DIR/whatif.csv (per network x scheduler, times per iteration in ns; a fabric's row has the
scheduler "flow"). Per network a group of bars, one per scheduler, stacked: compute, then exposed
communication; the two make the iteration time (the simulator's split). Writes whatif.svg.
"""
import os

from matplotlib.patches import Patch

from chorus.plot._common import PlotInputError, legend_beside, load_rows, new_figure, require, unique

COLUMNS = {"network": str, "world": int, "scheduler": str, "iteration_time_ns": float, "compute_ns": float,
           "exposed_comm_ns": float}
SEGMENTS = [("compute", "compute_ns", "#0072B2"), ("exposed communication", "exposed_comm_ns", "#E69F00")]


def load(directory):
    data = load_rows(directory, "whatif.csv", COLUMNS)
    rows, path = data["rows"], data["path"]
    require(rows, path, lambda r: r["iteration_time_ns"] >= 0 and r["compute_ns"] >= 0 and r["exposed_comm_ns"] >= 0,
            "times must be >= 0", nonempty=True)
    # The CSV has 3 decimals per column: compute + exposed is the iteration to within their rounding.
    require(rows, path, lambda r: abs(r["compute_ns"] + r["exposed_comm_ns"] - r["iteration_time_ns"]) <= 0.01,
            "compute_ns + exposed_comm_ns must be iteration_time_ns")
    return data


def figures(data):
    rows, path = data["rows"], data["path"]
    networks = unique(r["network"] for r in rows)
    schedulers = unique(r["scheduler"] for r in rows)
    by_key = {(r["network"], r["scheduler"]): r for r in rows}
    if len(by_key) != len(rows):
        raise PlotInputError(f"{path}: a network and scheduler appear twice")
    fig = new_figure(max(6.0, 1.5 + 2.0 * len(networks)), 4.4)
    ax = fig.add_subplot()
    # Each network's bars centred on it: a fabric has one ("flow"), a dimension network one per scheduler.
    width = 0.8 / max(sum(1 for s in schedulers if (net, s) in by_key) for net in networks)
    ticks, labels = [], []
    for g, net in enumerate(networks):
        mine = [s for s in schedulers if (net, s) in by_key]
        for s_i, s in enumerate(mine):
            r = by_key[(net, s)]
            x = g + (s_i - (len(mine) - 1) / 2) * width
            bottom = 0.0
            for name, col, colour in SEGMENTS:
                h = r[col] / 1e6
                ax.bar(x, h, width * 0.92, bottom=bottom, color=colour, edgecolor="white", linewidth=0.3,
                       gid=f"{net}|{s}|{name}")
                bottom += h
            ticks.append(x)
            labels.append(s)
    ax.set_xticks(ticks, labels, rotation=90, fontsize=7)
    ax.grid(axis="x", visible=False)
    ax.set_xlim(-0.5, len(networks) - 0.5)
    worlds = {net: unique(r["world"] for r in rows if r["network"] == net) for net in networks}
    for g, net in enumerate(networks):
        # a file's name without its directories (the CSV has the path)
        ax.annotate(f"{os.path.basename(net)}\n{', '.join(str(w) for w in worlds[net])} ranks", (g, 0), xycoords=("data", "axes fraction"),
                    xytext=(0, -62), textcoords="offset points", ha="center", va="top", fontsize=7)
    ax.set_ylabel("time per iteration (ms)")
    ax.set_title("iteration time: compute and exposed communication, per network and scheduler")
    legend_beside(ax, handles=[Patch(color=c, label=name) for name, _, c in SEGMENTS])
    return [("whatif.svg", fig)]
