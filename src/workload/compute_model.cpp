#include "workload/compute_model.h"

#include <algorithm>

namespace chorus::workload {

double ComputeModel::time_ns(double flops, double mem_bytes) const {
  // TFLOP/s = 10^3 FLOP/ns; GB/s = 1 byte/ns.
  return std::max(flops / (peak_tflops * 1e3), mem_bytes / memory_bandwidth_gbs);
}

double ComputeModel::node_time_ns(const Node& node) const {
  if (node.kind != NodeKind::kCompute) return 0;
  if (node.duration_ns >= 0) return node.duration_ns;
  return time_ns(node.flops, node.mem_bytes);
}

}  // namespace chorus::workload
