"""`chorus reproduce themis-real`: a Themis schedule executed on real ranks (emulated networks)
beside the simulator's prediction.

Reads DIR/real_vs_sim.csv; writes real_vs_sim.svg (measured and predicted time per topology and
scheduler) and speedup.svg (speedup over the baseline of the same topology, measured and predicted).
"""
from chorus.plot._common import PlotInputError, grouped_bars, load_rows, new_figure, require, unique

def label_topologies(ax, rows):
    """Scheduler under each group, the topology once under its groups."""
    ax.set_xticks(range(len(rows)), [r["scheduler"] for r in rows], fontsize=8)
    for t in unique(r["topology"] for r in rows):
        xs = [i for i, r in enumerate(rows) if r["topology"] == t]
        ax.annotate(t, (sum(xs) / len(xs), 0), xycoords=("data", "axes fraction"), xytext=(0, -18),
                    textcoords="offset points", ha="center", va="top", fontsize=8)
        if xs[0] > 0:
            ax.axvline(xs[0] - 0.5, color="#bbbbbb", linewidth=0.8)


COLUMNS = {"topology": str, "scheduler": str, "measured_ns": float, "predicted_ns": float}


def load(directory):
    return load_rows(directory, "real_vs_sim.csv", COLUMNS)


def figures(data):
    rows, path = data["rows"], data["path"]
    require(rows, path, lambda r: r["measured_ns"] > 0 and r["predicted_ns"] > 0,
            "measured_ns and predicted_ns must be > 0")
    series = ["measured (real ranks)", "predicted (simulator)"]
    fig = new_figure(11, 4.4)
    ax = fig.add_subplot()
    grouped_bars(ax, [r["scheduler"] for r in rows], series,
                 [[r["measured_ns"] / 1e6, r["predicted_ns"] / 1e6] for r in rows])
    label_topologies(ax, rows)
    ax.set_title("All-reduce on emulated networks: measured (real ranks) vs predicted (simulator)")
    ax.set_xlabel("scheduler, topology", labelpad=16)
    ax.set_ylabel("time (ms)")
    ax.margins(y=0.15)
    ax.legend(loc="upper left", ncols=2)
    out = [("real_vs_sim.svg", fig)]

    base = {r["topology"]: r for r in rows if r["scheduler"] == "baseline"}
    others = [r for r in rows if r["scheduler"] != "baseline"]
    for r in others:
        if r["topology"] not in base:
            raise PlotInputError(f"{path}: topology {r['topology']}: no baseline row (speedups are over it)")
    fig = new_figure(11, 4.4)
    ax = fig.add_subplot()
    grouped_bars(ax, [r["scheduler"] for r in others], series,
                 [[base[r["topology"]]["measured_ns"] / r["measured_ns"],
                   base[r["topology"]]["predicted_ns"] / r["predicted_ns"]] for r in others])
    ax.axhline(1.0, color="#333333", linewidth=0.8)
    label_topologies(ax, others)
    ax.set_title("Speedup over baseline: measured vs predicted")
    ax.set_xlabel("scheduler, topology", labelpad=16)
    ax.set_ylabel("speedup over baseline (x)")
    ax.margins(y=0.15)
    ax.legend(loc="upper left", ncols=2)
    out.append(("speedup.svg", fig))
    return out
