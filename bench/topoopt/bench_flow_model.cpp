// Flow-level model speed (issue 9): one training iteration of TopoOpt's DLRM (Table 2, servers of
// four GPUs, the study of `chorus reproduce topoopt`) on N servers through the training DAG and the
// flow-level model, per fabric: the ideal Fat-tree (one NIC per server: every flow one hop up, one
// down), the expander (random multi-hop paths) and TopoOpt's own fabric (TopologyFinder included
// in the time). Prints flows, rate reallocations, events, wall time and peak RSS (of the process so
// far). Usage: bench_flow_model [--degree D] [--tolerance T] [--fabrics a,b] [--iterations I] [servers...]
// (default d = 4, exact, one iteration, 128).
#include <sys/resource.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench/bench_args.h"
#include "core/split.h"
#include "eval/topoopt_iterations.h"

using namespace chorus;

namespace {

constexpr const char* kUsage =
    "Usage: bench_flow_model [--degree D] [--tolerance T] [--fabrics a,b] [--iterations I] [servers...]\n"
    "  One iteration of TopoOpt's DLRM per server count and fabric through the flow-level model (issue 9):\n"
    "  flows, reallocations, iteration time, wall time and peak RSS as CSV. Default: d = 4, exact (tolerance 0),\n"
    "  one iteration, 128 servers, fabrics ideal-fat-tree,expander,topoopt-oneshot.\n";

int run(bench::Args& args) {
  std::vector<int> sizes;
  int degree = 4;
  double tolerance = 0;
  int iterations = 1;
  std::vector<std::string> fabrics = {"ideal-fat-tree", "expander", "topoopt-oneshot"};
  std::string list;
  while (!args.done()) {
    if (args.number("--degree", degree) || args.number("--tolerance", tolerance) ||
        args.number("--iterations", iterations))
      continue;
    if (args.value("--fabrics", list)) {
      fabrics = split_list(list);
      continue;
    }
    sizes.push_back(bench::number<int>(args.positional(), "servers"));
  }
  if (sizes.empty()) sizes = {128};
  std::printf(
      "model,servers,degree,tolerance,fabric,flows,reallocations,full_reallocations,refilled_flows,refilled_bundles,"
      "iteration_ms,wall_s,peak_rss_mb\n");
  for (int n : sizes)
    for (const auto& fabric : fabrics) {
      eval::IterationStudyOptions o;
      o.servers = n;
      o.iterations = iterations;
      o.batch_tolerance = tolerance;
      const auto r = eval::run_iteration("topoopt-dlrm", fabric, degree, 100, o);
      rusage ru{};
      getrusage(RUSAGE_SELF, &ru);
      std::printf("%s,%d,%d,%g,%s,%lld,%lld,%lld,%lld,%lld,%.6f,%.2f,%.1f\n", r.model.c_str(), n, degree, tolerance,
                  fabric.c_str(), static_cast<long long>(r.flows), static_cast<long long>(r.reallocations),
                  static_cast<long long>(r.full_reallocations), static_cast<long long>(r.refilled_flows),
                  static_cast<long long>(r.refilled_bundles), r.iteration_ns / 1e6, r.wall_s,
                  static_cast<double>(ru.ru_maxrss) / 1024.0);
      std::fflush(stdout);
    }
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return bench::guarded_main("bench_flow_model", kUsage, argc, argv, run); }
