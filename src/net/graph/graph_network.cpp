#include "net/graph/graph_network.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "core/error.h"
#include "core/units.h"

namespace chorus::net {

int GraphNetwork::add_link(int from, int to, double gbps, double latency_ns) {
  links.push_back(GraphLink{from, to, gbps, latency_ns});
  return static_cast<int>(links.size()) - 1;
}

int GraphNetwork::out_degree(int node) const {
  int n = 0;
  for (const auto& l : links) n += l.from == node ? 1 : 0;
  return n;
}

int GraphNetwork::in_degree(int node) const {
  int n = 0;
  for (const auto& l : links) n += l.to == node ? 1 : 0;
  return n;
}

GraphNetwork merge_parallel_links(const GraphNetwork& net) {
  GraphNetwork merged;
  merged.name = net.name;
  merged.servers = net.servers;
  merged.switches = net.switches;
  merged.rings = net.rings;
  std::map<std::tuple<int, int, double>, int> bundle;  // (from, to, latency) -> merged link
  for (const auto& l : net.links) {
    const auto [it, fresh] = bundle.try_emplace({l.from, l.to, l.latency_ns}, static_cast<int>(merged.links.size()));
    if (fresh)
      merged.links.push_back(l);
    else
      merged.links[static_cast<std::size_t>(it->second)].gbps += l.gbps;
  }
  return merged;
}

void validate(const GraphNetwork& net, const std::string& where) {
  if (net.servers < 1) throw InputError(where, fmt::format("servers must be >= 1, got {}", net.servers));
  if (net.switches < 0) throw InputError(where, fmt::format("switches must be >= 0, got {}", net.switches));
  for (std::size_t i = 0; i < net.links.size(); ++i) {
    const auto& l = net.links[i];
    const auto field = fmt::format("links[{}]", i);
    if (l.from < 0 || l.from >= net.nodes())
      throw InputError(where, fmt::format("{}: endpoint 'from' {} out of range 0..{}", field, l.from, net.nodes() - 1));
    if (l.to < 0 || l.to >= net.nodes())
      throw InputError(where, fmt::format("{}: endpoint 'to' {} out of range 0..{}", field, l.to, net.nodes() - 1));
    if (l.from == l.to) throw InputError(where, fmt::format("{}: self loop at node {}", field, l.from));
    if (!sane_link_gbps(l.gbps))
      throw InputError(
          where, fmt::format("{}: gbps must be in {:g}..{:g}, got {}", field, kMinLinkGbps, kMaxLinkGbps, l.gbps));
    if (!sane_latency_ns(l.latency_ns))
      throw InputError(where,
                       fmt::format("{}: latency must be in 0..{:g} ns, got {} ns", field, kMaxLatencyNs, l.latency_ns));
  }
  for (std::size_t i = 0; i < net.rings.size(); ++i) {
    const auto& g = net.rings[i];
    const auto field = fmt::format("rings[{}]", i);
    if (g.servers.size() < 2) throw InputError(where, fmt::format("{}: a group needs at least 2 servers", field));
    for (std::size_t k = 0; k < g.servers.size(); ++k) {
      if (g.servers[k] < 0 || g.servers[k] >= net.servers)
        throw InputError(where, fmt::format("{}: server {} out of range 0..{}", field, g.servers[k], net.servers - 1));
      if (k > 0 && g.servers[k] <= g.servers[k - 1])
        throw InputError(where, fmt::format("{}: servers must be ascending and distinct", field));
    }
    for (std::size_t r = 0; r < g.orders.size(); ++r) {
      auto sorted = g.orders[r];
      std::sort(sorted.begin(), sorted.end());
      if (sorted != g.servers)
        throw InputError(where, fmt::format("{}.orders[{}]: not a permutation of the group's servers", field, r));
    }
  }
}

}  // namespace chorus::net
