// Themis Fig. 9: the share of each time window in which a dimension had a chunk to process.
#include <algorithm>
#include <cmath>

#include "sim/collective_result.h"

namespace chorus::sim {

std::vector<double> activity_rate(const std::vector<std::pair<double, double>>& intervals, double window_ns,
                                  double end_ns) {
  const auto windows = static_cast<size_t>(std::max(1.0, std::ceil(end_ns / window_ns)));
  std::vector<double> rate(windows, 0.0);
  for (const auto& [b, e] : intervals) {
    auto w = static_cast<size_t>(b / window_ns);
    for (; w < windows && w * window_ns < e; ++w) {
      const double lo = std::max(b, w * window_ns);
      const double hi = std::min(e, (w + 1) * window_ns);
      if (hi > lo) rate[w] += hi - lo;
    }
  }
  for (size_t w = 0; w < windows; ++w) {
    const double len = std::min(window_ns, end_ns - w * window_ns);
    rate[w] = len > 0 ? rate[w] / len : 0.0;
  }
  return rate;
}

}  // namespace chorus::sim
