"""`chorus reproduce shared-fabric`: two jobs on two racks (docs/shared-fabric.md). Left: each pair's
total slowdown (job a's + job b's, 2 = both as fast as alone) under each placement policy; right:
the same with the second job's start shifted as the search found, against no shift.

Reads DIR/shared_fabric.csv; writes shared_fabric.svg.
"""
from chorus.plot._common import grouped_bars, load_rows, new_figure, require, unique

COLUMNS = {"workloads": str, "placement": str, "slowdown_a": float, "slowdown_b": float,
           "shifted_slowdown_a": float, "shifted_slowdown_b": float, "shift_b_ns": float}


def load(directory):
    return load_rows(directory, "shared_fabric.csv", COLUMNS)


def figures(data):
    rows, path = data["rows"], data["path"]
    require(rows, path, lambda r: min(r["slowdown_a"], r["slowdown_b"], r["shifted_slowdown_a"], r["shifted_slowdown_b"]) > 0,
            "slowdowns must be > 0", nonempty=True)
    pairs = unique(r["workloads"] for r in rows)
    placements = unique(r["placement"] for r in rows)
    by = {(r["workloads"], r["placement"]): r for r in rows}
    fig = new_figure(11.0, 4.0)
    left, right = fig.subplots(1, 2)
    total = [[(by[(p, q)]["slowdown_a"] + by[(p, q)]["slowdown_b"]) if (p, q) in by else None for q in placements] for p in pairs]
    grouped_bars(left, pairs, placements, total)
    left.axhline(2.0, color="black", linewidth=0.8, linestyle=":")
    left.set_ylabel("total slowdown (a + b; 2 = as alone)")
    left.set_title("(a) placement, no shift")
    left.legend(loc="upper left", ncol=2)
    shifted = [[by[(p, q)]["slowdown_a"] + by[(p, q)]["slowdown_b"], by[(p, q)]["shifted_slowdown_a"] + by[(p, q)]["shifted_slowdown_b"]]
               if (p, q) in by else [None, None] for p in pairs for q in ["interleaved"]]
    grouped_bars(right, pairs, ["no shift", "searched shift"], shifted)
    right.axhline(2.0, color="black", linewidth=0.8, linestyle=":")
    right.set_ylabel("total slowdown (a + b)")
    right.set_title("(b) interleaved placement: start shift")
    right.legend(loc="upper right")
    top = 1.3 * max(v for row in total + shifted for v in row if v is not None)
    for ax in (left, right):
        ax.set_ylim(0, top)
    fig.suptitle("Two jobs on two racks sharing one link (flow-level model)")
    return [("shared_fabric.svg", fig)]
