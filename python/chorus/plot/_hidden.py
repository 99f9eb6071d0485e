"""What a drawn figure hides: legends over lines, text boxes over each other or over lines, and lines
drawn on top of each other without a visual distinction. Works on the geometry matplotlib computes
for a render (window extents, display coordinates), so it is the check the tests of every figure share:

    problems(fig) == []      # else human-readable strings, one per thing hidden

Geometry is in display pixels of an Agg render at `dpi`. Lines are their paths as drawn (steps
expanded, blended transforms of axhline applied) and clipped to their axes.
"""
import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.cbook import STEP_LOOKUP_MAP


def render(fig, dpi=100):
    """Draw `fig` with Agg at `dpi`; returns the renderer (extents are then those of this render)."""
    fig.set_dpi(dpi)
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    return canvas.get_renderer()


def _label(artist):
    if hasattr(artist, "get_texts"):  # a legend: its entries
        return str([t.get_text() for t in artist.get_texts()])
    if hasattr(artist, "get_text"):
        return f"'{artist.get_text()}'"
    label = artist.get_label() if hasattr(artist, "get_label") else ""
    gid = artist.get_gid()
    return gid or label or type(artist).__name__


def drawn_lines(fig):
    """(axes, line) of every visible line with a stroke (marker-only lines are marks, not lines)."""
    out = []
    for ax in fig.axes:
        for line in ax.get_lines():
            if line.get_visible() and line.get_linestyle() not in ("None", "none", "", " ") and line.get_linewidth() > 0:
                out.append((ax, line))
    return out


def path_pixels(line):
    """The line's vertices in display pixels, as drawn (steps expanded); NaNs dropped."""
    xy = np.asarray(line.get_xydata(), dtype=float)
    style = line.get_drawstyle()
    if style in STEP_LOOKUP_MAP and style != "default" and len(xy) > 1:
        xs, ys = STEP_LOOKUP_MAP[style](xy[:, 0], xy[:, 1])
        xy = np.column_stack([xs, ys])
    pts = line.get_transform().transform(xy)
    return pts[np.all(np.isfinite(pts), axis=1)]


def _clip_box(ax, line):
    b = ax.get_window_extent() if line.get_clip_on() else None
    return None if b is None else (b.x0, b.y0, b.x1, b.y1)


def _segment_hits_box(p, q, box):
    """Liang-Barsky: does segment p-q meet the closed box (x0, y0, x1, y1)?"""
    x0, y0, x1, y1 = box
    t0, t1 = 0.0, 1.0
    d = q - p
    for pk, qk in ((-d[0], p[0] - x0), (d[0], x1 - p[0]), (-d[1], p[1] - y0), (d[1], y1 - p[1])):
        if pk == 0:
            if qk < 0:
                return False
        else:
            t = qk / pk
            if pk < 0:
                t0 = max(t0, t)
            else:
                t1 = min(t1, t)
            if t0 > t1:
                return False
    return True


def _intersect(a, b):
    if b is None:
        return a
    box = (max(a[0], b[0]), max(a[1], b[1]), min(a[2], b[2]), min(a[3], b[3]))
    return box if box[0] <= box[2] and box[1] <= box[3] else None


def _shrunk(bbox, px):
    return (bbox.x0 + px, bbox.y0 + px, bbox.x1 - px, bbox.y1 - px)


def line_crosses(line, ax, box):
    """Does the drawn (clipped) line pass through the box (x0, y0, x1, y1) in pixels?"""
    box = _intersect(box, _clip_box(ax, line))
    if box is None:
        return False
    pts = path_pixels(line)
    if len(pts) == 1:
        return box[0] <= pts[0][0] <= box[2] and box[1] <= pts[0][1] <= box[3]
    return any(_segment_hits_box(pts[i], pts[i + 1], box) for i in range(len(pts) - 1))


def legends(fig):
    return [ax.get_legend() for ax in fig.axes if ax.get_legend() is not None] + list(fig.legends)


def texts(fig):
    """The text labels placed in the figure: axes texts and annotations, figure texts (not titles,
    tick or axis labels, which the layout places)."""
    out = [t for ax in fig.axes for t in ax.texts] + list(fig.texts)
    return [t for t in out if t.get_visible() and t.get_text().strip()]


def _dashes(line):
    offset, seq = getattr(line, "_dash_pattern", (0, None))
    return (round(float(offset or 0), 3), tuple(round(float(s), 3) for s in seq) if seq else None)


