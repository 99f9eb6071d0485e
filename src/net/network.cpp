#include "net/network.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fmt/format.h>
#include <string>

#include "core/error.h"
#include "core/units.h"

namespace chorus::net {

std::string_view to_string(DimKind kind) {
  switch (kind) {
    case DimKind::kRing:
      return "ring";
    case DimKind::kFullyConnected:
      return "fully_connected";
    case DimKind::kSwitch:
      return "switch";
  }
  return "?";
}

bool parse_dim_kind(std::string_view text, DimKind& kind) {
  std::string t(text);
  std::transform(t.begin(), t.end(), t.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (t == "ring")
    kind = DimKind::kRing;
  else if (t == "fully_connected" || t == "fullyconnected" || t == "fc")
    kind = DimKind::kFullyConnected;
  else if (t == "switch" || t == "sw")
    kind = DimKind::kSwitch;
  else
    return false;
  return true;
}

std::string_view to_string(Algorithm algorithm) {
  switch (algorithm) {
    case Algorithm::kTable1:
      return "table1";
    case Algorithm::kRing:
      return "ring";
    case Algorithm::kDirect:
      return "direct";
    case Algorithm::kHalvingDoubling:
      return "halving_doubling";
    case Algorithm::kDoubleBinaryTree:
      return "double_binary_tree";
  }
  return "?";
}

bool parse_algorithm(std::string_view text, Algorithm& algorithm) {
  std::string t;
  for (const char c : text)
    if (c != '_' && c != '-') t += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (t == "ring")
    algorithm = Algorithm::kRing;
  else if (t == "direct")
    algorithm = Algorithm::kDirect;
  else if (t == "halvingdoubling")
    algorithm = Algorithm::kHalvingDoubling;
  else if (t == "doublebinarytree")
    algorithm = Algorithm::kDoubleBinaryTree;
  else
    return false;
  return true;
}

namespace {

int stride_of(const Network& network, int dim) {
  int stride = 1;
  for (int d = 0; d < dim; ++d) stride *= network.dims[static_cast<std::size_t>(d)].size;
  return stride;
}

}  // namespace

std::vector<std::vector<int>> npu_groups(const Network& network, const std::vector<int>& dims) {
  const int n = static_cast<int>(network.num_npus());
  std::vector<std::vector<int>> groups;
  std::vector<char> placed(static_cast<std::size_t>(n), 0);
  for (int s = 0; s < n; ++s) {
    if (placed[static_cast<std::size_t>(s)]) continue;
    std::vector<int> members = {s};  // s is the group's smallest member: its coordinates along dims are 0
    for (int d : dims) {
      const int stride = stride_of(network, d);
      const int size = network.dims[static_cast<std::size_t>(d)].size;
      std::vector<int> grown;
      grown.reserve(members.size() * static_cast<std::size_t>(size));
      for (int m : members)
        for (int c = 0; c < size; ++c) grown.push_back(m + c * stride);
      members = std::move(grown);
    }
    std::sort(members.begin(), members.end());
    for (int m : members) placed[static_cast<std::size_t>(m)] = 1;
    groups.push_back(std::move(members));
  }
  return groups;
}

void validate_placement(const std::vector<int>& placement, int servers, const std::string& where) {
  if (placement.empty()) return;
  if (placement.size() != static_cast<std::size_t>(servers))
    throw InputError(where, fmt::format("placement lists {} NPUs for {} servers", placement.size(), servers));
  std::vector<char> seen(placement.size(), 0);
  for (std::size_t i = 0; i < placement.size(); ++i) {
    const int s = placement[i];
    if (s < 0 || s >= servers || seen[static_cast<std::size_t>(s)] != 0)
      throw InputError(where,
                       fmt::format("placement[{}] = {}: not a server of 0..{} or placed twice", i, s, servers - 1));
    seen[static_cast<std::size_t>(s)] = 1;
  }
}

std::vector<std::vector<int>> npu_groups(const Network& network, const std::vector<int>& dims,
                                         const std::vector<int>& placement) {
  auto groups = npu_groups(network, dims);
  if (!placement.empty())
    for (auto& g : groups)
      for (int& npu : g) npu = placed(placement, npu);
  return groups;
}

int next_along(const Network& network, int npu, int dim) {
  const int stride = stride_of(network, dim);
  const int size = network.dims[static_cast<std::size_t>(dim)].size;
  const int coord = npu / stride % size;
  return npu + ((coord + 1) % size - coord) * stride;
}

std::uint64_t Network::num_npus() const {
  std::uint64_t n = 1;
  for (const auto& d : dims) n *= static_cast<std::uint64_t>(d.size);
  return n;
}

double Network::total_bandwidth_gbps() const {
  double total = 0;
  for (const auto& d : dims) total += d.aggregate_bandwidth_gbps();
  return total;
}

std::string Network::shape() const {
  std::string s;
  for (const auto& d : dims) s += (s.empty() ? "" : "x") + std::to_string(d.size);
  return s;
}

void validate(const Network& network, const std::string& where) {
  if (network.dims.empty()) throw InputError(where, "network has no dimensions (field 'dims')");
  if (network.dims.size() > 16) throw InputError(where, "more than 16 dimensions are not supported");
  long double npus = 1;
  for (size_t i = 0; i < network.dims.size(); ++i) {
    const auto& d = network.dims[i];
    const std::string at = fmt::format("{}: dims[{}]", where, i);
    if (d.size < 2) throw InputError(at, fmt::format("field 'size' must be >= 2, got {}", d.size));
    if (!sane_link_gbps(d.link_bandwidth_gbps))
      throw InputError(at, fmt::format("field 'link_bandwidth_gbps' must be in {:g}..{:g}, got {}", kMinLinkGbps,
                                       kMaxLinkGbps, d.link_bandwidth_gbps));
    if (d.links_per_npu < 1)
      throw InputError(at, fmt::format("field 'links_per_npu' must be >= 1, got {}", d.links_per_npu));
    if (!sane_latency_ns(d.latency_ns))
      throw InputError(at, fmt::format("field 'latency_ns' must be in 0..{:g}, got {}", kMaxLatencyNs, d.latency_ns));
    const bool power_of_two = (d.size & (d.size - 1)) == 0;
    if (d.algorithm == Algorithm::kHalvingDoubling && !power_of_two)
      throw InputError(
          at, fmt::format("halving-doubling needs a power-of-two size; got {} (choose ring or direct)", d.size));
    if (d.kind == DimKind::kSwitch && d.algorithm == Algorithm::kTable1 && !power_of_two)
      throw InputError(at, fmt::format("field 'size': a switch dimension runs halving-doubling, which needs a "
                                       "power-of-two size; got {} (or give the dimension 'algorithm: ring')",
                                       d.size));
    if (!(d.reduce_memory_GBps >= 0))
      throw InputError(at, fmt::format("the local memory bandwidth must be >= 0, got {}", d.reduce_memory_GBps));
    npus *= d.size;
  }
  if (npus > 1e15L) throw InputError(where, "network has more than 10^15 NPUs");
}

}  // namespace chorus::net
