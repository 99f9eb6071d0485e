#pragma once
// Small statistics over measurements (medians of repeated timings).
#include <algorithm>
#include <vector>

namespace chorus {

// The median of `v` (mean of the middle two for an even count); 0 for an empty vector.
inline double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const auto n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace chorus
