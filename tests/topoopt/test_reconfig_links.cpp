// TopoOpt-reconfig's link allocation (Algorithm 5) on hand-worked demand, and its invariants on
// random demand.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "core/error.h"
#include "topoopt/reconfig_links.h"

namespace chorus::topoopt {
namespace {

using Pair = std::pair<int, int>;

TEST(ReconfigLinks, Algorithm5ByHand) {
  // d = 1: (0,1) 8 first; server 0 has sent its link and server 1 received its one, so (0,2)
  // and (2,1) drop out; then (1,2) 4, then (2,0) 2: a ring.
  EXPECT_EQ(reconfig_links(3, 1, {{0, 1, 8}, {1, 2, 4}, {2, 0, 2}, {0, 2, 1}, {2, 1, 9e-9}}),
            (std::vector<Pair>{{0, 1}, {1, 2}, {2, 0}}));
  // d = 3 between two servers: 8 (0,1) -> 4 -> 3 (1,0) -> 2 (0,1), now 0 has sent 3 -> 1.5 (1,0)
  // -> 0.75 (1,0): three links each way, the heavier direction first.
  EXPECT_EQ(reconfig_links(2, 3, {{0, 1, 8}, {1, 0, 3}}),
            (std::vector<Pair>{{0, 1}, {0, 1}, {1, 0}, {0, 1}, {1, 0}, {1, 0}}));
  // Pairs without demand get nothing; ties go to the smaller pair.
  EXPECT_EQ(reconfig_links(4, 1, {{2, 3, 5}, {0, 1, 5}, {1, 2, 0}}), (std::vector<Pair>{{0, 1}, {2, 3}}));
  EXPECT_THROW(reconfig_links(3, 0, {}), InputError);
  EXPECT_THROW(reconfig_links(3, 1, {{1, 1, 5}}), InputError);
  EXPECT_THROW(reconfig_links(3, 1, {{0, 3, 5}}), InputError);
}

TEST(ReconfigLinks, WithoutDiscountTheHeaviestPairTakesEveryLink) {
  // d = 2, demand 0 -> 1: 10, 0 -> 2: 6. Discounted (TopoOpt): (0,1) at 10, then (0,2) at 6 beats
  // (0,1)'s second link at 5. Discount = 1 (SiP-ML, Appendix E): (0,1) is still worth 10, twice.
  const std::vector<Demand> demand = {{0, 1, 10}, {0, 2, 6}};
  EXPECT_EQ(reconfig_links(3, 2, demand), (std::vector<Pair>{{0, 1}, {0, 2}}));
  EXPECT_EQ(reconfig_links(3, 2, demand, false), (std::vector<Pair>{{0, 1}, {0, 1}}));
}

TEST(ReconfigLinks, DegreeBoundAndUtilityOfEquation1) {
  // Utility: T x (1 + 1/2 + ... ) per pair: (0,1) 8 with 3 links -> 8 x 1.75 = 14; (1,0) 3 with 3
  // links -> 5.25.
  EXPECT_DOUBLE_EQ(reconfig_utility({{0, 1}, {0, 1}, {1, 0}, {0, 1}, {1, 0}, {1, 0}}, {{0, 1, 8}, {1, 0, 3}}), 19.25);
  std::mt19937 rng(20261125);
  for (int trial = 0; trial < 100; ++trial) {
    const int n = 2 + static_cast<int>(rng() % 12), d = 1 + static_cast<int>(rng() % 4);
    std::vector<Demand> demand;
    for (int k = 0; k < 3 * n; ++k) {
      const int s = static_cast<int>(rng() % static_cast<unsigned>(n));
      demand.push_back(
          {s, (s + 1 + static_cast<int>(rng() % static_cast<unsigned>(n - 1))) % n, static_cast<double>(rng() % 1000)});
    }
    const auto links = reconfig_links(n, d, demand);
    std::vector<int> out(static_cast<std::size_t>(n)), in(static_cast<std::size_t>(n));
    for (const auto& [u, v] : links) {
      EXPECT_LE(++out[static_cast<std::size_t>(u)], d);
      EXPECT_LE(++in[static_cast<std::size_t>(v)], d);
    }
    // Greedy never leaves a pair with demand and free interfaces at both ends unlinked.
    for (const auto& m : demand)
      if (m.bytes > 0) {
        const bool linked = std::count(links.begin(), links.end(), Pair{m.src, m.dst}) > 0;
        EXPECT_TRUE(linked || out[static_cast<std::size_t>(m.src)] == d || in[static_cast<std::size_t>(m.dst)] == d);
      }
  }
}

}  // namespace
}  // namespace chorus::topoopt
