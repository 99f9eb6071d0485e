// TopoOpt's building blocks against independent references: Euler's totient from the prime
// factorisation, Hamiltonian rings walked step by step, and coin-change routes against a
// breadth-first search over the actual ring edges.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <queue>
#include <random>
#include <set>

#include "core/error.h"
#include "topoopt/coin_change_mod.h"
#include "topoopt/totient_perms.h"

namespace chorus::topoopt {
namespace {

// phi(n) = n * prod over primes q | n of (1 - 1/q).
int euler_phi(int n) {
  int phi = n, m = n;
  for (int q = 2; q * q <= m; ++q)
    if (m % q == 0) {
      while (m % q == 0) m /= q;
      phi -= phi / q;
    }
  if (m > 1) phi -= phi / m;
  return phi;
}

TEST(TotientPerms, TwelveServersHaveTheRingsOfThePaper) {
  // Sec. 4.1: "for n = 12 servers, our ring generation rule with p = 1, 5, 7, 11 will lead into
  // 4 distinct AllReduce permutations".
  EXPECT_EQ(totient_generators(12), (std::vector<int>{1, 5, 7, 11}));
  EXPECT_TRUE(totient_generators(1).empty());
  EXPECT_EQ(totient_generators(2), (std::vector<int>{1}));
  EXPECT_EQ(totient_generators(30, true), (std::vector<int>{1, 7, 11, 13, 17, 19, 23, 29}));
  EXPECT_THROW(totient_generators(0), InputError);
}

TEST(TotientPerms, CountIsEulersTotient) {
  for (int n = 2; n <= 300; ++n) EXPECT_EQ(static_cast<int>(totient_generators(n).size()), euler_phi(n)) << n;
}

TEST(TotientPerms, EveryGeneratorGivesAHamiltonianRing) {
  for (int n = 2; n <= 60; ++n) {
    std::vector<int> members;
    for (int i = 0; i < n; ++i) members.push_back(100 + 3 * i);  // any labels
    std::set<std::vector<std::pair<int, int>>> distinct;
    for (int p : totient_generators(n)) {
      const auto edges = ring_edges(members, p);
      ASSERT_EQ(static_cast<int>(edges.size()), n);
      // Follow the successor function from members[0]: n steps visit n distinct servers and return.
      std::map<int, int> next;
      for (const auto& [a, b] : edges) EXPECT_TRUE(next.emplace(a, b).second) << "two successors of " << a;
      std::set<int> seen;
      int at = members[0];
      for (int s = 0; s < n; ++s) {
        EXPECT_TRUE(seen.insert(at).second) << "n " << n << " p " << p << " revisits " << at;
        at = next.at(at);
      }
      EXPECT_EQ(at, members[0]);
      EXPECT_EQ(ring_order(members, p).size(), static_cast<std::size_t>(n));
      distinct.insert(edges);
    }
    EXPECT_EQ(distinct.size(), totient_generators(n).size()) << "rings of different p must differ";
  }
  EXPECT_THROW(ring_edges({0, 1, 2, 3}, 2), InputError);  // gcd(2, 4) = 2: two 2-cycles, not a ring
}

// Fewest hops from `src` to every server over edges i -> (i + c) mod n.
std::vector<int> bfs(int n, const std::vector<int>& coins, int src) {
  std::vector<int> dist(static_cast<std::size_t>(n), -1);
  std::queue<int> q;
  dist[static_cast<std::size_t>(src)] = 0;
  q.push(src);
  while (!q.empty()) {
    const int u = q.front();
    q.pop();
    for (int c : coins) {
      const int v = (u + c) % n;
      if (dist[static_cast<std::size_t>(v)] < 0) {
        dist[static_cast<std::size_t>(v)] = dist[static_cast<std::size_t>(u)] + 1;
        q.push(v);
      }
    }
  }
  return dist;
}

TEST(CoinChangeMod, RoutesAreShortestAndReachTheirTargets) {
  std::mt19937 rng(20261122);
  for (int trial = 0; trial < 300; ++trial) {
    const int n = 2 + static_cast<int>(rng() % 39);
    std::vector<int> coins;
    const int m = 1 + static_cast<int>(rng() % 4);
    for (int i = 0; i < m; ++i) coins.push_back(1 + static_cast<int>(rng() % static_cast<unsigned>(n - 1)));
    const auto r = coin_change_mod(n, coins);
    for (int src : {0, n / 2, n - 1}) {
      const auto dist = bfs(n, coins, src);
      for (int dst = 0; dst < n; ++dst) {
        const int t = ((dst - src) % n + n) % n;
        ASSERT_EQ(r.hops[static_cast<std::size_t>(t)], dist[static_cast<std::size_t>(dst)])
            << "n " << n << " " << src << "->" << dst;
        if (dist[static_cast<std::size_t>(dst)] <= 0) continue;
        const auto path = r.path(src, dst);
        ASSERT_EQ(static_cast<int>(path.size()), dist[static_cast<std::size_t>(dst)]);
        EXPECT_EQ(path.back(), dst);
        int at = src;
        for (int v : path) {  // every hop is a ring edge
          const int step = ((v - at) % n + n) % n;
          EXPECT_NE(std::find(coins.begin(), coins.end(), step), coins.end()) << at << "->" << v;
          at = v;
        }
      }
    }
  }
}

TEST(CoinChangeMod, TwelveServersWithRingsOneAndFive) {
  // By hand: distance 6 = 1 + 5 (2 hops), 10 = 5 + 5, 9 = 4 x 1 + 5 (5 hops; 5 + 5 + 5 + 5 + 1
  // is 5 hops too, the smaller coin is taken first), 11 = 1 + 5 + 5.
  const auto r = coin_change_mod(12, {5, 1});
  EXPECT_EQ(r.coins, (std::vector<int>{1, 5}));
  EXPECT_EQ(r.hops[6], 2);
  EXPECT_EQ(r.hops[10], 2);
  EXPECT_EQ(r.hops[9], 5);
  EXPECT_EQ(r.hops[11], 3);
  EXPECT_EQ(r.path(3, 1), (std::vector<int>{8, 1}));  // distance (1 - 3) mod 12 = 10 = 5 + 5
  EXPECT_THROW(coin_change_mod(12, {12}), InputError);
  EXPECT_THROW(coin_change_mod(12, {0}), InputError);
  const auto two = coin_change_mod(12, {2});  // not a generator: odd distances unreachable
  EXPECT_EQ(two.hops[3], -1);
  EXPECT_THROW(two.path(0, 3), InputError);
}

}  // namespace
}  // namespace chorus::topoopt
