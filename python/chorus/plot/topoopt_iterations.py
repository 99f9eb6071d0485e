"""`chorus reproduce topoopt`: TopoOpt's Figs. 12-13, training iteration time of each model on each
fabric as the link bandwidth grows, one row of panels per server degree d; and Fig. 15,
TopoOpt-reconfig's iteration time over the OCS reconfiguration latency beside TopoOpt-oneshot's.

Reads DIR/iterations.csv (and DIR/reconfig.csv when present); writes fig12_13_iterations.svg and
fig15_reconfig.svg (log-log axes, as in the paper).
"""
import os

from chorus.plot._common import colour, load_rows, new_figure, require, unique
from chorus.plot.topoopt import LABELS

COLUMNS = {"model": str, "fabric": str, "servers": int, "degree": int, "bandwidth_gbps": float, "iteration_ms": float}

MODEL_TITLES = {"topoopt-candle": "CANDLE", "topoopt-bert": "BERT", "topoopt-dlrm": "DLRM"}
MARKERS = "osD^vx*"


RECONFIG_COLUMNS = {"model": str, "fabric": str, "reconfig_latency_us": float, "iteration_ms": float}


def load(directory):
    data = load_rows(directory, "iterations.csv", COLUMNS)
    if os.path.exists(os.path.join(directory, "reconfig.csv")):
        data["reconfig"] = load_rows(directory, "reconfig.csv", RECONFIG_COLUMNS)
    return data


def fig15(data):
    rows, path = data["rows"], data["path"]
    require(rows, path, lambda r: r["iteration_ms"] > 0, "iteration_ms must be > 0", nonempty=True)
    models = unique(r["model"] for r in rows)
    fig = new_figure(4.6 * len(models), 3.8)
    axes = fig.subplots(1, len(models), squeeze=False)[0]
    for k, (model, ax) in enumerate(zip(models, axes)):
        pts = sorted((r["reconfig_latency_us"], r["iteration_ms"] / 1e3) for r in rows
                     if r["model"] == model and r["fabric"] == "topoopt-reconfig")
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", color=colour(0), label="TopoOpt-reconfig")
        for r in rows:
            if r["model"] == model and r["fabric"] == "topoopt-oneshot":
                ax.axhline(r["iteration_ms"] / 1e3, color=colour(1), label="TopoOpt-oneshot")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("reconfiguration latency (us)")
        ax.set_ylabel("training iteration time (s)")
        ax.set_title(f"({chr(ord('a') + k)}) {MODEL_TITLES.get(model, model)}")
        ax.legend(loc="upper left", fontsize=7)
    fig.suptitle("Impact of reconfiguration latency (TopoOpt Fig. 15; flow-level model)")
    return fig


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
    out = [("fig12_13_iterations.svg", fig)]
    if "reconfig" in data:
        out.append(("fig15_reconfig.svg", fig15(data["reconfig"])))
    return out
