// TopologyFinder (TopoOpt Algorithm 1) and its parts against independent references: matchings
// against brute-force enumeration, TopPermutations and the degree split worked out by hand, the
// Sec. 2.2 DLRM example against every single ring, and invariants (degree, connectivity,
// shortest routes) on random inputs checked with a breadth-first search written here.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <map>
#include <numeric>
#include <queue>
#include <random>
#include <set>

#include "core/error.h"
#include "topoopt/max_weight_matching.h"
#include "topoopt/top_permutations.h"
#include "topoopt/topology_finder.h"
#include "topoopt/traffic.h"

namespace chorus::topoopt {
namespace {

using Pair = std::pair<int, int>;

// The heaviest matching's weight by trying every matching (n <= 9).
std::int64_t brute_force_matching(int n, const std::map<Pair, std::int64_t>& w) {
  std::function<std::int64_t(std::vector<bool>&, int)> best = [&](std::vector<bool>& used, int from) -> std::int64_t {
    int u = from;
    while (u < n && used[static_cast<std::size_t>(u)]) ++u;
    if (u >= n) return 0;
    used[static_cast<std::size_t>(u)] = true;
    std::int64_t b = best(used, u + 1);  // u stays unmatched
    for (int v = u + 1; v < n; ++v) {
      auto it = w.find({u, v});
      if (used[static_cast<std::size_t>(v)] || it == w.end()) continue;
      used[static_cast<std::size_t>(v)] = true;
      b = std::max(b, it->second + best(used, u + 1));
      used[static_cast<std::size_t>(v)] = false;
    }
    used[static_cast<std::size_t>(u)] = false;
    return b;
  };
  std::vector<bool> used(static_cast<std::size_t>(n), false);
  return best(used, 0);
}

TEST(MaxWeightMatching, EqualsBruteForceOnRandomGraphs) {
  std::mt19937 rng(20261123);
  for (int trial = 0; trial < 300; ++trial) {
    const int n = 2 + static_cast<int>(rng() % 8);  // 2..9 vertices
    std::map<Pair, std::int64_t> w;
    std::vector<WeightedPair> pairs;
    for (int u = 0; u < n; ++u)
      for (int v = u + 1; v < n; ++v)
        if (rng() % 3 != 0) {
          const auto weight = static_cast<std::int64_t>(1 + rng() % 50);
          w[{u, v}] = weight;
          pairs.push_back({rng() % 2 ? u : v, rng() % 2 ? v : u, weight});
          if (pairs.back().u == pairs.back().v) pairs.back() = {u, v, weight};
        }
    const auto m = max_weight_matching(n, pairs);
    std::set<int> seen;
    std::int64_t total = 0;
    for (const auto& [u, v] : m) {
      ASSERT_LT(u, v);
      ASSERT_TRUE(w.count({u, v})) << "matched a pair without an edge";
      ASSERT_TRUE(seen.insert(u).second && seen.insert(v).second) << "a vertex matched twice";
      total += w.at({u, v});
    }
    EXPECT_EQ(total, brute_force_matching(n, w)) << "trial " << trial;
  }
}

TEST(MaxWeightMatching, PrefersWeightToCardinality) {
  // Path 0-1-2-3 with weights 1, 5, 1: the single middle edge (5) beats the two ends (2).
  EXPECT_EQ(max_weight_matching(4, {{0, 1, 1}, {1, 2, 5}, {2, 3, 1}}), (std::vector<Pair>{{1, 2}}));
  EXPECT_TRUE(max_weight_matching(3, {{0, 1, 0}}).empty());  // weight 0 is never worth a link
}

TEST(TopPermutations, PicksTheProposalServingMostDemand) {
  // 12 servers, candidates {1, 5, 7, 11}, d_k = 2: start k0 proposes candidates k0 and k0 + 2.
  // 0 -> 5 (100 B) sits at offset 5, 3 -> 2 (50 B) at offset 11; 20 -> 1 is not in the group.
  std::vector<int> members(12);
  std::iota(members.begin(), members.end(), 0);
  const auto c = top_permutations(members, 2, {1, 5, 7, 11}, {{0, 5, 100}, {3, 2, 50}, {20, 1, 999}});
  // k0 = 0: {1, 7} -> 0; k0 = 1: {5, 11} -> 150; k0 = 2: {7, 1} -> 0; k0 = 3: {11, 5} -> 150 (a tie,
  // the earlier start wins).
  EXPECT_EQ(c.generators, (std::vector<int>{5, 11}));
  EXPECT_DOUBLE_EQ(c.satisfied_bytes, 150);
  // Positions, not server ids, define the offset: members {10, 20, 30}, 30 -> 10 is offset 1.
  const auto d = top_permutations({10, 20, 30}, 1, {1, 2}, {{30, 10, 7}});
  EXPECT_EQ(d.generators, (std::vector<int>{1}));
  EXPECT_DOUBLE_EQ(d.satisfied_bytes, 7);
  // More degree than candidates: rings repeat (parallel links), counted once.
  const auto e = top_permutations({0, 1}, 3, {1}, {{0, 1, 4}});
  EXPECT_EQ(e.generators, (std::vector<int>{1, 1, 1}));
  EXPECT_DOUBLE_EQ(e.satisfied_bytes, 4);
}

// Sum over offsets t = 1..n-1 of the fewest hops to t with steps from `coins`, by a plain BFS.
int total_hops(int n, const std::set<int>& coins) {
  std::vector<int> dist(static_cast<std::size_t>(n), -1);
  std::queue<int> q;
  dist[0] = 0;
  q.push(0);
  while (!q.empty()) {
    const int u = q.front();
    q.pop();
    for (int c : coins)
      if (dist[static_cast<std::size_t>((u + c) % n)] < 0) {
        dist[static_cast<std::size_t>((u + c) % n)] = dist[static_cast<std::size_t>(u)] + 1;
        q.push((u + c) % n);
      }
  }
  return std::accumulate(dist.begin(), dist.end(), 0);
}

TEST(TopPermutations, TiesGoToTheRingsWithTheFewestHops) {
  // No MP demand: every proposal satisfies 0 bytes, so the group's own hop count decides. The
  // chosen rings' total hops must be the least over all proposals (each checked by BFS here).
  for (int n : {16, 30, 128}) {
    std::vector<int> members(static_cast<std::size_t>(n)), candidates;
    std::iota(members.begin(), members.end(), 0);
    for (int p = 1; p < n; ++p)
      if (std::gcd(p, n) == 1) candidates.push_back(p);
    for (int dk : {2, 3, 8}) {
      const auto c = top_permutations(members, dk, candidates, {});
      const int chosen = total_hops(n, std::set<int>(c.generators.begin(), c.generators.end()));
      const auto m = candidates.size();
      for (std::size_t k0 = 0; k0 < m; ++k0) {
        std::set<int> proposal;
        for (int j = 0; j < dk; ++j)
          proposal.insert(candidates[(k0 + static_cast<std::size_t>(j) * m / static_cast<std::size_t>(dk)) % m]);
        EXPECT_LE(chosen, total_hops(n, proposal)) << "n " << n << " d_k " << dk << " start " << k0;
      }
    }
  }
  // 128 servers, 8 rings: the paper's first proposal, 1, 17, ..., 113 (all 1 mod 16), needs many
  // hops; the tie-break must do better than it.
  std::vector<int> members(128), candidates;
  std::iota(members.begin(), members.end(), 0);
  for (int p = 1; p < 128; p += 2) candidates.push_back(p);
  const auto c = top_permutations(members, 8, candidates, {});
  EXPECT_LT(total_hops(128, std::set<int>(c.generators.begin(), c.generators.end())),
            total_hops(128, {1, 17, 33, 49, 65, 81, 97, 113}));
}

// Fewest hops from src over directed edges, by breadth-first search.
std::vector<int> hop_counts(int n, const std::vector<Pair>& edges, int src) {
  std::vector<std::vector<int>> out(static_cast<std::size_t>(n));
  for (const auto& [u, v] : edges) out[static_cast<std::size_t>(u)].push_back(v);
  std::vector<int> dist(static_cast<std::size_t>(n), -1);
  std::queue<int> q;
  dist[static_cast<std::size_t>(src)] = 0;
  q.push(src);
  while (!q.empty()) {
    const int u = q.front();
    q.pop();
    for (int v : out[static_cast<std::size_t>(u)])
      if (dist[static_cast<std::size_t>(v)] < 0) {
        dist[static_cast<std::size_t>(v)] = dist[static_cast<std::size_t>(u)] + 1;
        q.push(v);
      }
  }
  return dist;
}

void expect_valid(const Topology& t, const Traffic& traffic, const std::string& what) {
  std::vector<int> out(static_cast<std::size_t>(t.servers), 0), in(static_cast<std::size_t>(t.servers), 0);
  std::set<Pair> links;
  for (const auto& [u, v] : t.edges) {
    ASSERT_NE(u, v) << what;
    ++out[static_cast<std::size_t>(u)];
    ++in[static_cast<std::size_t>(v)];
    links.insert({u, v});
  }
  for (int s = 0; s < t.servers; ++s) {
    EXPECT_LE(out[static_cast<std::size_t>(s)], t.degree) << what << ": server " << s << " out-degree";
    EXPECT_LE(in[static_cast<std::size_t>(s)], t.degree) << what << ": server " << s << " in-degree";
    const auto d = hop_counts(t.servers, t.edges, s);
    EXPECT_EQ(std::count(d.begin(), d.end(), -1), 0) << what << ": server " << s << " does not reach every server";
  }
  std::map<Pair, double> demand;
  for (const auto& m : traffic.mp)
    if (m.bytes > 0) demand[{m.src, m.dst}] += m.bytes;
  ASSERT_EQ(t.mp_routes.size(), demand.size()) << what;
  for (const auto& r : t.mp_routes) {
    EXPECT_DOUBLE_EQ(r.bytes, demand.at({r.src, r.dst})) << what;
    ASSERT_GE(r.path.size(), 2u) << what;
    EXPECT_EQ(r.path.front(), r.src);
    EXPECT_EQ(r.path.back(), r.dst);
    for (std::size_t h = 0; h + 1 < r.path.size(); ++h)
      EXPECT_TRUE(links.count({r.path[h], r.path[h + 1]})) << what << ": route uses a missing link";
    EXPECT_EQ(r.hops(), hop_counts(t.servers, t.edges, r.src)[static_cast<std::size_t>(r.dst)])
        << what << ": not a shortest route";
  }
}

TEST(TopologyFinder, DlrmExampleOfSection22) {
  const auto traffic = dlrm_example();
  const auto t = topology_finder(16, 6, traffic);
  expect_valid(t, traffic, "dlrm-example");
  // Step 1 by hand: AllReduce 16 servers x 2 x 15/16 x 4 GB = 120 GB on the wire; MP 4 tables x 15
  // servers x 2 directions x 32 MB = 3.84 GB; d_AllReduce = max(1, ceil(6 x 120 / 123.84)) = 6.
  EXPECT_EQ(t.degree_allreduce, 6);
  EXPECT_EQ(t.degree_mp, 0);
  EXPECT_EQ(t.edges.size(), 16u * 6u);
  EXPECT_DOUBLE_EQ(t.mp_bytes, 3.84e9);
  // The model-parallel transfers take no more hops than on any single ring permutation. On the
  // ring of p (server i -> i + p mod 16) a transfer u -> v takes (v - u) * p^-1 mod 16 hops.
  int best_single_total = 1 << 30, best_single_max = 1 << 30;
  for (int p = 1; p < 16; p += 2) {  // the generators of Z_16: the odd numbers
    int inverse = 1;
    while (inverse * p % 16 != 1) ++inverse;
    int total = 0, worst = 0;
    for (const auto& r : t.mp_routes) {
      const int h = ((r.dst - r.src) % 16 + 16) % 16 * inverse % 16;
      total += h;
      worst = std::max(worst, h);
    }
    best_single_total = std::min(best_single_total, total);
    best_single_max = std::min(best_single_max, worst);
  }
  int total = 0, worst = 0;
  for (const auto& r : t.mp_routes) {
    total += r.hops();
    worst = std::max(worst, r.hops());
  }
  EXPECT_LE(total, best_single_total);
  EXPECT_LE(worst, best_single_max);
  EXPECT_LT(total, best_single_total) << "six rings should beat the best single one";
}

TEST(TopologyFinder, MatchingRoundsHalveTheDemandOfLinkedPairs) {
  // 8 servers, d = 3. One AllReduce group of all 8 (100 B: 2 x 7 x 100 = 1400 B on the wire). MP:
  // i <-> i+4 1000 B each way (i < 4), and 1200 B each way around the square 0-1-2-3-0.
  Traffic traffic;
  traffic.servers = 8;
  traffic.allreduce_groups.push_back({{0, 1, 2, 3, 4, 5, 6, 7}, 100});
  for (int i = 0; i < 4; ++i) {
    traffic.mp.push_back({i, i + 4, 1000});
    traffic.mp.push_back({i + 4, i, 1000});
    traffic.mp.push_back({i, (i + 1) % 4, 1200});
    traffic.mp.push_back({(i + 1) % 4, i, 1200});
  }
  const auto t = topology_finder(8, 3, traffic);
  expect_valid(t, traffic, "matching");
  // d_AllReduce = max(1, ceil(3 x 1400 / 19000)) = 1, d_MP = 2.
  EXPECT_EQ(t.degree_allreduce, 1);
  EXPECT_EQ(t.degree_mp, 2);
  // The one ring: offsets 1 (0->1, 1->2, 2->3) and 7 (the reverse) carry 3600 B each, 3 and 5
  // 1200 B; candidates {1, 3, 5, 7}, the tie between 1 and 7 goes to the first: p = 1.
  ASSERT_EQ(t.allreduce.size(), 1u);
  EXPECT_EQ(t.allreduce[0].generators, (std::vector<int>{1}));
  // Its links 0->1, 1->2, 2->3 halve those demands to 600. Pair weights: {i, i+4} 2000,
  // {0,1} {1,2} {2,3} 1800, {0,3} 2400. Round 1: the four {i, i+4} (8000) beat anything else.
  ASSERT_EQ(t.matchings.size(), 2u);
  EXPECT_EQ(t.matchings[0], (std::vector<Pair>{{0, 4}, {1, 5}, {2, 6}, {3, 7}}));
  // Round 2, {i, i+4} halved to 1000: {0,3} + {1,5} + {2,6} = 4400 beats {0,3} + {1,2} = 4200,
  // the four {i, i+4} = 4000 and {0,1} + {2,3} = 3600.
  EXPECT_EQ(t.matchings[1], (std::vector<Pair>{{0, 3}, {1, 5}, {2, 6}}));
  EXPECT_EQ(t.edges.size(), 8u + 8u + 6u);
}

TEST(TopologyFinder, LeftoverDegreeGoesToTheGroupWithTheMostBytesPerRing) {
  // BERT-like: tensor-parallel pairs {0,1} {2,3} {4,5} {6,7} (1 MB each: every member sends
  // 2 x 1/2 x 1 = 1 MB in a ring all-reduce) and data-parallel groups C = {0,2,4,6},
  // D = {1,3,5,7} (1 MB: 2 x 3/4 x 1 = 1.5 MB); d = 4, no MP, so d_AllReduce = 4. Every server
  // is in one pair and one of C, D: 2.5 MB. Whole parts, larger load first: C floor(4 x 1.5 /
  // 2.5 = 2.4) = 2, D 2, each pair floor(4 x 1 / 2.5 = 1.6) = 1: every server has used 3 of 4.
  // Leftover, largest load per extra ring first: C 1.5 / 3 = 0.5 MB, D 0.5, pairs 1 / 2 = 0.5:
  // ties go to the earlier group in load order, C then D, which take their members' last
  // interface; the pairs find no room. Every interface is used.
  Traffic traffic;
  traffic.servers = 8;
  for (int p = 0; p < 4; ++p) traffic.allreduce_groups.push_back({{2 * p, 2 * p + 1}, 1e6});
  traffic.allreduce_groups.push_back({{0, 2, 4, 6}, 1e6});
  traffic.allreduce_groups.push_back({{1, 3, 5, 7}, 1e6});
  const auto t = topology_finder(8, 4, traffic);
  expect_valid(t, traffic, "leftover");
  std::map<int, int> rings;  // group -> degree
  for (const auto& g : t.allreduce) rings[g.group] = g.degree;
  EXPECT_EQ(rings[4], 3);
  EXPECT_EQ(rings[5], 3);
  for (int p = 0; p < 4; ++p) EXPECT_EQ(rings[p], 1) << "pair " << p;
  std::vector<int> out(8, 0);
  for (const auto& [u, v] : t.edges) ++out[static_cast<std::size_t>(u)];
  for (int s = 0; s < 8; ++s) EXPECT_EQ(out[static_cast<std::size_t>(s)], 4) << "server " << s;
}

TEST(TopologyFinder, DisjointGroupsGetAConnectivityRing) {
  // Two AllReduce groups that share no server: their rings alone would leave two islands, so one
  // degree goes to a ring of all 8 servers first (docs/topoopt.md). The other degree: each group
  // competes only with groups on its own servers, itself here, so each gets ceil(1 x 1) = 1.
  Traffic traffic;
  traffic.servers = 8;
  traffic.allreduce_groups.push_back({{0, 1, 2, 3}, 1000});
  traffic.allreduce_groups.push_back({{4, 5, 6, 7}, 1000});
  const auto t = topology_finder(8, 2, traffic);
  expect_valid(t, traffic, "disjoint");
  ASSERT_EQ(t.allreduce.size(), 3u);
  EXPECT_EQ(t.allreduce[0].group, -1);
  EXPECT_EQ(t.allreduce[0].servers.size(), 8u);
  EXPECT_EQ(t.allreduce[1].group, 0);
  EXPECT_EQ(t.allreduce[1].degree, 1);
  EXPECT_EQ(t.allreduce[2].group, 1);
  EXPECT_EQ(t.allreduce[2].degree, 1);
  EXPECT_EQ(t.edges.size(), 8u + 4u + 4u);
}

TEST(TopologyFinder, OverlappingGroupsShareEachServersDegreeByLoad) {
  // Groups A = 0..7 (300 B; each member sends 2 x 7/8 x 300 = 525 B in a ring all-reduce) and
  // B = 0..3 (100 B; 2 x 3/4 x 100 = 150 B). d = 4, no MP: d_AllReduce = 4. Servers 0..3 carry
  // 675 B, servers 4..7 525 B. A first (larger load): floor(4 x 525 / 675 = 3.11) = 3; B:
  // floor(4 x 150 / 675 = 0.89) = 0. Leftover, largest load per extra ring first: B 150 / 1 >
  // A 525 / 4 = 131: B's members have one interface left, so B gets 1 ring; A's members 0..3 have
  // none left, so A stays at 3 and servers 4..7 keep one interface unused (a ring needs every
  // member). The paper's rule (share of the wire bytes, rounded up) would give A all 4 and B none.
  Traffic traffic;
  traffic.servers = 8;
  traffic.allreduce_groups.push_back({{0, 1, 2, 3}, 100});
  traffic.allreduce_groups.push_back({{0, 1, 2, 3, 4, 5, 6, 7}, 300});
  const auto t = topology_finder(8, 4, traffic);
  expect_valid(t, traffic, "nested");
  ASSERT_EQ(t.allreduce.size(), 2u);
  EXPECT_EQ(t.allreduce[0].group, 1);
  EXPECT_EQ(t.allreduce[0].degree, 3);
  EXPECT_EQ(t.allreduce[1].group, 0);
  EXPECT_EQ(t.allreduce[1].degree, 1);
  EXPECT_EQ(t.edges.size(), 3u * 8u + 4u);
}

TEST(TopologyFinder, DegreeAndConnectivityOnRandomInputs) {
  std::mt19937 rng(20261124);
  for (int trial = 0; trial < 150; ++trial) {
    Traffic traffic;
    traffic.servers = 2 + static_cast<int>(rng() % 30);
    const int d = 1 + static_cast<int>(rng() % 5);
    const int groups = static_cast<int>(rng() % 4);
    for (int g = 0; g < groups; ++g) {
      std::vector<int> all(static_cast<std::size_t>(traffic.servers));
      std::iota(all.begin(), all.end(), 0);
      std::shuffle(all.begin(), all.end(), rng);
      all.resize(2 + rng() % static_cast<unsigned>(traffic.servers - 1));
      traffic.allreduce_groups.push_back({all, static_cast<double>(rng() % 1000000)});
    }
    const int transfers = static_cast<int>(rng() % 40);
    for (int m = 0; m < transfers; ++m) {
      const int s = static_cast<int>(rng() % static_cast<unsigned>(traffic.servers));
      const int e = (s + 1 + static_cast<int>(rng() % static_cast<unsigned>(traffic.servers - 1))) % traffic.servers;
      traffic.mp.push_back({s, e, static_cast<double>(rng() % 100000)});
    }
    const auto t = topology_finder(traffic.servers, d, traffic, {trial % 2 == 1});
    expect_valid(t, traffic, "trial " + std::to_string(trial));
    EXPECT_EQ(t.degree_allreduce + t.degree_mp, d);
    EXPECT_GE(t.degree_allreduce, 1);
  }
}

TEST(TopologyFinder, TransfersOfAPairAddUpInAnyOrderAndRoutesAreOptional) {
  // Transfers listed out of order, a pair several times, some of 0 bytes: each pair's route
  // carries its bytes summed in file order (a map summing them here is the reference), and
  // without step 4 the links, rings and matchings are the same.
  std::mt19937 rng(20261130);
  for (int trial = 0; trial < 40; ++trial) {
    Traffic traffic;
    traffic.servers = 4 + static_cast<int>(rng() % 12);
    std::vector<int> all(static_cast<std::size_t>(traffic.servers));
    std::iota(all.begin(), all.end(), 0);
    traffic.allreduce_groups.push_back({all, 1000.0 + static_cast<double>(rng() % 1000)});
    traffic.allreduce_groups.push_back({{0, 1, 2, 3}, static_cast<double>(rng() % 1000)});
    for (int m = 0; m < 60; ++m) {
      const int s = static_cast<int>(rng() % 4), e = (s + 1 + static_cast<int>(rng() % 3)) % 4;
      traffic.mp.push_back({s, e, rng() % 5 == 0 ? 0.0 : 0.1 * static_cast<double>(1 + rng() % 997)});
    }
    std::map<Pair, double> demand;
    for (const auto& m : traffic.mp)
      if (m.bytes > 0) demand[{m.src, m.dst}] += m.bytes;
    const int d = 2 + static_cast<int>(rng() % 3);
    const auto t = topology_finder(traffic.servers, d, traffic);
    ASSERT_EQ(t.mp_routes.size(), demand.size());
    auto expected = demand.begin();
    for (const auto& r : t.mp_routes) {
      EXPECT_EQ(std::pair(r.src, r.dst), expected->first);
      EXPECT_EQ(r.bytes, expected->second) << "trial " << trial;  // the same sums, exactly
      ++expected;
    }
    FinderOptions fabric_only;
    fabric_only.route_mp = false;
    const auto f = topology_finder(traffic.servers, d, traffic, fabric_only);
    EXPECT_TRUE(f.mp_routes.empty());
    EXPECT_EQ(f.mp_byte_hops, 0.0);
    EXPECT_EQ(f.edges, t.edges);
    EXPECT_EQ(f.matchings, t.matchings);
    EXPECT_EQ(f.mp_bytes, t.mp_bytes);
    ASSERT_EQ(f.allreduce.size(), t.allreduce.size());
    for (std::size_t g = 0; g < f.allreduce.size(); ++g) {
      EXPECT_EQ(f.allreduce[g].generators, t.allreduce[g].generators);
      EXPECT_EQ(f.allreduce[g].mp_satisfied_bytes, t.allreduce[g].mp_satisfied_bytes);
    }
  }
}

TEST(TopologyFinder, NoDegreeOneServerOrTrafficOfAnotherSizeAreInputErrors) {
  const auto traffic = dlrm_example();
  EXPECT_THROW(topology_finder(16, 0, traffic), InputError);
  EXPECT_THROW(topology_finder(1, 2, traffic), InputError);
  EXPECT_THROW(topology_finder(12, 2, traffic), InputError);  // the traffic is for 16 servers
}

void expect_error(const std::string& text, const std::vector<std::string>& parts) {
  try {
    parse_traffic_json(text, 16, "t.json");
    ADD_FAILURE() << "accepted: " << text;
  } catch (const InputError& e) {
    for (const auto& p : parts)
      EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what() << " lacks " << p;
  }
}

TEST(TrafficFile, ParsesAndNamesTheBadField) {
  const auto t = parse_traffic_json(
      R"({"allreduce_groups": [{"servers": [3, 1, 2], "bytes": 4e9}], "mp": [[0, 15, 32e6]]})", 16, "t.json");
  ASSERT_EQ(t.allreduce_groups.size(), 1u);
  EXPECT_EQ(t.allreduce_groups[0].servers, (std::vector<int>{3, 1, 2}));
  EXPECT_DOUBLE_EQ(allreduce_wire_bytes(t.allreduce_groups[0]), 2 * 2 * 4e9);  // 2 (n - 1) x bytes
  ASSERT_EQ(t.mp.size(), 1u);
  EXPECT_EQ(t.mp[0].dst, 15);
  expect_error("{", {"t.json", "invalid JSON"});
  expect_error("[]", {"t.json", "JSON object"});
  expect_error(R"({"groups": []})", {"unknown field 'groups'"});
  expect_error(R"({"mp": [[0, 16, 5]]})", {"t.json: mp[0][1]", "server 16 is outside 0..15"});
  expect_error(R"({"mp": [[0, 1]]})", {"mp[0]", "[src, dst, bytes]"});
  expect_error(R"({"mp": [[2, 2, 5]]})", {"mp[0]", "both server 2"});
  expect_error(R"({"mp": [[0, 1, -5]]})", {"mp[0][2]", ">= 0"});
  expect_error(R"({"mp": [[0.5, 1, 5]]})", {"mp[0][0]", "integer"});
  expect_error(R"({"allreduce_groups": [{"servers": [1, 2, 1], "bytes": 1}]})",
               {"allreduce_groups[0].servers[2]", "listed twice"});
  expect_error(R"({"allreduce_groups": [{"servers": [1], "bytes": 1}]})",
               {"allreduce_groups[0].servers", "at least 2"});
  expect_error(R"({"allreduce_groups": [{"servers": [1, 2]}]})", {"allreduce_groups[0]", "'bytes'"});
  expect_error(R"({"allreduce_groups": [{"servers": [1, 2], "bytes": 1, "order": 3}]})", {"unknown field 'order'"});
}

}  // namespace
}  // namespace chorus::topoopt
