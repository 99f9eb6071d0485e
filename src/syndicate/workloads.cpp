#include "syndicate/workloads.h"

#include <fmt/format.h>

#include "core/error.h"
#include "net/network.h"
#include "syndicate/dlrm_models.h"
#include "syndicate/fig6_example.h"
#include "workload/parallelism.h"
#include "workload/workload_yaml.h"

namespace chorus::syndicate {

workload::Dag load_workload_dag(const std::string& name_or_path, const Topology& topo, int iterations,
                                const std::string& field) {
  if (iterations < 1 || iterations > 100)
    throw InputError("iterations", fmt::format("must be in 1..100, got {}", iterations));
  if (name_or_path == "syndicate-fig6") {
    if (topo.costs.empty() || topo.dims != std::vector<int>{2, 2})
      throw InputError(field, "syndicate-fig6 is defined by its cost table: use the topology syndicate-fig6");
    return fig6_workload(iterations);
  }
  for (const auto& spec : syndicate_models())
    if (spec.name == name_or_path)
      return dlrm_workload(spec, topo.npus(), static_cast<int>(topo.dims.size()), iterations);
  if (name_or_path == "moe-tiny") return moe_tiny_workload(static_cast<int>(topo.dims.size()), iterations);
  auto entry = workload::load_workload(name_or_path, field);
  entry.parallelism.iterations = iterations;
  if (workload::pipelined(entry.parallelism))
    throw InputError(name_or_path,
                     "SYNDICATE plans a DAG of one pipeline stage without micro-batches; "
                     "parallelism.pp_stages and microbatches are for `chorus sim workload`");
  // The DAG builders need only the grid's shape; channels and bandwidths are the optimizer's.
  net::Network grid;
  grid.name = topo.name;
  for (int size : topo.dims) {
    net::Dimension d;
    d.kind = net::DimKind::kSwitch;
    d.size = size;
    d.link_bandwidth_gbps = topo.channels.front().bandwidth_gbps;
    grid.dims.push_back(d);
  }
  auto dag = workload::build_training_dag(entry.model, entry.parallelism, grid);
  dag.iterations = iterations;
  return dag;
}

}  // namespace chorus::syndicate
