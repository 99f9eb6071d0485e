#include "sched/latency_model.h"

#include "coll/stage_cost.h"

namespace chorus::sched {

std::vector<double> LatencyModel::calc_loads(double chunk_bytes, const std::vector<int>& order,
                                             coll::Phase phase) const {
  std::vector<double> loads(network_.dims.size(), 0.0);
  // Resident size before the first stage (Sec. 2.3): the chunk for RS, chunk / P for AG.
  double resident = chunk_bytes;
  if (phase == coll::Phase::kAllGather)
    for (int d : order) resident /= network_.dims[static_cast<size_t>(d)].size;
  for (int d : order) {
    const auto& dim = network_.dims[static_cast<size_t>(d)];
    loads[static_cast<size_t>(d)] += coll::bandwidth_time_ns(dim, phase, resident);
    resident = coll::resident_after(phase, resident, dim.size);
  }
  return loads;
}

double LatencyModel::stage_load_ns(int dim, coll::Phase phase, double bytes) const {
  const auto& d = network_.dims[static_cast<size_t>(dim)];
  const double resident = phase == coll::Phase::kAllGather ? bytes / d.size : bytes;
  return coll::bandwidth_time_ns(d, phase, resident);
}

std::vector<double> LatencyModel::fixed_delays_ns(coll::Phase phase) const {
  std::vector<double> a;
  for (const auto& d : network_.dims) a.push_back(coll::fixed_delay_ns(d, phase));
  return a;
}

}  // namespace chorus::sched
