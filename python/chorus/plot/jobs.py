"""`chorus sim jobs JOBS.yaml --out DIR --plot`: jobs sharing a fabric (docs/shared-fabric.md). Left:
each job's iteration times together (solid, markers) and its mean iteration time alone (dashed);
right: the utilization of every link that carried traffic, busiest first.

Reads DIR/jobs.json; writes jobs.svg.
"""
import os

from chorus.plot._common import PlotInputError, colour, json_field, new_figure, read_json


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
    return {"jobs": jobs, "links": links, "fabric": fabric}


def figures(data):
    fig = new_figure(11.0, 4.0)
    left, right = fig.subplots(1, 2)
    for k, job in enumerate(data["jobs"]):
        # Iteration i ends at start + the sum of the first i + 1 times: plot each at its end.
        ends, t = [], job["start_ns"]
        for x in job["times_ns"]:
            t += x
            ends.append(t / 1e6)
        left.plot(ends, [x / 1e6 for x in job["times_ns"]], marker="o", color=colour(k), label=job["name"], linewidth=1.2)
        left.axhline(job["alone_ns"] / 1e6, color=colour(k), linestyle="--", linewidth=0.8)
    left.set_xlabel("time (ms): end of the iteration")
    left.set_ylabel("iteration time (ms); dashed: alone")
    left.set_ylim(bottom=0)
    left.set_title("(a) iteration times together and alone")
    left.legend(loc="lower right")
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
    fig.suptitle(f"Jobs sharing fabric {data['fabric']} (flow-level model)")
    return [("jobs.svg", fig)]
