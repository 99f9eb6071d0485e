#include "sim/ideal_network.h"

#include <algorithm>
#include <limits>

#include "coll/stage_cost.h"
#include "core/error.h"
#include "core/units.h"

namespace chorus::sim {

IdealNetwork::IdealNetwork(const net::Network& network) : network_(network) {}

double IdealNetwork::ideal_bytes_per_npu(const net::Network& network, const workload::Node& comm) {
  if (comm.comm == workload::CommKind::kPointToPoint) return comm.bytes;
  double p = 1;
  for (int d : comm.dims) p *= network.dims[static_cast<size_t>(d)].size;
  const double one_pass = (p - 1) / p * comm.bytes;
  return comm.op == CollectiveKind::kAllReduce ? 2 * one_pass : one_pass;
}

double IdealNetwork::ideal_time_ns(const net::Network& network, const workload::Node& comm) {
  double bw = 0;
  if (comm.comm == workload::CommKind::kPointToPoint)  // only the links to the peer can carry it
    bw = coll::peer_bandwidth_gbps(network.dims[static_cast<size_t>(comm.dims[0])]);
  else
    for (int d : comm.dims) bw += network.dims[static_cast<size_t>(d)].aggregate_bandwidth_gbps();
  return bw > 0 ? transfer_time_ns(ideal_bytes_per_npu(network, comm), bw) : 0.0;
}

void IdealNetwork::start(int id, const workload::Node& comm, double now_ns) {
  advance_to(now_ns);
  bytes_ += ideal_bytes_per_npu(network_, comm);
  active_.push_back({id, &comm, ideal_time_ns(network_, comm), false});
  assign();
}

double IdealNetwork::next_event_ns() const {
  double next = std::numeric_limits<double>::infinity();
  for (const auto& a : active_)
    if (a.running) next = std::min(next, now_ns_ + a.remaining_ns);
  return next;
}

void IdealNetwork::advance_to(double now_ns) {
  const double dt = now_ns - now_ns_;
  for (auto& a : active_)
    if (a.running) a.remaining_ns -= dt;
  now_ns_ = now_ns;
}

// Shortest remaining time first, each collective taking all of its dimensions.
void IdealNetwork::assign() {
  std::vector<size_t> order(active_.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return active_[a].remaining_ns < active_[b].remaining_ns; });
  std::vector<bool> busy(network_.dims.size(), false);
  for (size_t i : order) {
    auto& a = active_[i];
    bool free = true;
    for (int d : a.comm->dims) free = free && !busy[static_cast<size_t>(d)];
    a.running = free;
    if (free)
      for (int d : a.comm->dims) busy[static_cast<size_t>(d)] = true;
  }
}

void IdealNetwork::step(std::vector<int>& finished) {
  const double t = next_event_ns();
  // Finish the running collectives due at t (the same sum that defined t), advance the rest.
  for (size_t i = 0; i < active_.size();) {
    auto& a = active_[i];
    if (a.running && now_ns_ + a.remaining_ns <= t) {
      finished.push_back(a.id);
      active_.erase(active_.begin() + static_cast<long>(i));
    } else {
      ++i;
    }
  }
  advance_to(t);
  assign();
}

}  // namespace chorus::sim
