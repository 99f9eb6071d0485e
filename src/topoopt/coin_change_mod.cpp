#include "topoopt/coin_change_mod.h"

#include <algorithm>
#include <fmt/format.h>

#include "core/error.h"

namespace chorus::topoopt {

namespace {

// Round h extends every distance reached in h - 1 hops by one coin (Algorithm 3's relaxation,
// done frontier by frontier); the smallest coin wins ties, so routes are deterministic.
// last[t]: the last coin of the best route to t. `coins` ascending.
void relax(int n, const std::vector<int>& coins, std::vector<int>& hops, std::vector<int>* last) {
  hops.assign(static_cast<std::size_t>(n), -1);
  if (last) last->assign(static_cast<std::size_t>(n), 0);
  hops[0] = 0;
  // Each coin mod n, so that a step is an add and a compare (TopPermutations relaxes thousands
  // of coin sets): t + c mod n for 0 <= t < n.
  std::vector<int> step(coins.size());
  for (std::size_t i = 0; i < coins.size(); ++i) step[i] = (coins[i] % n + n) % n;
  std::vector<int> frontier = {0}, next;
  for (int h = 1; !frontier.empty(); ++h) {
    next.clear();
    for (int t : frontier)
      for (std::size_t i = 0; i < coins.size(); ++i) {
        const int c = coins[i];
        const int u = t + step[i] >= n ? t + step[i] - n : t + step[i];
        if (hops[static_cast<std::size_t>(u)] >= 0) continue;
        hops[static_cast<std::size_t>(u)] = h;
        if (last) (*last)[static_cast<std::size_t>(u)] = c;
        next.push_back(u);
      }
    if (last) std::sort(next.begin(), next.end());  // the hops alone do not depend on the order
    std::swap(frontier, next);
  }
}

}  // namespace

CoinRoutes coin_change_mod(int n, std::vector<int> coins) {
  if (n < 1) throw InputError("coins", fmt::format("a group has at least 1 server, got {}", n));
  std::sort(coins.begin(), coins.end());
  coins.erase(std::unique(coins.begin(), coins.end()), coins.end());
  for (int c : coins)
    if (c < 1 || c >= n)
      throw InputError("coins", fmt::format("coin {} is not a ring generator of {} servers (1..{})", c, n, n - 1));
  CoinRoutes r;
  r.n = n;
  r.coins = coins;
  std::vector<int> last;
  relax(n, coins, r.hops, &last);
  r.route.assign(static_cast<std::size_t>(n), {});
  for (int t = 1; t < n; ++t) {
    if (r.hops[static_cast<std::size_t>(t)] < 0) continue;
    auto& seq = r.route[static_cast<std::size_t>(t)];
    for (int u = t; u != 0; u = ((u - last[static_cast<std::size_t>(u)]) % n + n) % n)
      seq.push_back(last[static_cast<std::size_t>(u)]);
    std::reverse(seq.begin(), seq.end());
  }
  return r;
}

std::vector<int> coin_change_hops(int n, const std::vector<int>& coins) {
  auto sorted = coins;
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  std::vector<int> hops;
  relax(n, sorted, hops, nullptr);
  return hops;
}

std::vector<int> CoinRoutes::path(int from, int to) const {
  if (from < 0 || from >= n || to < 0 || to >= n)
    throw InputError("route", fmt::format("servers {} -> {} are not in 0..{}", from, to, n - 1));
  const int t = ((to - from) % n + n) % n;
  if (hops[static_cast<std::size_t>(t)] < 0)
    throw InputError("route", fmt::format("no route from {} to {}: the coins {} do not reach distance {}", from, to,
                                          fmt::join(coins, ","), t));
  std::vector<int> out;
  int at = from;
  for (int c : route[static_cast<std::size_t>(t)]) out.push_back(at = (at + c) % n);
  return out;
}

}  // namespace chorus::topoopt
