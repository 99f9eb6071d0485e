"""Shared by the figure modules: reading chorus's CSV/JSON with errors that name the file, line and
column; matplotlib set-up (Agg, deterministic SVG); colours; saving."""
import csv
import json
import math
import os

import matplotlib

matplotlib.use("Agg")
from matplotlib.figure import Figure  # noqa: E402  (after the backend is chosen)

# Deterministic SVG: fixed hash salt for element ids, no date; text stays text (smaller, searchable).
matplotlib.rcParams.update({
    "svg.hashsalt": "chorus",
    "svg.fonttype": "none",
    "font.family": "DejaVu Sans",
    "font.size": 9,
    "axes.titlesize": 10,
    "axes.grid": True,
    "axes.axisbelow": True,
    "grid.color": "#e3e3e3",
    "legend.fontsize": 8,
    "legend.frameon": False,
})

# Okabe-Ito palette (colour-blind friendly), the same order the retired SVG writer used.
PALETTE = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#000000", "#F0E442"]


def colour(index):
    return PALETTE[index % len(PALETTE)]


class PlotInputError(Exception):
    """Bad or missing input file; the CLI prints it and exits with status 2."""


def _number(text, path, line, column, kind):
    try:
        value = int(text) if kind is int else float(text)
    except ValueError:
        raise PlotInputError(f"{path}: line {line}: column '{column}': '{text}' is not "
                             f"{'an integer' if kind is int else 'a number'}") from None
    if kind is float and not math.isfinite(value):
        raise PlotInputError(f"{path}: line {line}: column '{column}': '{text}' is not a finite number")
    return value


def read_csv(path, columns):
    """Rows of the CSV file `path` as dicts holding the given columns, converted: `columns` maps a
    column name to str, int or float. Other columns are ignored. Raises PlotInputError naming the
    file, line and column for a missing file, a missing column, a short row or a bad number."""
    try:
        f = open(path, newline="", encoding="utf-8")
    except OSError as e:
        raise PlotInputError(f"{path}: cannot read: {e.strerror}") from None
    with f:
        reader = csv.reader(f)
        header = next(reader, None)
        if header is None:
            raise PlotInputError(f"{path}: line 1: empty file, expected a header with {', '.join(columns)}")
        index = {name: i for i, name in enumerate(header)}
        for name in columns:
            if name not in index:
                raise PlotInputError(f"{path}: line 1: missing column '{name}' (header: {','.join(header)})")
        rows = []
        for fields in reader:
            line = reader.line_num
            if not fields:
                continue
            if len(fields) != len(header):
                raise PlotInputError(f"{path}: line {line}: {len(fields)} fields, the header has {len(header)}")
            row = {}
            for name, kind in columns.items():
                text = fields[index[name]]
                row[name] = text if kind is str else _number(text, path, line, name, kind)
            rows.append(row)
    if not rows:
        raise PlotInputError(f"{path}: no data rows")
    return rows


def load_rows(directory, name, columns):
    """A study's one CSV file: {"rows": ..., "path": ...} for a module's load()."""
    path = os.path.join(directory, name)
    return {"rows": read_csv(path, columns), "path": path}


def require(rows, path, ok, message, nonempty=False):
    """PlotInputError naming the file and line of the first row for which ok(row) is false."""
    if nonempty and not rows:
        raise PlotInputError(f"{path}: no rows")
    for i, r in enumerate(rows):
        if not ok(r):
            raise PlotInputError(f"{path}: line {i + 2}: {message}")


def read_json(path):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except OSError as e:
        raise PlotInputError(f"{path}: cannot read: {e.strerror}") from None
    except json.JSONDecodeError as e:
        raise PlotInputError(f"{path}: line {e.lineno}: column {e.colno}: {e.msg}") from None


