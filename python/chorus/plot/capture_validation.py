"""`chorus reproduce capture-validation`: captured torch programs simulated on this host's model
against their own step times.

Reads DIR/capture_validation.csv; writes capture_validation.svg: per program, ranks and backend,
the measured step time (the program's unrecorded steps) beside the predicted one, each split into
compute and exposed communication, with the error above.
"""
from chorus.plot._common import colour, load_rows, new_figure, require

COLUMNS = {"program": str, "ranks": int, "backend": str, "measured_ms": float, "predicted_ms": float,
           "error_pct": float, "measured_compute_ms": float, "predicted_compute_ms": float,
           "measured_exposed_comm_ms": float, "predicted_exposed_comm_ms": float}


def load(directory):
    return load_rows(directory, "capture_validation.csv", COLUMNS)


def figures(data):
    rows, path = data["rows"], data["path"]
    require(rows, path, lambda r: r["measured_ms"] > 0 and r["predicted_ms"] >= 0,
            "measured_ms must be > 0 and predicted_ms >= 0", nonempty=True)
    fig = new_figure(min(16, max(6, 1.1 * len(rows) + 2)), 5)
    ax = fig.add_subplot()
    width = 0.38
    for i, r in enumerate(rows):
        for side, (prefix, hatch) in enumerate((("measured", ""), ("predicted", "//"))):
            x = i + (side - 0.5) * width
            compute = r[f"{prefix}_compute_ms"]
            exposed = r[f"{prefix}_exposed_comm_ms"]
            ax.bar(x, compute, width, color=colour(0), hatch=hatch, edgecolor="white",
                   label="compute" if i == 0 and side == 0 else None)
            ax.bar(x, exposed, width, bottom=compute, color=colour(1), hatch=hatch, edgecolor="white",
                   label="exposed communication" if i == 0 and side == 0 else None)
        top = max(r["measured_ms"], r["predicted_ms"])
        ax.annotate(f"{r['error_pct']:+.1f} %", (i, top), xytext=(0, 4), textcoords="offset points", ha="center",
                    fontsize=8)
    ax.set_xticks(range(len(rows)),
                  [f"{r['program']}\n{r['ranks']} ranks, {r['backend']}" for r in rows], fontsize=8)
    ax.set_ylabel("ms a step (left: measured, right, hatched: predicted)")
    ax.set_title("Captured programs: measured step time vs simulated on this host (error above)")
    ax.margins(y=0.15)
    ax.legend(loc="upper left")
    return [("capture_validation.svg", fig)]
