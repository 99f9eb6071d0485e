#pragma once
// One dimension of a multi-dimensional network (Themis Sec. 2.3, Table 2).
#include <string>
#include <string_view>

namespace chorus::net {

// Physical topology of a dimension (Themis Table 1).
enum class DimKind { kRing, kFullyConnected, kSwitch };

std::string_view to_string(DimKind kind);
// Accepts "ring", "fully_connected" (also "fc", "fullyconnected"), "switch" (also "sw"),
// case-insensitive. Returns false for anything else.
bool parse_dim_kind(std::string_view text, DimKind& kind);

struct Dimension {
  DimKind kind = DimKind::kSwitch;
  int size = 2;                    // P_K: NPUs that talk to each other on this dimension
  double link_bandwidth_gbps = 0;  // uni-directional, per link
  int links_per_npu = 1;
  double latency_ns = 0;  // step latency of Themis Sec. 4.4

  // Aggregate uni-directional bandwidth one NPU has on this dimension.
  double aggregate_bandwidth_gbps() const { return link_bandwidth_gbps * links_per_npu; }
};

}  // namespace chorus::net
