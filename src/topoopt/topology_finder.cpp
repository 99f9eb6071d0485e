#include "topoopt/topology_finder.h"

#include "net/graph/fabrics.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <map>
#include <numeric>
#include <queue>
#include <tuple>
#include <stdexcept>

#include <fmt/format.h>

#include "core/error.h"
#include "topoopt/coin_change_mod.h"
#include "topoopt/max_weight_matching.h"
#include "topoopt/top_permutations.h"
#include "topoopt/totient_perms.h"

namespace chorus::topoopt {
namespace {

using Edges = std::vector<std::pair<int, int>>;

// T_MP per directed pair with bytes > 0, sorted by pair; a pair's transfers summed in file order.
// A sorted array, not a tree: an all-to-all over 1,024 servers gives a million pairs.
using PairDemand = std::vector<std::pair<std::pair<int, int>, double>>;

PairDemand pair_demand(const std::vector<MpTransfer>& mp) {
  PairDemand all;
  all.reserve(mp.size());
  for (const auto& m : mp)
    if (m.bytes > 0) all.push_back({{m.src, m.dst}, m.bytes});
  const auto by_pair = [](const auto& a, const auto& b) { return a.first < b.first; };
  if (!std::is_sorted(all.begin(), all.end(), by_pair)) std::stable_sort(all.begin(), all.end(), by_pair);
  PairDemand out;
  out.reserve(all.size());
  for (const auto& d : all)
    if (!out.empty() && out.back().first == d.first)
      out.back().second += d.second;
    else
      out.push_back(d);
  return out;
}

// The index of `pair` in `demand`, or demand.size().
std::size_t find_pair(const PairDemand& demand, std::pair<int, int> pair) {
  const auto it = std::lower_bound(demand.begin(), demand.end(), pair,
                                   [](const auto& d, const std::pair<int, int>& p) { return d.first < p; });
  return it != demand.end() && it->first == pair ? static_cast<std::size_t>(it - demand.begin()) : demand.size();
}

std::vector<std::vector<int>> adjacency(int servers, const Edges& edges) {
  std::vector<std::vector<int>> out(static_cast<std::size_t>(servers));
  for (const auto& [u, v] : edges) out[static_cast<std::size_t>(u)].push_back(v);
  for (auto& list : out) {
    std::sort(list.begin(), list.end());
    list.erase(std::unique(list.begin(), list.end()), list.end());
  }
  return out;
}

// Breadth-first search from src; parent[v] = the server before v on a fewest-hop path (-1: none).
std::vector<int> bfs_parents(const std::vector<std::vector<int>>& out, int src) {
  std::vector<int> parent(out.size(), -1);
  std::vector<char> seen(out.size(), 0);
  std::deque<int> queue = {src};
  seen[static_cast<std::size_t>(src)] = 1;
  while (!queue.empty()) {
    const int u = queue.front();
    queue.pop_front();
    for (int v : out[static_cast<std::size_t>(u)])
      if (!seen[static_cast<std::size_t>(v)]) {
        seen[static_cast<std::size_t>(v)] = 1;
        parent[static_cast<std::size_t>(v)] = u;
        queue.push_back(v);
      }
  }
  return parent;
}

std::vector<int> path_from(const std::vector<int>& parent, int src, int dst) {
  std::vector<int> path = {dst};
  for (int v = dst; v != src;) {
    v = parent[static_cast<std::size_t>(v)];
    if (v < 0) return {};
    path.push_back(v);
  }
  std::reverse(path.begin(), path.end());
  return path;
}

// Step 2's degree per group. A group's load is what each of its members sends in a ring
// all-reduce, 2 (n - 1) / n x b: its all-reduce takes load / (d_k x B). Every server shares its
// d_groups interfaces among the groups it belongs to, so a group's share is its load over the
// heaviest total load on one of its members (itself included); when every group holds every
// server (one job-wide group, or nested groups) this is the paper's share of the AllReduce
// bytes. A group gets the whole part of d_groups x share, capped by what its members have left
// (in decreasing order of load, ties: file order); the degree left over then goes one ring at a
// time to the group with the largest load per ring, load / (d_k + 1), whose members all have an
// interface left (the largest-divisor rule). Groups on disjoint servers do not compete for degree
// (docs/topoopt.md says why and where this differs from the paper's rounding up).
std::vector<int> group_degrees(int servers, const Traffic& traffic, const std::vector<std::size_t>& order,
                               int d_groups) {
  const auto& groups = traffic.allreduce_groups;
  auto load = [&](std::size_t g) {
    const double n = static_cast<double>(groups[g].servers.size());
    return 2.0 * (n - 1.0) / n * groups[g].bytes;
  };
  std::vector<double> server_load(static_cast<std::size_t>(servers), 0.0);
  for (std::size_t g = 0; g < groups.size(); ++g)
    for (int s : groups[g].servers) server_load[static_cast<std::size_t>(s)] += load(g);
  std::vector<int> left(static_cast<std::size_t>(servers), d_groups);
  std::vector<int> dk(groups.size(), 0);
  for (auto g : order) {
    if (load(g) <= 0) continue;
    int room = d_groups;
    double competing = 0;
    for (int s : groups[g].servers) {
      room = std::min(room, left[static_cast<std::size_t>(s)]);
      competing = std::max(competing, server_load[static_cast<std::size_t>(s)]);
    }
    dk[g] = std::min(room, static_cast<int>(std::floor(d_groups * load(g) / competing + 1e-12)));
    for (int s : groups[g].servers) left[static_cast<std::size_t>(s)] -= dk[g];
  }
  std::priority_queue<std::tuple<double, std::size_t, std::size_t>> more;  // load per ring, -rank, group
  for (std::size_t rank = 0; rank < order.size(); ++rank) {
    const auto g = order[rank];
    if (load(g) > 0) more.emplace(load(g) / (dk[g] + 1), order.size() - rank, g);
  }
  while (!more.empty()) {
    const auto [per_ring, rank, g] = more.top();
    more.pop();
    bool room = true;
    for (int s : groups[g].servers) room = room && left[static_cast<std::size_t>(s)] > 0;
    if (!room) continue;  // members only lose interfaces: this group can never gain one
    ++dk[g];
    for (int s : groups[g].servers) --left[static_cast<std::size_t>(s)];
    more.emplace(load(g) / (dk[g] + 1), rank, g);
  }
  return dk;
}

// Do the rings of the groups given degree connect every server? Rings connect their members, so
// yes iff those groups cover all servers and overlap into one component.
bool groups_connect_all(int servers, const Traffic& traffic, const std::vector<int>& dk) {
  std::vector<int> root(static_cast<std::size_t>(servers));
  std::iota(root.begin(), root.end(), 0);
  auto find = [&](int x) {
    while (root[static_cast<std::size_t>(x)] != x)
      x = root[static_cast<std::size_t>(x)] = root[static_cast<std::size_t>(root[static_cast<std::size_t>(x)])];
    return x;
  };
  for (std::size_t g = 0; g < dk.size(); ++g)
    if (dk[g] > 0)
      for (int s : traffic.allreduce_groups[g].servers)
        root[static_cast<std::size_t>(find(s))] = find(traffic.allreduce_groups[g].servers[0]);
  for (int s = 1; s < servers; ++s)
    if (find(s) != find(0)) return false;
  return true;
}

}  // namespace

net::GraphNetwork topology_fabric(const Topology& topology, double gbps) {
  auto fabric = net::direct_connect(topology.servers, topology.degree, gbps, topology.edges);
  for (const auto& g : topology.allreduce) {
    if (g.group < 0) continue;
    net::GroupRings rings;
    rings.servers = g.servers;
    std::sort(rings.servers.begin(), rings.servers.end());
    for (int p : g.generators) rings.orders.push_back(ring_order(g.servers, p));
    fabric.rings.push_back(std::move(rings));
  }
  return fabric;
}

std::vector<int> shortest_path(int servers, const Edges& edges, int src, int dst) {
  return path_from(bfs_parents(adjacency(servers, edges), src), src, dst);
}

Topology topology_finder(int servers, int degree, const Traffic& traffic, const FinderOptions& options) {
  if (servers < 2) throw InputError("servers", fmt::format("a fabric needs at least 2 servers, got {}", servers));
  if (degree < 1) throw InputError("degree", fmt::format("every server needs at least 1 interface, got {}", degree));
  if (traffic.servers != servers)
    throw InputError("servers",
                     fmt::format("the traffic is for {} servers, the fabric has {}", traffic.servers, servers));
  Topology t;
  t.servers = servers;
  t.degree = degree;

  const auto demand = pair_demand(traffic.mp);
  double ar_bytes = 0;
  for (const auto& g : traffic.allreduce_groups) ar_bytes += allreduce_wire_bytes(g);
  for (const auto& [pair, bytes] : demand) t.mp_bytes += bytes;

  // Step 1 (lines 2-3): at least one degree for AllReduce, the rest by share of the bytes.
  const double all = ar_bytes + t.mp_bytes;
  t.degree_allreduce = all > 0 ? std::max(1, static_cast<int>(std::ceil(degree * ar_bytes / all - 1e-12))) : degree;
  t.degree_mp = degree - t.degree_allreduce;

  // Step 2 (lines 4-12).
  std::vector<std::size_t> order(traffic.allreduce_groups.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const auto& ga = traffic.allreduce_groups[a];
    const auto& gb = traffic.allreduce_groups[b];
    const double na = static_cast<double>(ga.servers.size()), nb = static_cast<double>(gb.servers.size());
    return (na - 1) / na * ga.bytes > (nb - 1) / nb * gb.bytes;  // by load (group_degrees)
  });
  auto dk = group_degrees(servers, traffic, order, t.degree_allreduce);
  const bool ring_for_connectivity = !groups_connect_all(servers, traffic, dk);
  if (ring_for_connectivity) dk = group_degrees(servers, traffic, order, t.degree_allreduce - 1);