def distinct(below, above):
    """Can `below` still be seen where `above` is drawn over it? Yes if `above` has gaps `below`
    does not share (another dash pattern or offset), if `below` is wider by >= 0.9 pt (its edges
    show), or if `below` has markers that `above` does not cover."""
    if _dashes(above)[1] is not None and _dashes(above) != _dashes(below):
        return True
    if below.get_linewidth() - above.get_linewidth() >= 0.9:
        return True
    mb, ma = below.get_marker(), above.get_marker()
    if mb not in (None, "None", "none", "", " "):
        if ma in (None, "None", "none", "", " ") or ma != mb or below.get_markersize() - above.get_markersize() >= 1:
            return True
    return False


def _samples(pts, step=1.0):
    out = []
    for p, q in zip(pts[:-1], pts[1:]):
        n = max(int(np.hypot(*(q - p)) / step), 1)
        t = np.arange(n) / n
        out.append(p + np.outer(t, q - p))
    out.append(pts[-1:])
    return np.vstack(out)


def _distance_to_path(points, pts):
    """Distance of each point to the polyline pts (pixels)."""
    if len(pts) == 1:
        return np.hypot(*(points - pts[0]).T)
    p, q = pts[:-1], pts[1:]
    d = q - p
    length2 = np.maximum((d ** 2).sum(axis=1), 1e-12)
    rel = points[:, None, :] - p[None, :, :]
    t = np.clip((rel * d[None]).sum(axis=2) / length2[None], 0, 1)
    nearest = p[None] + t[..., None] * d[None]
    return np.sqrt(((points[:, None, :] - nearest) ** 2).sum(axis=2)).min(axis=1)


def hidden_length(below, above, ax, dpi):
    """Pixels of `below`'s path (inside its axes) that lie under `above`'s stroke."""
    pts = path_pixels(below)
    if len(pts) < 2:
        return 0.0
    samples = _samples(pts)
    box = _clip_box(ax, below)
    if box is not None:
        keep = ((samples[:, 0] >= box[0]) & (samples[:, 0] <= box[2]) & (samples[:, 1] >= box[1])
                & (samples[:, 1] <= box[3]))
        samples = samples[keep]
    if not len(samples):
        return 0.0
    half = lambda line: line.get_linewidth() * dpi / 72 / 2
    tolerance = max(half(above) - half(below), 0) + 0.75
    under = _distance_to_path(samples, path_pixels(above)) <= tolerance
    return float(under.sum())  # samples are ~1 px apart


def problems(fig, dpi=100, min_hidden_px=20):
    """Everything hidden in `fig` (legend over a line, text over text, legend or line, legend or
    text past the figure's edge, a line under another without a distinction), as strings naming the artists (gid, else label); [] if nothing."""
    renderer = render(fig, dpi)
    found = []
    lines = drawn_lines(fig)
    # A legend over a line.
    for legend in legends(fig):
        box = _shrunk(legend.get_window_extent(renderer), 1)
        for ax, line in lines:
            if line_crosses(line, ax, box):
                found.append(f"legend {[t.get_text() for t in legend.get_texts()]} covers line {_label(line)}")
    # A legend or text cut by the figure's edge.
    edge = (fig.bbox.x0 - 0.5, fig.bbox.y0 - 0.5, fig.bbox.x1 + 0.5, fig.bbox.y1 + 0.5)
    for artist in legends(fig) + texts(fig):
        b = artist.get_window_extent(renderer)
        if b.x0 < edge[0] or b.y0 < edge[1] or b.x1 > edge[2] or b.y1 > edge[3]:
            found.append(f"{type(artist).__name__} {_label(artist)} is cut by the figure's edge")
    # Text boxes over each other, over a legend or over a line.
    placed = texts(fig)
    extents = [_shrunk(t.get_window_extent(renderer), 1) for t in placed]
    for i, a in enumerate(extents):
        for j in range(i + 1, len(extents)):
            if _intersect(a, extents[j]) is not None:
                found.append(f"text '{placed[i].get_text()}' overlaps text '{placed[j].get_text()}'")
        for legend in legends(fig):
            if _intersect(a, _shrunk(legend.get_window_extent(renderer), 1)) is not None:
                found.append(f"text '{placed[i].get_text()}' overlaps a legend")
        for ax, line in lines:
            if line_crosses(line, ax, a):
                found.append(f"text '{placed[i].get_text()}' overlaps line {_label(line)}")
    # A line drawn over another without a distinction (same axes; later in draw order = above).
    for ax in fig.axes:
        mine = [line for a, line in lines if a is ax]
        order = sorted(range(len(mine)), key=lambda k: (mine[k].get_zorder(), k))
        for bi, below_index in enumerate(order):
            below = mine[below_index]
            for above_index in order[bi + 1:]:
                above = mine[above_index]
                if distinct(below, above):
                    continue
                px = hidden_length(below, above, ax, dpi)
                if px >= min_hidden_px:
                    found.append(f"line {_label(below)} is hidden by line {_label(above)} over {px:.0f} px")
    return found
