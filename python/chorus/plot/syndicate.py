"""`chorus reproduce syndicate`: SYNDICATE's Fig. 11 (throughput of each method relative to BS+, per
model, with the paper's SYNDICATE speedup marked) and Fig. 14 (compute idling per method).

Reads DIR/syndicate.csv; writes fig11_throughput.svg and fig14_compute_idle.svg.
"""
from chorus.plot._common import grouped_bars, load_rows, new_figure, require, unique

COLUMNS = {"workload": str, "topology": str, "method": str, "iteration_time_ns": float, "throughput_vs_bsplus": float,
           "compute_idle_fraction": float, "paper_speedup": float}
METHODS = ["bs+", "fifo", "s-sched", "s-exec", "greedy", "syndicate"]
LABELS = {"bs+": "BS+", "fifo": "FIFO", "s-sched": "S-Sched", "s-exec": "S-Exec", "greedy": "greedy", "syndicate": "SYNDICATE"}


def load(directory):
    return load_rows(directory, "syndicate.csv", COLUMNS)


def figures(data):
    rows, path = data["rows"], data["path"]
    require(rows, path, lambda r: r["iteration_time_ns"] > 0, "iteration_time_ns must be > 0", nonempty=True)
    require(rows, path, lambda r: r["method"] in METHODS, f"method must be one of {', '.join(METHODS)}")
    workloads = unique(r["workload"] for r in rows)
    methods = [m for m in METHODS if any(r["method"] == m for r in rows)]
    value = {(r["workload"], r["method"]): r for r in rows}
    out = []

    fig = new_figure(max(6.0, 1.6 * len(workloads) + 2), 4.0)
    ax = fig.subplots()
    tput = [[value[(w, m)]["throughput_vs_bsplus"] if (w, m) in value else None for m in methods] for w in workloads]
    grouped_bars(ax, workloads, [LABELS[m] for m in methods], tput)
    n = len(methods)
    for i, w in enumerate(workloads):
        paper = max((r["paper_speedup"] for r in rows if r["workload"] == w), default=0)
        if paper > 0:
            ax.plot([i - 0.4, i + 0.4], [paper, paper], color="black", linestyle="--", linewidth=1)
            ax.annotate(f"paper {paper:g}x", (i, paper), textcoords="offset points", xytext=(0, 3), ha="center", fontsize=7)
    ax.axhline(1.0, color="grey", linewidth=0.8)
    top = max([v for group in tput for v in group if v is not None] + [r["paper_speedup"] for r in rows])
    ax.set_ylim(0, top * 1.3)
    ax.set_ylabel("throughput relative to BS+")
    ax.set_title(f"Training throughput (SYNDICATE Fig. 11; simulated, {n} methods)")
    ax.legend(loc="upper left", fontsize=7, ncol=3)
    out.append(("fig11_throughput.svg", fig))

    fig = new_figure(max(6.0, 1.6 * len(workloads) + 2), 4.0)
    ax = fig.subplots()
    idle = [[100 * value[(w, m)]["compute_idle_fraction"] if (w, m) in value else None for m in methods] for w in workloads]
    grouped_bars(ax, workloads, [LABELS[m] for m in methods], idle)
    ax.set_ylabel("compute idling (%)")
    ax.set_title("Compute idling (SYNDICATE Fig. 14; paper, A2: SYNDICATE 27.4 %, BS+ ~45 %)")
    ax.legend(loc="upper right", fontsize=7, ncol=3)
    out.append(("fig14_compute_idle.svg", fig))
    return out
