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

// The collective algorithm a dimension runs. kTable1: the one Themis Table 1 gives its kind (ring
// -> ring, fully_connected -> direct, switch -> halving-doubling, or ring when the switch's size
// is not a power of two); the others are chosen explicitly (an ASTRA-sim system file's
// *-implementation, or `algorithm:` in chorus's network YAML).
enum class Algorithm { kTable1, kRing, kDirect, kHalvingDoubling, kDoubleBinaryTree };

std::string_view to_string(Algorithm algorithm);  // "table1", "ring", "direct", "halving_doubling", ...
// Accepts chorus's names (ring, direct, halving_doubling, double_binary_tree) and ASTRA-sim's
// (ring, direct, halvingDoubling, doubleBinaryTree), case-insensitive. False for anything else.
bool parse_algorithm(std::string_view text, Algorithm& algorithm);

struct Dimension {
  DimKind kind = DimKind::kSwitch;
  int size = 2;                    // P_K: NPUs that talk to each other on this dimension
  double link_bandwidth_gbps = 0;  // uni-directional, per link
  int links_per_npu = 1;
  double latency_ns = 0;  // step latency of Themis Sec. 4.4

  // The algorithm for reduce-scatter and all-gather stages, and for all-to-all stages.
  Algorithm algorithm = Algorithm::kTable1;
  Algorithm all_to_all_algorithm = Algorithm::kTable1;
  // ASTRA-sim's meaning of bandwidth (its congestion-unaware analytical backend): every message
  // an algorithm sends at once gets link_bandwidth_gbps in full, so a step of direct sends to its
  // P-1 peers at P-1 times the link bandwidth, and ring, halving-doubling and double binary tree
  // at once. false (chorus's and Themis's meaning): a stage runs at the aggregate bandwidth.
  bool per_message_bandwidth = false;
  // The reduction's local-memory traffic (ASTRA-sim's local-mem-bw, GB/s = 10^9 B/s): a
  // reduce-scatter stage also pays 3 x bytes / this (read two operands, write one). 0: not modelled.
  double reduce_memory_GBps = 0;
  // Added to every step of a collective's stage besides the latency (ASTRA-sim's endpoint-delay).
  double endpoint_delay_ns = 0;

  // Aggregate uni-directional bandwidth one NPU has on this dimension.
  double aggregate_bandwidth_gbps() const { return link_bandwidth_gbps * links_per_npu; }
};

}  // namespace chorus::net
