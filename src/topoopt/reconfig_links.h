#pragma once
// TopoOpt-reconfig's link allocation (Appendix D, Algorithm 5): given the unsatisfied demand
// between servers, give each server's d transmit and d receive interfaces to the pairs with the
// most demand, one link at a time, halving a pair's demand with every link it gets (the discount
// function of Eq. 2: the l-th parallel link of a pair is worth T / 2^(l-1)). Run every
// reconfiguration period by the reconfigurable fabric (TopoOpt-reconfig re-plans every 50 ms).
#include <utility>
#include <vector>

namespace chorus::topoopt {

struct Demand {
  int src = 0;
  int dst = 0;
  double bytes = 0;
};

// Directed links (src, dst), a pair listed once per parallel link, in the order allocated. Ties:
// the smaller (src, dst). Pairs without demand get no link; interfaces may stay free. Servers are
// 0..servers-1; InputError for d < 1 or a pair outside them or from a server to itself.
// `discount` false: every parallel link of a pair is worth its whole demand (Discount = 1), the
// stand-in for SiP-ML's wavelength ILP of Appendix E.
std::vector<std::pair<int, int>> reconfig_links(int servers, int degree, const std::vector<Demand>& demand,
                                                bool discount = true);

// Eq. 1: sum over pairs of T(i, j) x Discount(L(i, j)), Discount(l) = sum_{x=1..l} 2^-(x-1).
double reconfig_utility(const std::vector<std::pair<int, int>>& links, const std::vector<Demand>& demand);

}  // namespace chorus::topoopt
