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

#include "core/split.h"
#include "eval/topoopt_iterations.h"

using namespace chorus;

int main(int argc, char** argv) {
  std::vector<int> sizes;
  int degree = 4;
  double tolerance = 0;
  int iterations = 1;
  std::vector<std::string> fabrics = {"ideal-fat-tree", "expander", "topoopt-oneshot"};
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--degree" && i + 1 < argc) degree = std::atoi(argv[++i]);
    else if (a == "--tolerance" && i + 1 < argc) tolerance = std::atof(argv[++i]);
    else if (a == "--fabrics" && i + 1 < argc) fabrics = split_list(argv[++i]);
    else if (a == "--iterations" && i + 1 < argc) iterations = std::atoi(argv[++i]);
    else sizes.push_back(std::atoi(a.c_str()));
  }
  if (sizes.empty()) sizes = {128};
  std::printf("model,servers,degree,tolerance,fabric,flows,reallocations,full_reallocations,refilled_flows,iteration_ms,wall_s,peak_rss_mb\n");
  for (int n : sizes)
    for (const auto& fabric : fabrics) {
      eval::IterationStudyOptions o;
      o.servers = n;
      o.iterations = iterations;
      o.batch_tolerance = tolerance;
      const auto r = eval::run_iteration("topoopt-dlrm", fabric, degree, 100, o);
      rusage ru{};
      getrusage(RUSAGE_SELF, &ru);
      std::printf("%s,%d,%d,%g,%s,%lld,%lld,%lld,%lld,%.6f,%.2f,%.1f\n", r.model.c_str(), n, degree, tolerance, fabric.c_str(),
                  static_cast<long long>(r.flows), static_cast<long long>(r.reallocations),
                  static_cast<long long>(r.full_reallocations), static_cast<long long>(r.refilled_flows), r.iteration_ns / 1e6, r.wall_s,
                  static_cast<double>(ru.ru_maxrss) / 1024.0);
      std::fflush(stdout);
    }
  return 0;
}
