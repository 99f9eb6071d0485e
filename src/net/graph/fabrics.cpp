#include "net/graph/fabrics.h"

#include <algorithm>
#include <deque>

#include <fmt/format.h>

#include "core/error.h"
#include "core/rng.h"

namespace chorus::net {
namespace {

void check_servers(int servers, const char* what) {
  if (servers < 1) throw InputError(what, fmt::format("servers must be >= 1, got {}", servers));
}
void check_degree(int degree, const char* what) {
  if (degree < 1) throw InputError(what, fmt::format("degree must be >= 1, got {}", degree));
}

std::vector<char> reach(const GraphNetwork& net, bool forward) {
  std::vector<std::vector<int>> adj(static_cast<std::size_t>(net.nodes()));
  for (const auto& l : net.links) {
    if (forward)
      adj[static_cast<std::size_t>(l.from)].push_back(l.to);
    else
      adj[static_cast<std::size_t>(l.to)].push_back(l.from);
  }
  std::vector<char> seen(static_cast<std::size_t>(net.nodes()), 0);
  std::deque<int> q{0};
  seen[0] = 1;
  while (!q.empty()) {
    const int u = q.front();
    q.pop_front();
    for (int v : adj[static_cast<std::size_t>(u)])
      if (!seen[static_cast<std::size_t>(v)]) {
        seen[static_cast<std::size_t>(v)] = 1;
        q.push_back(v);
      }
  }
  return seen;
}

}  // namespace

bool strongly_connected(const GraphNetwork& net) {
  if (net.nodes() <= 1) return true;
  for (bool forward : {true, false})
    for (char c : reach(net, forward))
      if (!c) return false;
  return true;
}

GraphNetwork fat_tree(int servers, double nic_gbps, double latency_ns) {
  check_servers(servers, "fat_tree");
  GraphNetwork net;
  net.name = fmt::format("fat-tree-{}g", nic_gbps);
  net.servers = servers;
  net.switches = 1;
  for (int s = 0; s < servers; ++s) {
    net.add_link(s, servers, nic_gbps, latency_ns);
    net.add_link(servers, s, nic_gbps, latency_ns);
  }
  validate(net, "fat_tree");
  return net;
}

GraphNetwork ideal_fat_tree(int servers, int degree, double link_gbps, double latency_ns) {
  check_degree(degree, "ideal_fat_tree");
  auto net = fat_tree(servers, degree * link_gbps, latency_ns);
  net.name = "ideal-fat-tree";
  return net;
}

GraphNetwork oversubscribed_fat_tree(int servers, int servers_per_tor, double nic_gbps, double latency_ns) {
  check_servers(servers, "oversubscribed_fat_tree");
  if (servers_per_tor < 1) throw InputError("oversubscribed_fat_tree", "servers_per_tor must be >= 1");
  GraphNetwork net;
  net.name = "oversub-fat-tree";
  net.servers = servers;
  const int tors = (servers + servers_per_tor - 1) / servers_per_tor;
  net.switches = tors + 1;
  const int core = servers + tors;
  for (int s = 0; s < servers; ++s) {
    const int tor = servers + s / servers_per_tor;
    net.add_link(s, tor, nic_gbps, latency_ns);
    net.add_link(tor, s, nic_gbps, latency_ns);
  }
  for (int t = 0; t < tors; ++t) {
    const int under = std::min(servers_per_tor, servers - t * servers_per_tor);
    const double up = under * nic_gbps / 2.0;
    net.add_link(servers + t, core, up, latency_ns);
    net.add_link(core, servers + t, up, latency_ns);
  }
  validate(net, "oversubscribed_fat_tree");
  return net;
}

GraphNetwork expander(int servers, int degree, double link_gbps, std::uint64_t seed, double latency_ns) {
  check_degree(degree, "expander");
  if (servers < 2) throw InputError("expander", fmt::format("servers must be >= 2, got {}", servers));
  for (std::uint64_t attempt = 0; attempt < 1000; ++attempt) {
    const std::uint64_t s = seed + attempt;
    Rng rng(s);
    GraphNetwork net;
    net.name = fmt::format("expander-d{}-seed{}", degree, s);
    net.servers = servers;
    std::vector<int> perm(static_cast<std::size_t>(servers));
    for (int k = 0; k < degree; ++k) {
      // A uniformly random derangement by rejection (Fisher-Yates until no fixed point).
      for (;;) {
        for (int i = 0; i < servers; ++i) perm[static_cast<std::size_t>(i)] = i;
        for (int i = servers - 1; i > 0; --i)
          std::swap(perm[static_cast<std::size_t>(i)], perm[static_cast<std::size_t>(rng.uniform_int(0, i))]);
        bool fixed = false;
        for (int i = 0; i < servers && !fixed; ++i) fixed = perm[static_cast<std::size_t>(i)] == i;
        if (!fixed) break;
      }
      for (int i = 0; i < servers; ++i) net.add_link(i, perm[static_cast<std::size_t>(i)], link_gbps, latency_ns);
    }
    if (strongly_connected(net)) {
      validate(net, "expander");
      return net;
    }
  }
  throw InputError("expander", fmt::format("no strongly connected graph for seeds {}..{}", seed, seed + 999));
}

GraphNetwork sipml_ring(int servers, int degree, double link_gbps, double latency_ns) {
  check_degree(degree, "sipml_ring");
  if (servers < 2) throw InputError("sipml_ring", fmt::format("servers must be >= 2, got {}", servers));
  GraphNetwork net;
  net.name = "sipml-ring";
  net.servers = servers;
  const int cw = (degree + 1) / 2;
  const int ccw = degree / 2;
  for (int s = 0; s < servers; ++s) {
    for (int k = 0; k < cw; ++k) net.add_link(s, (s + 1) % servers, link_gbps, latency_ns);
    for (int k = 0; k < ccw; ++k) net.add_link(s, (s + servers - 1) % servers, link_gbps, latency_ns);
  }
  validate(net, "sipml_ring");
  return net;
}

GraphNetwork full_mesh(int servers, double link_gbps, double latency_ns) {
  GraphNetwork g;
  g.name = fmt::format("mesh-n{}", servers);
  g.servers = servers;
  for (int u = 0; u < servers; ++u)
    for (int v = 0; v < servers; ++v)
      if (u != v) g.add_link(u, v, link_gbps, latency_ns);
  return g;
}

GraphNetwork direct_connect(int servers, int degree, double link_gbps, const std::vector<std::pair<int, int>>& edges,
                            double latency_ns) {
  check_servers(servers, "direct_connect");
  check_degree(degree, "direct_connect");
  GraphNetwork net;
  net.name = "direct-connect";
  net.servers = servers;
  std::vector<int> out(static_cast<std::size_t>(servers), 0), in(static_cast<std::size_t>(servers), 0);
  for (std::size_t i = 0; i < edges.size(); ++i) {
    const auto [u, v] = edges[i];
    const auto where = fmt::format("direct_connect: edges[{}]", i);
    if (u < 0 || u >= servers || v < 0 || v >= servers)
      throw InputError(where, fmt::format("({}, {}) has an endpoint outside servers 0..{}", u, v, servers - 1));
    if (++out[static_cast<std::size_t>(u)] > degree)
      throw InputError(where, fmt::format("server {} has more than degree {} out-links", u, degree));
    if (++in[static_cast<std::size_t>(v)] > degree)
      throw InputError(where, fmt::format("server {} has more than degree {} in-links", v, degree));
    net.add_link(u, v, link_gbps, latency_ns);
  }
  validate(net, "direct_connect");
  return net;
}

}  // namespace chorus::net
