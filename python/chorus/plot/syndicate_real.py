"""`chorus reproduce syndicate-real`: SYNDICATE's motif microbenchmarks on real ranks, measured beside
optSched's prediction: Fig. 16 (all-reduce as one ring motif vs tree-splined, by size), Fig. 17
(all-to-all 1-, 2-, 4-way splined, by size), Fig. 18 (an all-reduce and an all-to-all on one
backend vs two).

Reads DIR/motifs.csv; writes fig16_all_reduce.svg, fig17_all_to_all.svg, fig18_overlap.svg.
"""
from chorus.plot._common import colour, grouped_bars, load_rows, new_figure, require, unique

COLUMNS = {"fig": str, "case": str, "variant": str, "ranks": int, "size_bytes": float, "measured_ns": float,
           "predicted_ns": float, "check": str}


def load(directory):
    return load_rows(directory, "motifs.csv", COLUMNS)


def _binary(size):
    for unit, scale in (("GiB", 2 ** 30), ("MiB", 2 ** 20), ("KiB", 2 ** 10)):
        if size >= scale:
            return f"{size / scale:g} {unit}"
    return f"{size:g} B"


def _by_size(rows, fig, title, name):
    mine = [r for r in rows if r["fig"] == fig]
    fig_ = new_figure(6.0, 4.0)
    ax = fig_.subplots()
    for i, variant in enumerate(unique(r["variant"] for r in mine)):
        pts = sorted((r["size_bytes"], r["measured_ns"] / 1e6, r["predicted_ns"] / 1e6) for r in mine if r["variant"] == variant)
        xs = [p[0] for p in pts]
        ax.plot(xs, [p[1] for p in pts], marker="o", color=colour(i), label=f"{variant} (measured)")
        ax.plot(xs, [p[2] for p in pts], linestyle="--", color=colour(i), label=f"{variant} (predicted)")
    sizes = sorted(unique(r["size_bytes"] for r in mine))
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xticks(sizes, [_binary(s) for s in sizes])
    ax.set_xlabel("size per rank")
    ax.set_ylabel("time (ms)")
    ranks = mine[0]["ranks"] if mine else 0
    ax.set_title(f"{title}, {ranks} ranks on shm")
    ax.legend(fontsize=7)
    return (name, fig_)


def figures(data):
    rows, path = data["rows"], data["path"]
    require(rows, path, lambda r: r["measured_ns"] > 0 and r["predicted_ns"] > 0, "times must be > 0", nonempty=True)
    require(rows, path, lambda r: r["fig"] in ("fig16", "fig17", "fig18"), "fig must be fig16, fig17 or fig18")
    out = [_by_size(rows, "fig16", "All-reduce: ring vs tree (SYNDICATE Fig. 16)", "fig16_all_reduce.svg"),
           _by_size(rows, "fig17", "All-to-all: splined 1/2/4 ways (SYNDICATE Fig. 17)", "fig17_all_to_all.svg")]
    mine = [r for r in rows if r["fig"] == "fig18"]
    fig = new_figure(5.0, 4.0)
    ax = fig.subplots()
    variants = unique(r["variant"] for r in mine)
    value = {r["variant"]: r for r in mine}
    grouped_bars(ax, variants, ["measured", "predicted"],
                 [[value[v]["measured_ns"] / 1e6, value[v]["predicted_ns"] / 1e6] for v in variants])
    ax.set_ylabel("time until both finish (ms)")
    ax.set_title("All-reduce + all-to-all (SYNDICATE Fig. 18)")
    ax.legend(fontsize=7)
    out.append(("fig18_overlap.svg", fig))
    return out
