#include "topoopt/dag_traffic.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "core/error.h"
#include "workload/parallelism.h"
#include "workload/zoo.h"

namespace chorus::topoopt {
namespace {

// Servers whose coordinates equal `server`'s outside the dimensions in `dims`, ascending.
std::vector<int> group_of(int server, const std::vector<int>& dims, const net::Network& network) {
  std::vector<int> stride(network.dims.size(), 1);
  for (std::size_t d = 1; d < network.dims.size(); ++d) stride[d] = stride[d - 1] * network.dims[d - 1].size;
  std::vector<int> members = {server};
  for (int d : dims) {
    const auto k = static_cast<std::size_t>(d);
    const int coord = server / stride[k] % network.dims[k].size;
    std::vector<int> grown;
    for (int m : members)
      for (int c = 0; c < network.dims[k].size; ++c) grown.push_back(m + (c - coord) * stride[k]);
    members = std::move(grown);
  }
  std::sort(members.begin(), members.end());
  return members;
}

// Every group of servers that differ only in `dims` (each listed once, by its smallest server).
std::vector<std::vector<int>> groups_over(const std::vector<int>& dims, const net::Network& network) {
  const int n = static_cast<int>(network.num_npus());
  std::vector<std::vector<int>> groups;
  std::vector<char> placed(static_cast<std::size_t>(n), 0);
  for (int s = 0; s < n; ++s) {
    if (placed[static_cast<std::size_t>(s)]) continue;
    auto members = group_of(s, dims, network);
    for (int m : members) placed[static_cast<std::size_t>(m)] = 1;
    groups.push_back(std::move(members));
  }
  return groups;
}

}  // namespace

Traffic traffic_from_dag(const workload::Dag& dag, const net::Network& network) {
  const int n = static_cast<int>(network.num_npus());
  std::map<std::vector<int>, double> groups;            // servers -> all-reduce bytes
  std::map<std::pair<int, int>, double> transfers;      // (src, dst) -> bytes
  std::map<std::vector<int>, std::vector<std::vector<int>>> groups_by_dims;
  for (const auto& node : dag.nodes) {
    if (node.kind != workload::NodeKind::kComm || node.iteration != 0 || node.bytes <= 0 || node.dims.empty()) continue;
    if (node.comm == workload::CommKind::kPointToPoint) {
      const auto d = static_cast<std::size_t>(node.dims[0]);
      int stride = 1;
      for (std::size_t k = 0; k < d; ++k) stride *= network.dims[k].size;
      for (int s = 0; s < n; ++s) {
        const int coord = s / stride % network.dims[d].size;
        transfers[{s, s + ((coord + 1) % network.dims[d].size - coord) * stride}] += node.bytes;
      }
      continue;
    }
    // The groups of a set of dimensions are the same for every node over it: computed once.
    auto cached = groups_by_dims.find(node.dims);
    if (cached == groups_by_dims.end()) cached = groups_by_dims.emplace(node.dims, groups_over(node.dims, network)).first;
    for (const auto& members : cached->second) {
      if (members.size() < 2) continue;
      const double size = static_cast<double>(members.size());
      switch (node.op) {
        case coll::CollectiveOp::kAllReduce: groups[members] += node.bytes; break;
        case coll::CollectiveOp::kReduceScatter:
        case coll::CollectiveOp::kAllGather: groups[members] += node.bytes / 2; break;
        case coll::CollectiveOp::kAllToAll:
          for (int a : members)
            for (int b : members)
              if (a != b) transfers[{a, b}] += node.bytes / size;
          break;
      }
    }
  }
  Traffic t;
  t.servers = n;
  for (auto& [members, bytes] : groups) t.allreduce_groups.push_back({members, bytes});
  for (const auto& [pair, bytes] : transfers) t.mp.push_back({pair.first, pair.second, bytes});
  return t;
}

Traffic zoo_traffic(const std::string& name, int servers, const std::string& field) {
  if (servers < 2) throw InputError("--servers", fmt::format("a fabric needs at least 2 servers, got {}", servers));
  auto entry = workload::zoo_model(name, field);
  entry.parallelism.iterations = 1;
  const int group = std::max(entry.parallelism.mp_npus, entry.parallelism.ep_npus);
  net::Network logical;
  logical.name = fmt::format("{} servers", servers);
  net::Dimension dim;
  dim.kind = net::DimKind::kRing;  // the logical shape only: any size, bandwidth irrelevant here
  dim.link_bandwidth_gbps = 100;
  if (group > 1 && group < servers && servers % group == 0) {
    dim.size = group;
    logical.dims.push_back(dim);
    dim.size = servers / group;
    logical.dims.push_back(dim);
  } else {
    dim.size = servers;
    logical.dims.push_back(dim);
  }
  auto t = traffic_from_dag(workload::build_training_dag(entry.model, entry.parallelism, logical), logical);
  return t;
}

}  // namespace chorus::topoopt
