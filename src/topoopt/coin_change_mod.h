#pragma once
// CoinChangeMod (TopoOpt, Sec. 4.1 "Coin-change routing" and Appendix C, Algorithm 3): routes
// between the servers of a group whose AllReduce sub-topology is the union of regular rings
// with generators ("coins") c_1..c_m. Server i reaches server j by a sequence of ring hops
// whose generators sum to (j - i) mod n, so the fewest hops for every distance t in [1, n) is
// a coin-change problem in modulo-n arithmetic; the same route serves every pair at that
// distance. Solved by relaxing all distances by one more coin per round until nothing changes
// (Algorithm 3), which is a breadth-first search over Z_n: the hop counts are the shortest.
#include <vector>

namespace chorus::topoopt {

struct CoinRoutes {
  int n = 0;
  std::vector<int> coins;               // the generators, ascending, distinct
  std::vector<int> hops;                // hops[t]: fewest hops for distance t (hops[0] = 0); -1: unreachable
  std::vector<std::vector<int>> route;  // route[t]: the coins in the order they are taken
  // The servers a transfer from server `from` to server `to` visits after `from`, ending at `to`
  // (servers labelled 0..n-1 as in the ring rules).
  std::vector<int> path(int from, int to) const;
};

// Throws InputError for n < 1 or a coin outside [1, n).
CoinRoutes coin_change_mod(int n, std::vector<int> coins);

// Only CoinRoutes::hops (no routes), for scoring many coin sets; coins valid, in any order.
std::vector<int> coin_change_hops(int n, const std::vector<int>& coins);

}  // namespace chorus::topoopt