  std::vector<char> linked(demand.size(), 0);  // per demand entry: a ring links its pair
  auto unsatisfied = [&] {
    std::vector<MpTransfer> left;
    for (std::size_t i = 0; i < demand.size(); ++i)
      if (!linked[i]) left.push_back({demand[i].first.first, demand[i].first.second, demand[i].second});
    return left;
  };
  auto build_rings = [&](int group, const std::vector<int>& members, int d) {
    GroupRings r;
    r.group = group;
    r.servers = members;
    r.degree = d;
    const int k = static_cast<int>(members.size());
    auto choice = top_permutations(members, d, totient_generators(k, options.primes_only), unsatisfied());
    r.generators = choice.generators;
    r.mp_satisfied_bytes = choice.satisfied_bytes;
    for (int p : r.generators)
      for (const auto& e : ring_edges(members, p)) {
        t.edges.push_back(e);
        if (const auto i = find_pair(demand, e); i < demand.size()) linked[i] = 1;
      }
    const auto routes = coin_change_mod(k, r.generators);
    r.max_hops = *std::max_element(routes.hops.begin(), routes.hops.end());
    t.allreduce.push_back(std::move(r));
  };
  if (ring_for_connectivity) {
    std::vector<int> everyone(static_cast<std::size_t>(servers));
    std::iota(everyone.begin(), everyone.end(), 0);
    build_rings(-1, everyone, 1);
  }
  for (auto g : order)
    if (dk[g] > 0) build_rings(static_cast<int>(g), traffic.allreduce_groups[g].servers, dk[g]);

