#include "net/graph/from_network.h"

#include <fmt/format.h>

#include "core/error.h"

namespace chorus::net {

GraphNetwork graph_of(const Network& network, const std::string& where) {
  validate(network, where);
  if (network.num_npus() > 65536)
    throw InputError(
        where, fmt::format("{} has {} NPUs; its graph is built for at most 65,536", network.name, network.num_npus()));
  GraphNetwork g;
  g.name = network.name;
  g.servers = static_cast<int>(network.num_npus());
  // Switch nodes are numbered after the servers: count them first.
  for (int k = 0; k < network.num_dims(); ++k)
    if (network.dims[static_cast<std::size_t>(k)].kind == DimKind::kSwitch)
      g.switches += g.servers / network.dims[static_cast<std::size_t>(k)].size;
  int next_switch = g.servers;
  for (int k = 0; k < network.num_dims(); ++k) {
    const auto& d = network.dims[static_cast<std::size_t>(k)];
    const double b = d.aggregate_bandwidth_gbps();
    for (const auto& group : npu_groups(network, {k})) {
      const int p = static_cast<int>(group.size());
      switch (d.kind) {
        case DimKind::kSwitch: {
          const int sw = next_switch++;
          for (int npu : group) {
            g.add_link(npu, sw, b, d.latency_ns / 2);
            g.add_link(sw, npu, b, d.latency_ns / 2);
          }
          break;
        }
        case DimKind::kRing: {
          if (p == 2) {
            g.add_link(group[0], group[1], b, d.latency_ns);
            g.add_link(group[1], group[0], b, d.latency_ns);
            break;
          }
          for (int i = 0; i < p; ++i) {
            const int a = group[static_cast<std::size_t>(i)], next = group[static_cast<std::size_t>((i + 1) % p)];
            g.add_link(a, next, b / 2, d.latency_ns);
            g.add_link(next, a, b / 2, d.latency_ns);
          }
          GroupRings rings;
          rings.servers = group;  // ascending (npu_groups)
          rings.orders = {group, {group.rbegin(), group.rend()}};
          g.rings.push_back(std::move(rings));
          break;
        }
        case DimKind::kFullyConnected:
          for (int a : group)
            for (int c : group)
              if (a != c) g.add_link(a, c, b / (p - 1), d.latency_ns);
          break;
      }
    }
  }
  validate(g, where);
  return g;
}

}  // namespace chorus::net
