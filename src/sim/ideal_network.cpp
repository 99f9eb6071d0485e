#include "sim/ideal_network.h"

#include "core/error.h"
#include "core/units.h"

namespace chorus::sim {

IdealNetwork::IdealNetwork(const net::Network& network) : network_(network), busy_(network.dims.size(), false) {}

double IdealNetwork::ideal_bytes_per_npu(const net::Network& network, const workload::Node& comm) {
  double p = 1;
  for (int d : comm.dims) p *= network.dims[static_cast<size_t>(d)].size;
  const double one_pass = (p - 1) / p * comm.bytes;
  return comm.op == coll::CollectiveOp::kAllReduce ? 2 * one_pass : one_pass;
}

double IdealNetwork::ideal_time_ns(const net::Network& network, const workload::Node& comm) {
  double bw = 0;
  for (int d : comm.dims) bw += network.dims[static_cast<size_t>(d)].aggregate_bandwidth_gbps();
  return bw > 0 ? transfer_time_ns(ideal_bytes_per_npu(network, comm), bw) : 0.0;
}

void IdealNetwork::start(int id, const workload::Node& comm, double now_ns) {
  if (comm.comm == workload::CommKind::kPointToPoint)
    throw InputError(comm.name, "point-to-point transfers are not modelled by the ideal network yet");
  pending_.push_back({id, &comm});
  dispatch(now_ns);
}

void IdealNetwork::dispatch(double now_ns) {
  for (size_t i = 0; i < pending_.size();) {
    const auto& p = pending_[i];
    bool free = true;
    for (int d : p.comm->dims) free = free && !busy_[static_cast<size_t>(d)];
    if (!free) {
      ++i;
      continue;
    }
    for (int d : p.comm->dims) busy_[static_cast<size_t>(d)] = true;
    bytes_ += ideal_bytes_per_npu(network_, *p.comm);
    events_.schedule_at(now_ns + ideal_time_ns(network_, *p.comm), p);
    pending_.erase(pending_.begin() + static_cast<long>(i));
  }
}

void IdealNetwork::step(std::vector<int>& finished) {
  const auto e = events_.pop();
  for (int d : e.payload.comm->dims) busy_[static_cast<size_t>(d)] = false;
  finished.push_back(e.payload.id);
  dispatch(e.time_ns);
}

}  // namespace chorus::sim
