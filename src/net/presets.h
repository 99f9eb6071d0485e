#pragma once
// Embedded networks: the six 1024-NPU platforms of Themis Table 2 and the paper's
// "current" 2D platform (Sec. 3.2: 1200 Gb/s intra-node, 100 Gb/s NIC).
#include <optional>
#include <string>
#include <vector>

#include "net/network.h"

namespace chorus::net {

// Names exactly as Table 2: 2D-SW_SW, 3D-SW_SW_SW_homo, 3D-SW_SW_SW_hetero, 3D-FC_Ring_SW,
// 4D-Ring_SW_SW_SW, 4D-Ring_FC_Ring_SW; plus 2D-current.
const std::vector<Network>& presets();
std::vector<std::string> preset_names();
std::optional<Network> find_preset(const std::string& name);
// The six next-generation topologies of Table 2 (the microbenchmark set).
std::vector<Network> table2_presets();

}  // namespace chorus::net
