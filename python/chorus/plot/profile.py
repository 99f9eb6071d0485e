"""`chorus profile LOG --out DIR`: communication time per operation, stacked by backend (the view
of MCR-DL's Figs. 1 and 12), from DIR/profile.csv.

Writes profile.svg.
"""
from chorus.plot._common import colour, load_rows, new_figure, require, unique

COLUMNS = {"op": str, "backend": str, "busy_ns_per_rank": float, "calls_per_rank": float}


def load(directory):
    return load_rows(directory, "profile.csv", COLUMNS)


def figures(data):
    rows, path = data["rows"], data["path"]
    require(rows, path, lambda r: r["busy_ns_per_rank"] >= 0, "busy_ns_per_rank must be >= 0", nonempty=True)
    ops = unique(r["op"] for r in rows)
    backends = unique(r["backend"] for r in rows)
    fig = new_figure(max(5.0, 1.1 * len(ops) + 2), 4.0)
    ax = fig.add_subplot()
    bottom = [0.0] * len(ops)
    for j, b in enumerate(backends):
        heights = [sum(r["busy_ns_per_rank"] / 1e6 for r in rows if r["op"] == op and r["backend"] == b) for op in ops]
        ax.bar(range(len(ops)), heights, bottom=bottom, color=colour(j), label=b)
        bottom = [x + h for x, h in zip(bottom, heights)]
    ax.set_xticks(range(len(ops)), ops, rotation=20, ha="right")
    ax.set_ylabel("communication time per rank (ms)")
    ax.set_title("Communication time per operation and backend")
    ax.legend(title="backend")
    return [("profile.svg", fig)]
