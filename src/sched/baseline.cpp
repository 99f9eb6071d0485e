#include "sched/baseline.h"

#include <algorithm>
#include <numeric>

namespace chorus::sched {

std::vector<int> baseline_order(coll::Phase phase, int num_dims) {
  std::vector<int> order(static_cast<size_t>(num_dims));
  std::iota(order.begin(), order.end(), 0);
  if (phase == coll::Phase::kAllGather) std::reverse(order.begin(), order.end());
  return order;
}

std::vector<Stage> chunk_stages(CollectiveKind op, const std::vector<int>& rs_order, const std::vector<int>& ag_order) {
  std::vector<Stage> stages;
  using coll::Phase;
  if (op == CollectiveKind::kAllToAll) {
    for (int d : rs_order) stages.push_back({Phase::kAllToAll, d});
    return stages;
  }
  if (op == CollectiveKind::kAllReduce || op == CollectiveKind::kReduceScatter)
    for (int d : rs_order) stages.push_back({Phase::kReduceScatter, d});
  if (op == CollectiveKind::kAllReduce || op == CollectiveKind::kAllGather)
    for (int d : ag_order) stages.push_back({Phase::kAllGather, d});
  return stages;
}

Schedule baseline_schedule(const net::Network& network, CollectiveKind op, double size_bytes, int num_chunks) {
  Schedule s;
  s.op = op;
  s.size_bytes = size_bytes;
  s.num_chunks = num_chunks;
  s.scheduler = "baseline";
  s.policy = IntraDimPolicy::kFifo;
  const int d = network.num_dims();
  const auto rs = baseline_order(coll::Phase::kReduceScatter, d);
  const auto ag = baseline_order(coll::Phase::kAllGather, d);
  s.chunks.assign(static_cast<size_t>(num_chunks), ChunkSchedule{chunk_stages(op, rs, ag)});
  return s;
}

}  // namespace chorus::sched
