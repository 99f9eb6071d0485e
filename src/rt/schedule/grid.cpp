#include "rt/schedule/grid.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.h"
#include "core/split.h"
#include "rt/runtime_instance.h"

namespace chorus::rt {

int RankGrid::size() const {
  int n = 1;
  for (int p : dims) n *= p;
  return n;
}

std::vector<int> parse_grid(const std::string& text, const std::string& field) {
  std::vector<int> dims;
  std::vector<std::string> parts(1);
  for (char c : text) {  // every part, empty ones too: "2x" and "2xx" are not grids
    if (c == 'x')
      parts.emplace_back();
    else
      parts.back() += c;
  }
  for (const auto& part : parts) {
    std::size_t used = 0;
    int p = 0;
    try {
      p = std::stoi(part, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != part.size() || part.empty() || p < 1 || p > 4096)
      throw InputError(field, fmt::format("'{}' is not a grid like 2x4: '{}' is not a size in 1..4096", text, part));
    dims.push_back(p);
  }
  if (dims.empty()) throw InputError(field, fmt::format("'{}' is not a grid like 2x4", text));
  return dims;
}

RankGrid make_rank_grid(const std::vector<int>& dims, const std::vector<std::string>& backends,
                        const std::string& prefix) {
  return make_rank_grid(default_runtime("grid"), dims, backends, prefix);
}

RankGrid make_rank_grid(Runtime& runtime, const std::vector<int>& dims, const std::vector<std::string>& backends,
                        const std::string& prefix) {
  RankGrid g;
  g.runtime = &runtime;
  g.dims = dims;
  const std::string first = runtime.backends().empty() ? std::string("auto") : runtime.backends().front();
  const int world = runtime.size(first);
  g.rank = runtime.rank(first);
  if (g.size() != world)
    throw InputError(
        "grid", fmt::format("the grid {} has {} ranks but the world has {}", fmt::join(dims, "x"), g.size(), world));
  if (backends.size() != 1 && backends.size() != dims.size())
    throw InputError("dim_backends", fmt::format("{} backends given for {} dimensions (give one, or one per dimension)",
                                                 backends.size(), dims.size()));
  int rest = g.rank;
  for (int p : dims) {
    g.coords.push_back(rest % p);
    rest /= p;
  }
  for (std::size_t d = 0; d < dims.size(); ++d) {
    // Color: the linear index of the other coordinates; key: this dimension's coordinate.
    int color = 0, stride = 1;
    for (std::size_t e = 0; e < dims.size(); ++e) {
      if (e == d) continue;
      color += g.coords[e] * stride;
      stride *= dims[e];
    }
    const std::string name = fmt::format("{}-d{}", prefix, d + 1);
    const std::string backend = backends.size() == 1 ? backends[0] : backends[d];
    runtime.split(name, backend, color, g.coords[d]);
    g.groups.push_back(name);
    g.comms.push_back(runtime.communicator(name));
    g.backends.push_back(runtime.resolve_backend(name, CollectiveKind::kBarrier, 0));
  }
  return g;
}

net::Network grid_network(const std::vector<int>& dims) {
  net::Network n;
  n.name = fmt::format("grid-{}", fmt::join(dims, "x"));
  for (int p : dims) {
    net::Dimension d;
    d.kind = net::DimKind::kSwitch;
    d.size = p;
    d.link_bandwidth_gbps = 8;
    d.latency_ns = 1000;
    n.dims.push_back(d);
  }
  return n;
}

}  // namespace chorus::rt
