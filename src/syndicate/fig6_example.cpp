#include "syndicate/fig6_example.h"

#include <fmt/format.h>

namespace chorus::syndicate {

workload::Dag fig6_workload(int iterations) {
  constexpr double kUnit = 1e6;  // 1 ms
  workload::Dag dag;
  dag.name = "syndicate-fig6";
  dag.iterations = iterations;
  auto compute = [&](const std::string& name, double units, std::vector<int> deps, int it) {
    workload::Node n;
    n.name = fmt::format("{} it{}", name, it);
    n.kind = workload::NodeKind::kCompute;
    n.duration_ns = units * kUnit;
    n.deps = std::move(deps);
    n.iteration = it;
    return dag.add(n);
  };
  auto comm = [&](const std::string& name, CollectiveKind op, std::vector<int> deps, int it) {
    workload::Node n;
    n.name = fmt::format("{} it{}", name, it);
    n.kind = workload::NodeKind::kComm;
    n.op = op;
    n.bytes = 4.0 * 1024 * 1024;  // the cost table is constant: the size does not matter
    n.dims = {0, 1};
    n.deps = std::move(deps);
    n.iteration = it;
    return dag.add(n);
  };
  int end = -1;
  for (int it = 0; it < iterations; ++it) {
    const int x = compute("X", 1, end < 0 ? std::vector<int>{} : std::vector<int>{end}, it);
    const int a = comm("a (all-to-all)", CollectiveKind::kAllToAll, {x}, it);
    const int b = comm("b (all-reduce)", CollectiveKind::kAllReduce, {x}, it);
    const int y = compute("Y", 1, {x}, it);
    const int c = comm("c (all-reduce)", CollectiveKind::kAllReduce, {y}, it);
    const int z = compute("Z", 2.5, {y, a}, it);
    const int d = comm("d (all-reduce)", CollectiveKind::kAllReduce, {z}, it);
    end = compute("end", 0, {b, c, d, z}, it);
  }
  return dag;
}

}  // namespace chorus::syndicate
