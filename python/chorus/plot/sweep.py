"""`chorus sweep SPEC --plot DIR --x PARAM --y METRIC [--series PARAM]`: a metric against a
parameter, one line per value of the series parameter, the mean over the points' other parameters
at each x, from DIR/sweep.csv and DIR/sweep_plot.json.

Writes sweep.svg.
"""
import math
import os
import re

from chorus.plot._common import PlotInputError, colour, json_field, new_figure, read_csv, read_json, unique

_UNITS = {"": 1, "B": 1, "KB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12,
          "KIB": 2**10, "MIB": 2**20, "GIB": 2**30, "TIB": 2**40}


def _number(text):
    """A parameter's value as a number: plain, or a byte size (1MiB, 100MB); None otherwise."""
    m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*([A-Za-z]*)\s*", text)
    if not m or m.group(2).upper() not in _UNITS:
        return None
    return float(m.group(1)) * _UNITS[m.group(2).upper()]


def load(directory):
    plot_path = os.path.join(directory, "sweep_plot.json")
    spec = read_json(plot_path)
    x, y = json_field(spec, "x", str, plot_path), json_field(spec, "y", str, plot_path)
    series = json_field(spec, "series", str, plot_path)
    path = os.path.join(directory, "sweep.csv")
    columns = {x: str, y: str, "error": str}
    if series:
        columns[series] = str
    rows = [r for r in read_csv(path, columns) if not r["error"]]
    if not rows:
        raise PlotInputError(f"{path}: no point without an error")
    for r in rows:
        try:
            r[y] = float(r[y])
        except ValueError:
            raise PlotInputError(f"{path}: column '{y}': '{r[y]}' is not a number") from None
    return {"rows": rows, "x": x, "y": y, "series": series}


def figures(data):
    rows, x, y, series = data["rows"], data["x"], data["y"], data["series"]
    xs = unique(r[x] for r in rows)
    numeric = all(_number(v) is not None for v in xs)
    if numeric:
        xs.sort(key=_number)
    groups = unique(r[series] for r in rows) if series else [""]
    fig = new_figure(6.0, 4.0)
    ax = fig.add_subplot()
    for j, g in enumerate(groups):
        points = []
        for v in xs:
            ys = [r[y] for r in rows if r[x] == v and (not series or r[series] == g)]
            if ys:
                points.append((_number(v) if numeric else xs.index(v), sum(ys) / len(ys)))
        ax.plot([p[0] for p in points], [p[1] for p in points], marker="o", markersize=3, color=colour(j),
                label=g if series else None)
    if numeric:
        values = [_number(v) for v in xs]
        if min(values) > 0 and max(values) / min(values) >= 100:
            powers_of_two = all(v == 2 ** round(math.log2(v)) for v in values)
            ax.set_xscale("log", base=2 if powers_of_two else 10)
        if len(xs) <= 16:  # the values as the spec wrote them (1MiB, ...)
            ax.set_xticks(values, xs, rotation=30 if len(xs) > 6 else 0, ha="right" if len(xs) > 6 else "center")
            ax.minorticks_off()
        ys = [r[y] for r in rows]
        if min(ys) > 0 and max(ys) / min(ys) >= 100:
            ax.set_yscale("log")
    else:
        ax.set_xticks(range(len(xs)), xs, rotation=20, ha="right")
    ax.set_xlabel(x)
    ax.set_ylabel(y)
    ax.set_title(f"{y} against {x}" + (f", by {series}" if series else "") + "\n(the mean over the other parameters)")
    if series:
        ax.legend(title=series)
    return [("sweep.svg", fig)]
