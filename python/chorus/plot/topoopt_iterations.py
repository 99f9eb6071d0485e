"""`chorus reproduce topoopt`: TopoOpt's Figs. 12-13, training iteration time of each model on each
fabric as the link bandwidth grows, one row of panels per server degree d.

Reads DIR/iterations.csv; writes fig12_13_iterations.svg (log-log axes, as in the paper).
"""
from chorus.plot._common import colour, load_rows, new_figure, require, unique
from chorus.plot.topoopt import LABELS

COLUMNS = {"model": str, "fabric": str, "servers": int, "degree": int, "bandwidth_gbps": float, "iteration_ms": float}

MODEL_TITLES = {"topoopt-candle": "CANDLE", "topoopt-bert": "BERT", "topoopt-dlrm": "DLRM"}
MARKERS = "osD^vx*"


def load(directory):
    return load_rows(directory, "iterations.csv", COLUMNS)


def figures(data):
    rows, path = data["rows"], data["path"]
    require(rows, path, lambda r: r["iteration_ms"] > 0, "iteration_ms must be > 0", nonempty=True)
    models = unique(r["model"] for r in rows)
    degrees = unique(r["degree"] for r in rows)
    fabrics = unique(r["fabric"] for r in rows)
    fig = new_figure(4.6 * len(models), 3.8 * len(degrees))
    axes = fig.subplots(len(degrees), len(models), squeeze=False)
    for i, d in enumerate(degrees):
        for k, model in enumerate(models):
            ax = axes[i][k]
            for j, fabric in enumerate(fabrics):
                pts = sorted((r["bandwidth_gbps"], r["iteration_ms"] / 1e3) for r in rows
                             if r["model"] == model and r["degree"] == d and r["fabric"] == fabric)
                if pts:
                    ax.plot([p[0] for p in pts], [p[1] for p in pts], marker=MARKERS[j % len(MARKERS)], color=colour(j),
                            label=LABELS.get(fabric, fabric), linewidth=1.2, markersize=4)
            ax.set_xscale("log")
            ax.set_yscale("log")
            ticks = sorted(unique(r["bandwidth_gbps"] for r in rows))
            ax.set_xticks(ticks, [f"{t:g}" for t in ticks])
            ax.set_xlabel("link bandwidth B (Gbps)")
            ax.set_ylabel("training iteration time (s)")
            servers = unique(r["servers"] for r in rows)[0]
            ax.set_title(f"({chr(ord('a') + k)}) {MODEL_TITLES.get(model, model)}, {servers} servers, d = {d}")
            if i == 0 and k == 0:
                ax.legend(loc="lower left", fontsize=7)
    fig.suptitle("Dedicated cluster (TopoOpt Figs. 12-13; flow-level model)")
    return [("fig12_13_iterations.svg", fig)]