  // Step 3 (lines 13-18): d_MP rounds of maximum-weight matching; every link a pair has halves
  // its remaining demand (Appendix D's discount), the AllReduce rings' links included.
  auto remaining = t.degree_mp > 0 ? demand : PairDemand{};
  if (!remaining.empty())
    for (const auto& e : t.edges)
      if (const auto i = find_pair(remaining, e); i < remaining.size()) remaining[i].second /= 2;
  for (int round = 0; round < t.degree_mp; ++round) {
    std::map<std::pair<int, int>, double> undirected;
    for (const auto& [pair, bytes] : remaining)
      undirected[{std::min(pair.first, pair.second), std::max(pair.first, pair.second)}] += bytes;
    std::vector<WeightedPair> pairs;
    for (const auto& [pair, bytes] : undirected) pairs.push_back({pair.first, pair.second, std::llround(bytes)});
    auto matched = max_weight_matching(servers, pairs);
    if (matched.empty()) break;
    for (const auto& [u, v] : matched) {
      t.edges.emplace_back(u, v);
      t.edges.emplace_back(v, u);
      for (const auto& key : {std::pair{u, v}, std::pair{v, u}})
        if (const auto i = find_pair(remaining, key); i < remaining.size()) remaining[i].second /= 2;
    }
    t.matchings.push_back(std::move(matched));
  }
  std::sort(t.edges.begin(), t.edges.end());

  std::vector<int> out_degree(static_cast<std::size_t>(servers), 0), in_degree(static_cast<std::size_t>(servers), 0);
  for (const auto& [u, v] : t.edges) {
    if (++out_degree[static_cast<std::size_t>(u)] > degree || ++in_degree[static_cast<std::size_t>(v)] > degree)
      throw std::logic_error(fmt::format("topology_finder: server {} or {} exceeds degree {}", u, v, degree));
  }
  if (!net::strongly_connected(net::direct_connect(servers, degree, 1.0, t.edges)))
    throw std::logic_error("topology_finder: the topology is not connected");

  // Step 4 (line 20): MP routes on fewest-hop paths of the whole topology.
  if (!options.route_mp) return t;
  const auto out = adjacency(servers, t.edges);
  int bfs_source = -1;
  std::vector<int> parent;
  for (const auto& [pair, bytes] : demand) {
    if (pair.first != bfs_source) parent = bfs_parents(out, bfs_source = pair.first);
    MpRoute r{pair.first, pair.second, bytes, path_from(parent, pair.first, pair.second)};
    if (r.hops() == 1) t.mp_direct_bytes += bytes;
    t.mp_byte_hops += bytes * r.hops();
    t.mp_routes.push_back(std::move(r));
  }
  return t;
}

}  // namespace chorus::topoopt
