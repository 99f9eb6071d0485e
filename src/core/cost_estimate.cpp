#include "core/cost_estimate.h"

namespace chorus {

void CostEstimate::add(const ParamValues& point, double seconds) {
  all_.seconds += seconds;
  all_.count += 1;
  for (const auto& kv : point) {
    auto& s = by_value_[kv];
    s.seconds += seconds;
    s.count += 1;
  }
}

double CostEstimate::predict(const ParamValues& point) const {
  if (all_.count == 0) return 0;
  const double mean = all_.seconds / all_.count;
  if (!(mean > 0)) return 0;
  double estimate = mean;
  for (const auto& kv : point) {
    const auto it = by_value_.find(kv);
    if (it != by_value_.end()) estimate *= (it->second.seconds / it->second.count) / mean;
  }
  return estimate;
}

}  // namespace chorus
