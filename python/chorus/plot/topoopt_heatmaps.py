"""`chorus reproduce topoopt`: TopoOpt's Figs. 4 and 9, the server-to-server traffic of Sec. 2.2's
DLRM example: the AllReduce on one ring permutation per panel (Fig. 4; the diagonal moves, the MP
transfers of the embedding tables stay), and on TopoOpt's topology for d = 6 (Fig. 9; the
AllReduce shared by its rings).

Reads DIR/heatmaps.csv (figure,label,src,dst,bytes); writes fig4_heatmaps.svg and fig9_heatmap.svg.
The colour scale is logarithmic (one per figure) so that the 32 MB embedding transfers show beside
the 7.5 GB ring transfers; empty cells are white.
"""
import numpy
from matplotlib.colors import LogNorm

from chorus.plot._common import PlotInputError, load_rows, new_figure, require, unique

COLUMNS = {"figure": str, "label": str, "src": int, "dst": int, "bytes": float}
TITLES = {"fig4": "DLRM traffic heatmaps, one ring permutation each (TopoOpt Fig. 4)",
          "fig9": "DLRM traffic on TopoOpt's topology (TopoOpt Fig. 9b)"}


def load(directory):
    return load_rows(directory, "heatmaps.csv", COLUMNS)


def matrices(rows, figure):
    """{label: n x n list of GB} for the rows of one figure, n = the largest server + 1."""
    mine = [r for r in rows if r["figure"] == figure]
    n = 1 + max(max(r["src"], r["dst"]) for r in mine)
    out = {}
    for label in unique(r["label"] for r in mine):
        m = [[0.0] * n for _ in range(n)]
        for r in mine:
            if r["label"] == label:
                m[r["src"]][r["dst"]] += r["bytes"] / 1e9
        out[label] = m
    return out


def figures(data):
    rows, path = data["rows"], data["path"]
    require(rows, path, lambda r: r["bytes"] >= 0 and r["src"] >= 0 and r["dst"] >= 0,
            "bytes, src and dst must be >= 0", nonempty=True)
    result = []
    for figure, name in (("fig4", "fig4_heatmaps.svg"), ("fig9", "fig9_heatmap.svg")):
        if not any(r["figure"] == figure for r in rows):
            raise PlotInputError(f"{path}: no rows for figure '{figure}'")
        maps = matrices(rows, figure)
        cells = [v for m in maps.values() for row in m for v in row if v > 0]
        if not cells:
            raise PlotInputError(f"{path}: figure '{figure}' has no cell with bytes > 0")
        norm = LogNorm(vmin=min(cells), vmax=max(cells))
        fig = new_figure(4.2 * len(maps) + 0.8, 4.0)
        axes = fig.subplots(1, len(maps), squeeze=False)[0]
        for k, ((label, m), ax) in enumerate(zip(maps.items(), axes)):
            masked = numpy.ma.masked_less_equal(numpy.array(m), 0.0)
            image = ax.imshow(masked, cmap="viridis_r", norm=norm, interpolation="nearest")
            ax.set_xlabel("destination server")
            ax.set_ylabel("source server")
            ax.set_title(f"({chr(ord('a') + k)}) {label}")
        fig.colorbar(image, ax=list(axes), label="GB per iteration (log scale)")
        fig.suptitle(TITLES[figure])
        result.append((name, fig))
    return result
