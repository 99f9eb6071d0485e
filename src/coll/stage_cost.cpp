#include "coll/stage_cost.h"

#include "core/units.h"

namespace chorus::coll {

std::string_view algorithm_name(const net::Dimension& dim, Phase phase) {
  switch (dim.kind) {
    case net::DimKind::kRing: return "ring";
    case net::DimKind::kFullyConnected: return "direct";
    case net::DimKind::kSwitch: return phase == Phase::kAllToAll ? "pairwise" : "halving_doubling";
  }
  return "?";
}

StageCost stage_cost(const net::Dimension& dim, Phase phase, double bytes_before) {
  switch (dim.kind) {
    case net::DimKind::kRing: return ring_cost(phase, dim.size, bytes_before);
    case net::DimKind::kFullyConnected: return direct_cost(phase, dim.size, bytes_before);
    case net::DimKind::kSwitch: return halving_doubling_cost(phase, dim.size, bytes_before);
  }
  return {};
}

double fixed_delay_ns(const net::Dimension& dim, Phase phase) {
  return stage_cost(dim, phase, 0).steps * dim.latency_ns;
}

double bandwidth_time_ns(const net::Dimension& dim, Phase phase, double bytes_before) {
  return transfer_time_ns(stage_cost(dim, phase, bytes_before).bytes_sent, dim.aggregate_bandwidth_gbps());
}

double stage_time_ns(const net::Dimension& dim, Phase phase, double bytes_before) {
  return fixed_delay_ns(dim, phase) + bandwidth_time_ns(dim, phase, bytes_before);
}

}  // namespace chorus::coll
