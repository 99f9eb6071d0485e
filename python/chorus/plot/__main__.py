"""python3 -m chorus.plot STUDY DIR: draw the figures of a `chorus reproduce` study from the CSV/JSON
files in DIR, writing the SVG files next to them. Prints the path of each figure written.
Exit status: 0, or 2 for missing or malformed input (the message names the file, line and column)."""
import argparse
import os
import sys

STUDIES = {
    "themis": ("chorus.plot.themis", "Themis Figs. 8-11 from microbench.csv, activity.csv, study.json"),
    "themis-workloads": ("chorus.plot.themis_workloads", "Themis Fig. 12 (stacked bars) from workloads.csv"),
    "themis-sensitivity": ("chorus.plot.themis_sensitivity",
                           "Fig. 12 sensitivity (speedup vs batch and compute rate) from sensitivity_summary.csv"),
    "themis-real": ("chorus.plot.themis_real", "real_vs_sim.svg and speedup.svg from real_vs_sim.csv"),
    "topoopt": ("chorus.plot.topoopt", "TopoOpt Fig. 11 (fabric cost) from cost.csv"),
    "topoopt-heatmaps": ("chorus.plot.topoopt_heatmaps", "TopoOpt Figs. 4 and 9 (DLRM traffic heatmaps) from heatmaps.csv"),
    "topoopt-iterations": ("chorus.plot.topoopt_iterations", "TopoOpt Figs. 12-13 (iteration time per fabric) from iterations.csv"),
    "syndicate": ("chorus.plot.syndicate", "SYNDICATE Figs. 11 and 14 (throughput vs BS+, compute idling) from syndicate.csv"),
    "syndicate-real": ("chorus.plot.syndicate_real", "SYNDICATE Figs. 16-18 (motif microbenchmarks, measured vs predicted) from motifs.csv"),
    "jobs": ("chorus.plot.jobs", "chorus sim jobs --out DIR: iteration times together and alone, link utilization from jobs.json"),
    "shared-fabric": ("chorus.plot.shared_fabric", "two jobs on two racks: slowdown per placement and start shift from shared_fabric.csv"),
    "sweep": ("chorus.plot.sweep", "chorus sweep --plot DIR: a metric against a parameter from sweep.csv and sweep_plot.json"),
    "capture-whatif": ("chorus.plot.capture_whatif",
                       "chorus sim whatif --out DIR: compute and exposed communication per network from whatif.csv"),
    "capture-validation": ("chorus.plot.capture_validation",
                           "captured programs: measured vs predicted step time from capture_validation.csv"),
    "profile": ("chorus.plot.profile", "communication time per operation and backend from profile.csv (chorus profile)"),
}


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python3 -m chorus.plot", description=__doc__.split("\n")[0],
                                     epilog="Needs matplotlib (Debian: python3-matplotlib; scripts/install-deps.sh).")
    sub = parser.add_subparsers(dest="study", required=True, metavar="STUDY")
    for name, (_, help_text) in STUDIES.items():
        p = sub.add_parser(name, help=help_text, description=help_text)
        p.add_argument("dir", help="the study's output directory (chorus reproduce ... --out DIR)")
        p.add_argument("-q", "--quiet", action="store_true", help="do not print the files written")
    args = parser.parse_args(argv)
    try:
        import importlib
        module = importlib.import_module(STUDIES[args.study][0])
    except ImportError as e:
        print(f"chorus.plot: cannot import matplotlib with {sys.executable} ({e}); "
              "install python3-matplotlib (scripts/install-deps.sh)", file=sys.stderr)
        return 2
    from chorus.plot._common import PlotInputError, save
    try:
        if not os.path.isdir(args.dir):
            raise PlotInputError(f"{args.dir}: not a directory")
        for name, fig in module.figures(module.load(args.dir)):
            path = os.path.join(args.dir, name)
            try:
                save(fig, path)
            except OSError as e:
                raise PlotInputError(f"{path}: cannot write: {e.strerror}") from None
            if not args.quiet:
                print(path)
    except PlotInputError as e:
        print(f"chorus.plot {args.study}: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
