"""`chorus sim jobs JOBS.yaml --out DIR --plot`: jobs sharing a fabric (docs/shared-fabric.md). Left:
each job's iteration times together (solid, markers) and its mean iteration time alone (dashed);
middle: the utilization of every link that carried traffic, busiest first; right (when
DIR/links_over_time.csv is there): the utilization over time of the five busiest links. Jobs (or
links) with identical traces are one line labelled with all their names, "(identical)"; equal
alone times dash in turns; the over-time lines are drawn widest first so each shows where they
meet; legends sit beside the panels, never over the data.

Reads DIR/jobs.json and DIR/links_over_time.csv; writes jobs.svg.
"""
import csv
import os

from chorus.plot._common import (PlotInputError, colour, identical_label, json_field, layered_widths, legend_beside,
                                 level_dashes, merge_identical, new_figure, read_json, unique)

MARKERS = ["o", "s", "^", "D", "v", "P", "X", "<"]


def load(directory):
    path = os.path.join(directory, "jobs.json")
    j = read_json(path)
    jobs = []
    for job in json_field(j, "jobs", list, path):
        times = json_field(job, "iteration_times_ns", list, path)
        if not times or not all(isinstance(t, (int, float)) and t >= 0 for t in times):
            raise PlotInputError(f"{path}: field 'iteration_times_ns': expected a non-empty list of numbers >= 0")
        jobs.append({"name": json_field(job, "name", str, path), "start_ns": json_field(job, "start_ns", float, path),
                     "times_ns": [float(t) for t in times],
                     "alone_ns": json_field(job, "alone_iteration_time_ns", float, path)})
    links = [{"label": f"{json_field(link, 'from', int, path)}->{json_field(link, 'to', int, path)}",
              "utilization": json_field(link, "utilization", float, path)} for link in json_field(j, "links", list, path)]
    if not jobs:
        raise PlotInputError(f"{path}: no jobs")
    fabric = json_field(j.get("fabric") if isinstance(j, dict) else None, "name", str, path)
    series = {}  # "from->to" -> [(window start ms, window end ms, utilization)]
    over_time = os.path.join(directory, "links_over_time.csv")
    if os.path.isfile(over_time):
        with open(over_time, newline="") as f:
            for n, row in enumerate(csv.DictReader(f), start=2):
                try:
                    series.setdefault(f"{int(row['from'])}->{int(row['to'])}", []).append(
                        (float(row["window_start_ns"]) / 1e6, float(row["window_end_ns"]) / 1e6, float(row["utilization"])))
                except (KeyError, TypeError, ValueError) as e:
                    raise PlotInputError(f"{over_time}:{n}: expected window_start_ns, window_end_ns, from, to, utilization ({e})")
    return {"jobs": jobs, "links": links, "fabric": fabric, "series": series}


def figures(data):
    over_time = data.get("series") or {}
    fig = new_figure(17.0 if over_time else 12.0, 4.0)
    axes = fig.subplots(1, 3 if over_time else 2)
    left, right = axes[0], axes[1]
    series, alone = [], {}
    for job in data["jobs"]:
        # Iteration i ends at start + the sum of the first i + 1 times: plot each at its end.
        ends, t = [], job["start_ns"]
        for x in job["times_ns"]:
            t += x
            ends.append(t / 1e6)
        series.append((job["name"], ends, [x / 1e6 for x in job["times_ns"]]))
        alone[job["name"]] = job["alone_ns"] / 1e6
    groups = merge_identical(series)
    levels = [(k, level) for k, (names, _, _) in enumerate(groups) for level in unique(alone[n] for n in names)]
    for k, (names, xs, ys) in enumerate(groups):
        left.plot(xs, ys, marker=MARKERS[k % len(MARKERS)], color=colour(k), label=identical_label(names), linewidth=1.2)
    for (k, level), dashes in zip(levels, level_dashes([level for _, level in levels])):
        left.axhline(level, color=colour(k), linestyle=dashes, linewidth=0.8)
    left.set_xlabel("time (ms): end of the iteration")
    left.set_ylabel("iteration time (ms); dashed: alone")
    left.set_ylim(bottom=0)
    left.set_title("(a) iteration times together and alone")
    legend_beside(left)
    links = sorted(data["links"], key=lambda link: -link["utilization"])
    right.bar(range(len(links)), [100 * link["utilization"] for link in links], color=colour(0))
    if len(links) <= 24:
        right.set_xticks(range(len(links)), [link["label"] for link in links], rotation=90)
        right.set_xlabel("link (from -> to), busiest first")
    else:
        right.set_xlabel(f"the {len(links)} links that carried traffic, busiest first")
    right.set_ylabel("utilization over the run (%)")
    right.set_ylim(0, 100)
    right.set_title("(b) link utilization")
    if over_time:
        ax = axes[2]
        traces = []
        for link in links:
            if link["label"] in over_time:
                xs, ys = [], []
                for start, end, u in over_time[link["label"]]:
                    xs += [start, end]
                    ys += [100 * u, 100 * u]
                traces.append((link["label"], xs, ys))
        groups = merge_identical(traces)[:5]
        for k, ((names, xs, ys), width) in enumerate(zip(groups, layered_widths(len(groups)))):
            ax.plot(xs, ys, color=colour(k), label=identical_label(names, limit=3), linewidth=width)
        ax.set_xlabel("time (ms)")
        ax.set_ylabel("utilization per window (%)")
        ax.set_ylim(0, 105)
        ax.set_title("(c) the busiest links over time")
        legend_beside(ax, fontsize="small")
    fig.suptitle(f"Jobs sharing fabric {data['fabric']} (flow-level model)")
    return [("jobs.svg", fig)]
