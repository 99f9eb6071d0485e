#include "topoopt/dag_traffic.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "core/error.h"
#include "workload/parallelism.h"
#include "workload/zoo.h"

namespace chorus::topoopt {
namespace {
// Bytes per ordered server pair, summed in the order they are added and listed by (src, dst): a
// dense matrix up to kDenseServers servers (an all-to-all over 1,024 servers adds a million pairs
// per node, which a tree paid a search and a node for), a map beyond.
class PairBytes {
 public:
  static constexpr int kDenseServers = 4096;
  explicit PairBytes(int servers) : n_(servers) {
    if (dense()) {
      bytes_.assign(static_cast<std::size_t>(n_) * static_cast<std::size_t>(n_), 0.0);
      seen_.assign(bytes_.size(), 0);
    }
  }
  void add(int src, int dst, double bytes) {
    if (!dense()) {
      sparse_[{src, dst}] += bytes;
      return;
    }
    const std::size_t at = static_cast<std::size_t>(src) * static_cast<std::size_t>(n_) + static_cast<std::size_t>(dst);
    bytes_[at] += bytes;
    seen_[at] = 1;
  }
  void list(std::vector<MpTransfer>& out) const {
    if (!dense()) {
      for (const auto& [pair, bytes] : sparse_) out.push_back({pair.first, pair.second, bytes});
      return;
    }
    for (std::size_t at = 0; at < bytes_.size(); ++at)
      if (seen_[at])
        out.push_back({static_cast<int>(at / static_cast<std::size_t>(n_)),
                       static_cast<int>(at % static_cast<std::size_t>(n_)), bytes_[at]});
  }

 private:
  bool dense() const { return n_ <= kDenseServers; }
  int n_;
  std::vector<double> bytes_;
  std::vector<char> seen_;
  std::map<std::pair<int, int>, double> sparse_;
};
}  // namespace

Traffic traffic_from_dag(const workload::Dag& dag, const net::Network& network, const std::vector<int>& placement) {
  const int n = static_cast<int>(network.num_npus());
  net::validate_placement(placement, n, "placement");
  const auto server = [&](int npu) { return net::placed(placement, npu); };
  std::map<std::vector<int>, double> groups;  // servers -> all-reduce bytes
  PairBytes transfers(n);                     // (src, dst) -> bytes
  std::map<std::vector<int>, std::vector<std::vector<int>>> groups_by_dims;
  for (const auto& node : dag.nodes) {
    if (node.kind != workload::NodeKind::kComm || node.iteration != 0 || node.bytes <= 0 || node.dims.empty()) continue;
    if (node.comm == workload::CommKind::kPointToPoint) {
      for (int s = 0; s < n; ++s)
        transfers.add(server(s), server(net::next_along(network, s, node.dims[0])), node.bytes);
      continue;
    }
    // The groups of a set of dimensions are the same for every node over it: computed once.
    auto cached = groups_by_dims.find(node.dims);
    if (cached == groups_by_dims.end())
      cached = groups_by_dims.emplace(node.dims, net::npu_groups(network, node.dims, placement)).first;
    for (const auto& members : cached->second) {
      if (members.size() < 2) continue;
      const double size = static_cast<double>(members.size());
      switch (node.op) {
        case CollectiveKind::kAllReduce:
          groups[members] += node.bytes;
          break;
        case CollectiveKind::kReduceScatter:
        case CollectiveKind::kAllGather:
          groups[members] += node.bytes / 2;
          break;
        case CollectiveKind::kAllToAll:
          for (int a : members)
            for (int b : members)
              if (a != b) transfers.add(a, b, node.bytes / size);
          break;
        default:  // a DAG's collectives are Themis's four (coll::kThemisCollectives)
          break;
      }
    }
  }
  Traffic t;
  t.servers = n;
  for (auto& [members, bytes] : groups) t.allreduce_groups.push_back({members, bytes});
  transfers.list(t.mp);
  return t;
}

Traffic zoo_traffic(const std::string& name, int servers, const std::string& field) {
  if (servers < 2) throw InputError("servers", fmt::format("a fabric needs at least 2 servers, got {}", servers));
  auto entry = workload::zoo_model(name, field);
  entry.parallelism.iterations = 1;
  const auto logical = workload::logical_network(entry.parallelism, servers);
  auto t = traffic_from_dag(workload::build_training_dag(entry.model, entry.parallelism, logical), logical);
  return t;
}

}  // namespace chorus::topoopt
