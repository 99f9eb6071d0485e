#include "sim/analytical_network.h"

#include <fmt/format.h>

#include "core/error.h"

namespace chorus::sim {
namespace {

SimOptions without_dim_order(SimOptions options) {
  options.record_dim_order = false;
  return options;
}

}  // namespace

AnalyticalNetwork::AnalyticalNetwork(const net::Network& network, const sched::SchedulerSpec& scheduler,
                                     int chunks_per_collective, const sched::ThemisOptions& themis,
                                     const SimOptions& options)
    : network_(network),
      scheduler_(scheduler),
      chunks_(chunks_per_collective),
      themis_(themis),
      executor_(network, scheduler.policy, without_dim_order(options)) {
  if (chunks_ < 1) throw InputError("chunks", fmt::format("chunks per collective must be >= 1, got {}", chunks_));
}

const sched::Schedule& AnalyticalNetwork::schedule_for(const workload::Node& comm) {
  const bool p2p = comm.comm == workload::CommKind::kPointToPoint;
  auto key = std::make_tuple(p2p ? -1 : static_cast<int>(comm.op), comm.bytes, comm.dims);
  auto it = schedules_.find(key);
  if (it != schedules_.end()) return *it->second;
  if (p2p) {
    // One chunk, one stage: the bytes to the peer on dims[0], in that dimension's queue with
    // the collectives' chunks.
    auto s = std::make_unique<sched::Schedule>();
    s->size_bytes = comm.bytes;
    s->num_chunks = 1;
    s->scheduler = "p2p";
    s->policy = scheduler_.policy;
    s->chunks.push_back(sched::ChunkSchedule{{sched::Stage{coll::Phase::kPointToPoint, comm.dims[0]}}});
    return *schedules_.emplace(std::move(key), std::move(s)).first->second;
  }
  // Schedule on the sub-network of the dimensions the collective spans, then name the
  // stages by their dimension in the whole network.
  net::Network sub;
  sub.name = network_.name;
  for (int d : comm.dims) sub.dims.push_back(network_.dims[static_cast<size_t>(d)]);
  auto s =
      std::make_unique<sched::Schedule>(sched::make_schedule(sub, comm.op, comm.bytes, chunks_, scheduler_, themis_));
  for (auto& ch : s->chunks)
    for (auto& st : ch.stages) st.dim = comm.dims[static_cast<size_t>(st.dim)];
  return *schedules_.emplace(std::move(key), std::move(s)).first->second;
}

void AnalyticalNetwork::start(int id, const workload::Node& comm, double now_ns) {
  double group = 1;
  for (int d : comm.dims) group *= network_.dims[static_cast<size_t>(d)].size;
  // The executor numbers collectives 0, 1, ... in start order: node_of_ follows it.
  executor_.start(schedule_for(comm), group, now_ns);
  node_of_.push_back(id);
}

void AnalyticalNetwork::step(std::vector<int>& finished) {
  collective_done_.clear();
  executor_.step(collective_done_);
  for (int c : collective_done_) finished.push_back(node_of(c));
}

double AnalyticalNetwork::bytes_sent_per_npu() const {
  double b = 0;
  for (const auto& d : executor_.dim_metrics()) b += d.bytes_per_npu;
  return b;
}

}  // namespace chorus::sim
