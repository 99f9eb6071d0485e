"""Themis Sec. 6.1 microbenchmarks (`chorus reproduce themis`): Figs. 8, 9, 10 and 11.

Reads DIR/microbench.csv (one row per study x topology x size x scheduler x chunks), DIR/activity.csv
(per-dimension activity of the Fig. 9 run; its `dim` column numbers dimensions from 0, as the CLI
and the figure do: dim 0, dim 1, ...) and DIR/study.json (the Fig. 9 run's topology and size).
Topologies, sizes and schedulers are drawn in the order they first appear in the CSV.
"""
import os

from chorus.plot._common import (PlotInputError, colour, grouped_bars, json_field, layered_widths, legend_beside,
                                 new_figure, read_csv, read_json, size_label, unique)

MICROBENCH_COLUMNS = {"study": str, "topology": str, "size_bytes": float, "scheduler": str, "chunks": int,
                      "time_ns": float, "avg_bw_utilization": float}
ACTIVITY_COLUMNS = {"scheduler": str, "dim": int, "window_start_ns": float, "activity_rate": float}


def load(directory):
    rows = read_csv(os.path.join(directory, "microbench.csv"), MICROBENCH_COLUMNS)
    activity = read_csv(os.path.join(directory, "activity.csv"), ACTIVITY_COLUMNS)
    path = os.path.join(directory, "study.json")
    study = read_json(path)
    return {
        "rows": rows,
        "activity": activity,
        "activity_topology": json_field(study, "activity_topology", str, path),
        "activity_size_bytes": json_field(study, "activity_size_bytes", float, path),
    }


def fig8_file(size_bytes):
    return f"fig8_time_{size_bytes / 1e6:.0f}MB.svg"


def figures(data):
    rows = data["rows"]
    sizes_rows = [r for r in rows if r["study"] == "sizes"]
    sweep_rows = [r for r in rows if r["study"] == "chunk_sweep"]
    if not sizes_rows:
        raise PlotInputError("microbench.csv: no rows of study 'sizes' (Figs. 8 and 11)")
    topologies = unique(r["topology"] for r in sizes_rows)
    sizes = unique(r["size_bytes"] for r in sizes_rows)
    schedulers = unique(r["scheduler"] for r in rows)
    chunks = sizes_rows[0]["chunks"]
    by_key = {(r["topology"], r["size_bytes"], r["scheduler"]): r for r in sizes_rows if r["chunks"] == chunks}
    out = []

    # Fig. 8: all-reduce time of each scheduler per topology, one figure per size.
    for size in sizes:
        fig = new_figure(9, 4.2)
        ax = fig.add_subplot()
        values = [[by_key[(t, size, s)]["time_ns"] / 1e6 if (t, size, s) in by_key else None for s in schedulers]
                  for t in topologies]
        grouped_bars(ax, topologies, schedulers, values)
        ax.set_title(f"All-reduce time, {size_label(size)} in {chunks} chunks (Themis Fig. 8)")
        ax.set_xlabel("topology (Themis Table 2)")
        ax.set_ylabel("time (ms)")
        ax.tick_params(axis="x", labelsize=8)
        ax.legend(title="scheduler", ncols=len(schedulers), loc="upper left")
        ax.margins(y=0.25)
        out.append((fig8_file(size), fig))

    # Fig. 11: avg. BW utilization per size, mean over the topologies of the size study.
    fig = new_figure(9, 4.2)
    ax = fig.add_subplot()
    values = []
    for size in sizes:
        group = []
        for s in schedulers:
            u = [by_key[(t, size, s)]["avg_bw_utilization"] for t in topologies if (t, size, s) in by_key]
            group.append(100 * sum(u) / len(u) if u else None)
        values.append(group)
    grouped_bars(ax, [size_label(s) for s in sizes], schedulers, values)
    ax.set_title("Average BW utilization, mean over the Table 2 topologies (Themis Fig. 11)")
    ax.set_xlabel("all-reduce size")
    ax.set_ylabel("avg. BW utilization (%)")
    ax.set_ylim(0, 115)
    ax.set_yticks(range(0, 101, 20))
    ax.legend(title="scheduler", ncols=len(schedulers), loc="upper left")
    out.append(("fig11_utilization.svg", fig))

    # Fig. 10: utilization vs chunks per collective (log2 axis), per sweep topology and scheduler.
    if sweep_rows:
        sweep_size = sweep_rows[0]["size_bytes"]
        fig = new_figure(9, 4.6)
        ax = fig.add_subplot()
        styles = ["-", "--", ":", "-."]
        for ti, t in enumerate(unique(r["topology"] for r in sweep_rows)):
            for si, s in enumerate(x for x in schedulers if x != "ideal"):
                pts = sorted((r["chunks"], 100 * r["avg_bw_utilization"]) for r in sweep_rows
                             if r["topology"] == t and r["scheduler"] == s)
                if pts:
                    ax.plot([p[0] for p in pts], [p[1] for p in pts], styles[ti % len(styles)], marker="o",
                            markersize=3, color=colour(si), label=f"{t} {s}")
        ax.set_xscale("log", base=2)
        ticks = sorted(unique(r["chunks"] for r in sweep_rows))
        ax.set_xticks(ticks, [str(c) for c in ticks])
        ax.minorticks_off()
        ax.set_title(f"BW utilization vs chunks per collective, {size_label(sweep_size)} all-reduce (Themis Fig. 10)")
        ax.set_xlabel("chunks per collective (log2)")
        ax.set_ylabel("avg. BW utilization (%)")
        ax.set_ylim(0, 105)
        ax.legend(loc="lower right", ncols=2)
        out.append(("fig10_chunks.svg", fig))

    # Fig. 9: activity per dimension over time, one panel per scheduler (ideal has no schedule).
    # Dimensions are often all busy at once (100 %): drawn widest first, each shows at the edges of
    # the later ones; the legend sits beside the top panel, never over a line.
    activity = data["activity"]
    act_schedulers = [s for s in unique(r["scheduler"] for r in activity) if s != "ideal"]
    dims = sorted(unique(r["dim"] for r in activity))
    widths = layered_widths(len(dims))
    fig = new_figure(9.6, 2.4 * max(len(act_schedulers), 1) + 0.4)
    axes = fig.subplots(max(len(act_schedulers), 1), 1, sharex=True, squeeze=False)[:, 0]
    for ax, s in zip(axes, act_schedulers):
        for d, width in zip(dims, widths):
            pts = sorted((r["window_start_ns"] / 1e3, 100 * r["activity_rate"]) for r in activity
                         if r["scheduler"] == s and r["dim"] == d)
            ax.step([p[0] for p in pts], [p[1] for p in pts], where="post", color=colour(d), linewidth=width,
                    label=f"dim {d}")
        ax.set_title(f"{s}: activity per dimension, {size_label(data['activity_size_bytes'])} all-reduce, "
                     f"{data['activity_topology']} (Themis Fig. 9)")
        ax.set_ylabel("activity rate (%)")
        ax.set_ylim(0, 105)
    legend_beside(axes[0], title="dimension")
    axes[-1].set_xlabel("time (us)")
    out.append(("fig9_activity.svg", fig))
    return out
