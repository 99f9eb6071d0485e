#include "coll/stage_cost.h"

#include <algorithm>

#include "core/units.h"

namespace chorus::coll {

std::string_view algorithm_name(const net::Dimension& dim, Phase phase) {
  switch (dim.kind) {
    case net::DimKind::kRing:
      return "ring";
    case net::DimKind::kFullyConnected:
      return "direct";
    case net::DimKind::kSwitch:
      return phase == Phase::kAllToAll ? "pairwise" : "halving_doubling";
  }
  return "?";
}

double peer_bandwidth_gbps(const net::Dimension& dim) {
  int links = dim.links_per_npu;
  if (dim.kind == net::DimKind::kFullyConnected && dim.size > 2) links /= dim.size - 1;
  if (dim.kind == net::DimKind::kRing && dim.size > 2) links /= 2;
  return dim.link_bandwidth_gbps * std::max(links, 1);
}

double stage_bandwidth_gbps(const net::Dimension& dim, Phase phase) {
  return phase == Phase::kPointToPoint ? peer_bandwidth_gbps(dim) : dim.aggregate_bandwidth_gbps();
}

StageCost stage_cost(const net::Dimension& dim, Phase phase, double bytes_before) {
  if (phase == Phase::kPointToPoint) return {1, bytes_before};
  switch (dim.kind) {
    case net::DimKind::kRing:
      return ring_cost(phase, dim.size, bytes_before);
    case net::DimKind::kFullyConnected:
      return direct_cost(phase, dim.size, bytes_before);
    case net::DimKind::kSwitch:
      return halving_doubling_cost(phase, dim.size, bytes_before);
  }
  return {};
}

double fixed_delay_ns(const net::Dimension& dim, Phase phase) {
  return stage_cost(dim, phase, 0).steps * dim.latency_ns;
}

double bandwidth_time_ns(const net::Dimension& dim, Phase phase, double bytes_before) {
  return transfer_time_ns(stage_cost(dim, phase, bytes_before).bytes_sent, stage_bandwidth_gbps(dim, phase));
}

double stage_time_ns(const net::Dimension& dim, Phase phase, double bytes_before) {
  return fixed_delay_ns(dim, phase) + bandwidth_time_ns(dim, phase, bytes_before);
}

}  // namespace chorus::coll
