#include "sched/ideal.h"

#include "core/units.h"

namespace chorus::sched {

double ideal_bytes_per_npu(const net::Network& network, CollectiveKind op, double size_bytes) {
  const double p = static_cast<double>(network.num_npus());
  const double one_pass = (p - 1) / p * size_bytes;
  return op == CollectiveKind::kAllReduce ? 2 * one_pass : one_pass;
}

double ideal_time_ns(const net::Network& network, CollectiveKind op, double size_bytes) {
  return transfer_time_ns(ideal_bytes_per_npu(network, op, size_bytes), network.total_bandwidth_gbps());
}

}  // namespace chorus::sched
