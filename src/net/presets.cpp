#include "net/presets.h"

namespace chorus::net {
namespace {

Dimension dim(DimKind kind, int size, double link_gbps, int links, double latency_ns) {
  return Dimension{kind, size, link_gbps, links, latency_ns};
}

std::vector<Network> make_presets() {
  using K = DimKind;
  // Themis Table 2: size, BW/link (Gb/s), #links/NPU, latency (ns) per dimension.
  return {
      {"2D-SW_SW", {dim(K::kSwitch, 16, 200, 6, 700), dim(K::kSwitch, 64, 800, 1, 1700)}},
      {"3D-SW_SW_SW_homo",
       {dim(K::kSwitch, 16, 200, 4, 700), dim(K::kSwitch, 8, 200, 4, 700), dim(K::kSwitch, 8, 800, 1, 1700)}},
      {"3D-SW_SW_SW_hetero",
       {dim(K::kSwitch, 16, 200, 8, 700), dim(K::kSwitch, 8, 200, 4, 700), dim(K::kSwitch, 8, 400, 1, 1700)}},
      {"3D-FC_Ring_SW",
       {dim(K::kFullyConnected, 8, 200, 7, 700), dim(K::kRing, 16, 200, 4, 700), dim(K::kSwitch, 8, 400, 1, 1700)}},
      {"4D-Ring_SW_SW_SW",
       {dim(K::kRing, 4, 1000, 2, 20), dim(K::kSwitch, 4, 200, 8, 700), dim(K::kSwitch, 8, 200, 4, 700),
        dim(K::kSwitch, 8, 400, 1, 1700)}},
      {"4D-Ring_FC_Ring_SW",
       {dim(K::kRing, 4, 1500, 2, 20), dim(K::kFullyConnected, 8, 200, 7, 700), dim(K::kRing, 4, 200, 6, 700),
        dim(K::kSwitch, 8, 800, 1, 1700)}},
      // Sec. 3.2 "current" platform: 1200 Gb/s inside a 16-NPU node, 100 Gb/s NICs, 1024 NPUs.
      {"2D-current", {dim(K::kSwitch, 16, 200, 6, 700), dim(K::kSwitch, 64, 100, 1, 1700)}},
  };
}

}  // namespace

const std::vector<Network>& presets() {
  static const std::vector<Network> all = make_presets();
  return all;
}

std::vector<std::string> preset_names() {
  std::vector<std::string> names;
  for (const auto& n : presets()) names.push_back(n.name);
  return names;
}

std::optional<Network> find_preset(const std::string& name) {
  for (const auto& n : presets())
    if (n.name == name) return n;
  return std::nullopt;
}

std::vector<Network> table2_presets() {
  const auto& all = presets();
  return std::vector<Network>(all.begin(), all.begin() + 6);
}

}  // namespace chorus::net
