#include "workload/compute_scale.h"

#include <cmath>

#include <fmt/format.h>

#include "core/error.h"

namespace chorus::workload {

void scale_compute(Dag& dag, double rate, const std::string& field) {
  if (!(rate > 0) || !std::isfinite(rate))
    throw InputError(field, fmt::format("must be a positive number (2 = compute twice as fast), got {}", rate));
  if (rate == 1) return;
  for (auto& n : dag.nodes) {
    if (n.kind != NodeKind::kCompute) continue;
    if (n.duration_ns >= 0) {
      n.duration_ns /= rate;
    } else {
      n.flops /= rate;
      n.mem_bytes /= rate;
    }
  }
}

}  // namespace chorus::workload