def json_field(obj, key, kind, path):
    """obj[key] converted to `kind` (str, int, float or list), or PlotInputError naming file and key."""
    if not isinstance(obj, dict) or key not in obj:
        raise PlotInputError(f"{path}: missing field '{key}'")
    value = obj[key]
    ok = (isinstance(value, str) if kind is str else isinstance(value, list) if kind is list
          else isinstance(value, (int, float)) and not isinstance(value, bool))
    if not ok:
        raise PlotInputError(f"{path}: field '{key}': expected {kind.__name__}, got {json.dumps(value)}")
    return kind(value)


def unique(values):
    """The distinct values in order of first appearance."""
    seen = {}
    for v in values:
        seen.setdefault(v, None)
    return list(seen)


def size_label(size_bytes):
    """100 MB, 1 GB, ... as the tables of `chorus reproduce` print them."""
    if size_bytes >= 1e9 and int(size_bytes) % 1000000000 == 0:
        return f"{size_bytes / 1e9:.0f} GB"
    if size_bytes >= 1e6:
        return f"{size_bytes / 1e6:g} MB"
    return f"{size_bytes:.0f} B"


def new_figure(width_in, height_in):
    return Figure(figsize=(width_in, height_in), layout="constrained")


def grouped_bars(ax, group_labels, series_names, values, colours=None):
    """Grouped bar chart on `ax`: values[g][s] (None = no bar), one colour per series, legend
    labels = series names. Returns the BarContainers, one per series."""
    n = max(len(series_names), 1)
    width = 0.8 / n
    containers = []
    for s, name in enumerate(series_names):
        xs = [g + (s - (n - 1) / 2) * width for g in range(len(group_labels))]
        hs = [values[g][s] for g in range(len(group_labels))]
        keep = [(x, h) for x, h in zip(xs, hs) if h is not None]
        containers.append(ax.bar([x for x, _ in keep], [h for _, h in keep], width,
                                 label=name, color=(colours or colour)(s)))
    ax.set_xticks(range(len(group_labels)), group_labels)
    ax.set_xlim(-0.5, len(group_labels) - 0.5)
    ax.grid(axis="x", visible=False)
    return containers


def save(fig, path):
    fig.savefig(path, format="svg", metadata={"Date": None})


# Nothing hidden (checked by chorus.plot._hidden): a legend beside the data, never over it; lines
# that may coincide drawn widest first so each shows at the edges of those above it; identical
# series merged into one labelled line; equal horizontal levels dashed in turn.

def legend_beside(ax, **kwargs):
    """The axes' legend to the right of its plot area, where it cannot cover data."""
    return ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0, **kwargs)


def layered_widths(n, thinnest=1.0, step=1.0):
    """Line widths (pt) for n lines drawn in this order that may lie on top of each other: each is
    `step` wider than the next, so where they coincide every one shows at the edges of the later."""
    return [thinnest + step * (n - 1 - i) for i in range(n)]


def merge_identical(series):
    """[(label, xs, ys)] -> [(labels, xs, ys)]: series with identical points become one, labelled by
    all of theirs (in order of first appearance)."""
    merged = {}
    for label, xs, ys in series:
        merged.setdefault((tuple(xs), tuple(ys)), []).append(label)
    return [(labels, list(key[0]), list(key[1])) for key, labels in merged.items()]


def identical_label(labels, limit=4):
    """The label of merged series: a; a, b (identical); a, b, c, d +2 more (identical)."""
    if len(labels) == 1:
        return labels[0]
    shown = ", ".join(labels[:limit]) + (f" +{len(labels) - limit} more" if len(labels) > limit else "")
    return f"{shown} (identical)"


def level_dashes(values, on=4.0):
    """Dash patterns (offset, (on, off)) for horizontal dashed lines at `values`: lines at the same
    level take turns along it (offsets differ), so each shows; a level alone gets (0, (on, on))."""
    share = {}
    for v in values:
        share[v] = share.get(v, 0) + 1
    seen, out = {}, []
    for v in values:
        n, i = share[v], seen.get(v, 0)
        seen[v] = i + 1
        out.append((on * i, (on, on * (n - 1) if n > 1 else on)))
    return out
