#include "sim/flow_network.h"


#include <fmt/format.h>

#include "core/error.h"
#include "sim/flow/traffic.h"

namespace chorus::sim {

FlowNetwork::FlowNetwork(const net::GraphNetwork& fabric, const net::Network& logical, FlowNetworkOptions options)
    : fabric_(net::merge_parallel_links(fabric)),
      logical_(logical),
      options_(std::move(options)),
      router_(fabric_),
      engine_(fabric_, options_.batch_tolerance) {
  net::validate(fabric_, fabric.name);
  if (static_cast<std::uint64_t>(fabric_.servers) != logical.num_npus())
    throw InputError(fabric.name, fmt::format("the fabric has {} servers but the workload runs on {} NPUs ({})",
                                              fabric_.servers, logical.num_npus(), logical.shape()));
  for (const auto& g : fabric_.rings)
    if (!g.orders.empty()) rings_[g.servers] = g.orders;
}

const std::vector<std::vector<int>>& FlowNetwork::groups(const std::vector<int>& dims) {
  auto it = groups_.find(dims);
  if (it == groups_.end()) it = groups_.emplace(dims, net::npu_groups(logical_, dims)).first;
  return it->second;
}

const std::vector<std::vector<int>>& FlowNetwork::rings_of(const std::vector<int>& group) const {
  static const std::vector<std::vector<int>> none;
  const auto it = rings_.find(group);
  return it == rings_.end() ? none : it->second;
}

void FlowNetwork::start(int id, const workload::Node& comm, double now_ns) {
  auto& flows = engine_.flows();
  const std::size_t first = flows.size();
  std::vector<int> ends;
  if (comm.comm == workload::CommKind::kPointToPoint) {
    for (int s = 0; s < fabric_.servers; ++s)
      ends.push_back(flow::point_to_point(router_, s, net::next_along(logical_, s, comm.dims.at(0)), comm.bytes, now_ns, flows));
  } else {
    for (const auto& group : groups(comm.dims)) {
      const int n = static_cast<int>(group.size());
      if (n < 2) continue;
      if (comm.op == coll::CollectiveOp::kAllToAll) {
        ends.push_back(flow::all_to_all(router_, group, comm.bytes, now_ns, flows));
        continue;
      }
      const int steps = comm.op == coll::CollectiveOp::kAllReduce ? 2 * (n - 1) : n - 1;
      const auto& own = rings_of(group);
      const auto& rings = own.empty() ? std::vector<std::vector<int>>{group} : own;
      const double share = comm.bytes / static_cast<double>(rings.size());
      for (const auto& ring : rings)
        ends.push_back(options_.stepped_rings ? flow::ring_collective(router_, ring, share, steps, now_ns, flows)
                                              : flow::ring_pipelined(router_, ring, share, steps, now_ns, flows));
    }
  }
  const int join = flow::barrier(now_ns, flows, ends);
  for (std::size_t f = first; f < flows.size(); ++f) bytes_sent_ += flows[f].path.empty() ? 0.0 : flows[f].bytes;
  engine_.admit();
  node_of_join_.emplace(join, id);
}

void FlowNetwork::step(std::vector<int>& finished) {
  completed_.clear();
  engine_.step(completed_);
  for (int f : completed_) {
    const auto it = node_of_join_.find(f);
    if (it == node_of_join_.end()) continue;
    finished.push_back(it->second);
    node_of_join_.erase(it);
  }
}

double server_bandwidth_gbps(const net::GraphNetwork& fabric) {
  double total = 0;
  for (const auto& l : fabric.links)
    if (l.from < fabric.servers) total += l.gbps;
  return fabric.servers > 0 ? total / fabric.servers : 0.0;
}

FabricRun simulate_workload(const workload::Dag& dag, const net::Network& logical, const net::GraphNetwork& fabric,
                            const workload::ComputeModel& compute, FlowNetworkOptions options) {
  workload::validate(dag, logical.num_dims(), dag.name);
  std::vector<double> compute_ns(dag.nodes.size());
  for (std::size_t i = 0; i < dag.nodes.size(); ++i) compute_ns[i] = compute.node_time_ns(dag.nodes[i]);
  FlowNetwork network(fabric, logical, std::move(options));
  FabricRun run;
  run.result = run_dag(dag, compute_ns, network, server_bandwidth_gbps(network.fabric()));
  run.fabric = network.fabric();
  run.flows = network.engine().result();
  run.flow_count = network.engine().flows().size();
  run.traffic = flow::traffic_matrix(run.fabric.servers, network.engine().flows());
  return run;
}

}  // namespace chorus::sim
