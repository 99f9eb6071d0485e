"""`chorus reproduce topoopt`: TopoOpt's Fig. 11, interconnect cost of each fabric as the cluster
grows, one panel per (degree, link bandwidth).

Reads DIR/cost.csv; writes fig11_cost.svg (log cost axis, as in the paper).
"""
from chorus.plot._common import colour, load_rows, new_figure, require, unique

COLUMNS = {"fabric": str, "servers": int, "degree": int, "bandwidth_gbps": float, "cost_usd": float}

LABELS = {
    "ideal-fat-tree": "Ideal Fat-tree",
    "cost-equivalent-fat-tree": "Cost-equiv. Fat-tree",
    "oversub-fat-tree": "Oversub. Fat-tree",
    "expander": "Expander",
    "sip-ml": "SiP-ML",
    "topoopt-oneshot": "TopoOpt-oneshot",
    "topoopt-reconfig": "TopoOpt-reconfig",
}
MARKERS = "osD^vx"


def load(directory):
    return load_rows(directory, "cost.csv", COLUMNS)


def figures(data):
    rows, path = data["rows"], data["path"]
    require(rows, path, lambda r: r["cost_usd"] > 0, "cost_usd must be > 0", nonempty=True)
    panels = unique((r["degree"], r["bandwidth_gbps"]) for r in rows)
    fig = new_figure(5.2 * len(panels), 4.0)
    axes = fig.subplots(1, len(panels), squeeze=False)[0]
    for k, ((d, b), ax) in enumerate(zip(panels, axes)):
        mine = [r for r in rows if r["degree"] == d and r["bandwidth_gbps"] == b]
        for j, fabric in enumerate(unique(r["fabric"] for r in mine)):
            pts = sorted((r["servers"], r["cost_usd"] / 1e6) for r in mine if r["fabric"] == fabric)
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker=MARKERS[j % len(MARKERS)], color=colour(j),
                    label=LABELS.get(fabric, fabric), linewidth=1.2, markersize=4)
        ax.set_yscale("log")
        servers = sorted(unique(r["servers"] for r in mine))
        ax.set_xticks(servers, [str(s) for s in servers])
        ax.set_xlabel("number of servers")
        ax.set_ylabel("interconnect cost (M$)")
        ax.set_title(f"({chr(ord('a') + k)}) d = {d}, B = {b:g} Gbps")
        if k == 0:
            ax.legend(loc="upper left")
    fig.suptitle("Interconnect cost (TopoOpt Fig. 11; NICs not included)")
    return [("fig11_cost.svg", fig)]
